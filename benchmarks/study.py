"""The whole study (notebooks 01-03 through the pipeline, all 1,032 CFA-Easy questions) against loopback
OpenAI-compatible servers answering in a fixed 200 ms, in three settings:

1. no rate limit, max_concurrency 64;
2. a server answering 429 with Retry-After: 1 whenever more than 20 requests are in flight;
3. the Batch API (CFA_BATCH=1) against the fake Files/Batches server.

One line per setting: requests, end-to-end wall time, time in request phases, their ideal time and the
ratio. The ideal of a request phase (one complete_many call that sent n requests, read from
CFA_ENGINE_LOG) is ceil(n / c) x 200 ms with c = 64 (setting 1) or the server's 20 (setting 2).
Goals: >= 80 % of ideal in setting 1, >= 75 % of capacity in setting 2, 0 failed requests, setting 1 end
to end under 60 s. The last line is `study: <setting 1>% of ideal, <setting 2>% of capacity`.

    PYTHONPATH=. .venv/bin/python benchmarks/study.py [--limit none] [--settings 1,2,3]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import loopback  # benchmarks/loopback.py: run as a script, so its folder is on sys.path

ROOT = Path(__file__).resolve().parents[1]
DELAY_S = 0.2
CEILING = 64
SERVER_LIMIT = 20
MODEL = "openai/fake-model"  # its judge (gpt-4o-mini) and generator (gpt-4o) are served by the same server


def start_server(limit_in_flight: int | None) -> tuple[subprocess.Popen, str]:
    limit = ["--limit-in-flight", str(limit_in_flight)] if limit_in_flight is not None else []
    return loopback.start_server("tests.servers.fake_batch", "--delay", str(DELAY_S), "--batch-concurrency",
                                 str(CEILING), "--lifetime", "3600", *limit)


def run_study(url: str, work: Path, limit: str, extra_env: dict[str, str]) -> float:
    """The pipeline's notebooks 01-03 (papermill, default parameters, max_concurrency 64); seconds taken."""
    env = {k: v for k, v in os.environ.items() if "KEY" not in k.upper() and "TOKEN" not in k.upper()}
    env.update(OPENAI_BASE_URL=f"{url}/v1", OPENAI_API_KEY="sk-benchmark", PYTHONPATH=str(ROOT),
               CFA_CACHE_DIR=str(work / "cache"), CFA_RESULTS_DIR=str(work / "results"),
               CFA_ENGINE_LOG=str(work / "engine.jsonl"), PYTHONUNBUFFERED="1", **extra_env)
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from cfa_lib.experiments.registry import FIGURES_NOTEBOOK\n"
        "from cfa_lib.publishing import pipeline\n"
        f"jobs = pipeline.plan([{MODEL!r}], 'easy', pipeline.parse_limit({limit!r}), None, {CEILING}, "
        f"Path({str(work)!r}), Path({str(work / 'results')!r}), include_reference=False)\n"
        "pipeline.run([j for j in jobs if j.notebook.name != FIGURES_NOTEBOOK])\n"
    )
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.monotonic() - start
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"the study failed (work folder {work})")
    return elapsed


def phases(work: Path) -> list[dict[str, Any]]:
    log = work / "engine.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return [p for p in lines if p["sent"]]


def failed_requests(work: Path) -> int:
    """Failed completions recorded in the results files' usage blocks."""
    total = 0
    for path in (work / "results").glob("*/*/results.json"):
        stack: list[Any] = [json.loads(path.read_text()).get("summary", {})]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                if "failed" in item and "n_calls" in item:
                    total += int(item["failed"] or 0)
                else:
                    stack.extend(item.values())
    return total


def setting(n: int, label: str, limit: str, *, limit_in_flight: int | None = None, batch: bool = False
            ) -> dict[str, Any]:
    load_before = os.getloadavg()[0]
    proc, url = start_server(limit_in_flight)
    work = Path(tempfile.mkdtemp(prefix=f"cfa-study-{n}-"))
    try:
        extra = {"CFA_BATCH": "1", "CFA_BATCH_POLL_S": "0.5"} if batch else {}
        wall = run_study(url, work, limit, extra)
        stats = httpx.get(f"{url}/v1/stats", timeout=30).json()
    finally:
        proc.terminate()
        proc.wait(10)
    ran = phases(work)
    capacity = limit_in_flight or CEILING
    ideal = sum(math.ceil(p["sent"] / capacity) * DELAY_S for p in ran)
    in_phases = sum(p["wall_s"] for p in ran)
    result = {
        "setting": n, "label": label, "requests": stats["paid"], "wall_s": wall, "phase_s": in_phases,
        "ideal_s": ideal, "ratio": ideal / in_phases if in_phases else 0.0, "rate_limited": stats["rate_limited"],
        "paid_twice": stats["paid_twice"], "batches": stats["batches_created"], "failed": failed_requests(work),
        "phases": len(ran), "work": str(work), "load": load_before,
    }
    if batch and not result["batches"]:
        raise SystemExit(f"{n}. {label}: the run created no batch ({result['requests']} requests went live), so "
                         "there is no Batch API figure to print; check that CFA_BATCH reaches the notebooks")
    if batch:
        line = (f"{n}. {label:<34} {result['requests']:>5} requests in {result['batches']} batches, "
                f"end to end {wall:6.1f} s, paid twice {result['paid_twice']}, failed {result['failed']}")
    else:
        line = (f"{n}. {label:<34} {result['requests']:>5} requests, end to end {wall:6.1f} s, "
                f"request phases {in_phases:6.1f} s vs ideal {ideal:6.1f} s = {result['ratio']:6.1%}, "
                f"429s {result['rate_limited']}, failed {result['failed']}, paid twice {result['paid_twice']}")
    line += f" [load {load_before:.1f} on {os.cpu_count()} cores]"
    print(line, flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", default="none", help="questions per notebook (none: all 1,032)")
    parser.add_argument("--settings", default="1,2,3")
    args = parser.parse_args()
    wanted = {int(s) for s in args.settings.split(",")}
    results: dict[int, dict[str, Any]] = {}
    if 1 in wanted:
        results[1] = setting(1, "no rate limit, max_concurrency 64", args.limit)
    if 2 in wanted:
        results[2] = setting(2, f"429 above {SERVER_LIMIT} in flight", args.limit, limit_in_flight=SERVER_LIMIT)
    if 3 in wanted:
        results[3] = setting(3, "Batch API", args.limit, batch=True)
    one = f"{results[1]['ratio']:.0%}" if 1 in results else "n/a"
    two = f"{results[2]['ratio']:.0%}" if 2 in results else "n/a"
    print(f"study: {one} of ideal, {two} of capacity")


if __name__ == "__main__":
    main()
