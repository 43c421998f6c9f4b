"""Start one of the test suite's fake servers on a free loopback port for a benchmark, and wait for it."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(module: str, *args: str) -> tuple[subprocess.Popen, str]:
    """`python -m <module> --port <free port> <args>`; returns the process and its URL once it answers."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", module, "--port", str(port), *args], cwd=ROOT,
                            stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(f"{url}/v1/models", timeout=1).raise_for_status()
            return proc, url
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                proc.kill()
                raise SystemExit(f"{module} did not start") from None
            time.sleep(0.1)
