"""Loopback HTTP servers for tests and benchmarks (127.0.0.1 only, stopped by their owners)."""
