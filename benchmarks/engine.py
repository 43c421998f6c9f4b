"""Throughput of the model engine against a loopback OpenAI-compatible server with a fixed delay.

Sends N requests sequentially, N with concurrency 32, then the concurrent batch again from a warm cache,
and prints requests/second and the ratio to the ideal (concurrency / delay). Goals: concurrency 32 at
least 80 % of ideal; the warm-cache rerun of 1,000 requests under 2 s.

    .venv/bin/python benchmarks/engine.py [--n 1000] [--delay 0.2] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

import loopback  # benchmarks/loopback.py: run as a script, so its folder is on sys.path

ROOT = Path(__file__).resolve().parents[1]


def start_server(delay_s: float) -> tuple[subprocess.Popen, str]:
    return loopback.start_server("tests.servers.fake_openai", "--delay", str(delay_s), "--lifetime", "1800")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument(
        "--sequential-n", type=int, default=None, help="requests in the sequential run (default n)"
    )
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    os.environ["CFA_CACHE_DIR"] = tempfile.mkdtemp(prefix="cfa-bench-")
    from cfa_lib.models import Request, get_client

    proc, url = start_server(args.delay)
    try:

        def batch(tag: str, n: int) -> list[Request]:
            return [Request([{"role": "user", "content": f"{tag} question {i}"}]) for i in range(n)]

        def timed(label: str, requests: list[Request], concurrency: int) -> float:
            client = get_client("openai/fake-model", base_url=f"{url}/v1")
            start = time.perf_counter()
            results = client.complete_many(requests, max_concurrency=concurrency, progress=False)
            elapsed = time.perf_counter() - start
            assert all(c.ok for c in results), "a request failed"
            rate = len(requests) / elapsed
            ideal = concurrency / args.delay
            cached = sum(c.cached for c in results)
            versus = f"{rate / ideal:6.1%} of ideal {ideal:.0f} req/s" if not cached else "served from cache"
            print(
                f"{label:<26} {len(requests):>5} req in {elapsed:7.2f} s = {rate:8.1f} req/s  ({versus})",
                flush=True,
            )
            return elapsed

        timed("sequential", batch("seq", args.sequential_n or args.n), 1)
        concurrent = batch("conc", args.n)
        timed(f"concurrency {args.concurrency}", concurrent, args.concurrency)
        warm = timed("warm cache", concurrent, args.concurrency)
        print(f"warm-cache rerun of {args.n} requests: {warm:.2f} s (goal < 2 s)")
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
