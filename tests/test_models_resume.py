"""kill -9 in the middle of a run, then rerun: every request is answered exactly once by the server
overall, the cache is intact, and the results equal those of an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.servers under any pytest import mode
from cfa_lib.models import CompletionCache  # noqa: E402
from tests.reliability_plugin import wait_until  # noqa: E402
from tests.servers.fake_openai import FaultConfig, expected_answer, start_fake_openai  # noqa: E402
from tests.servers.run_batch import batch_requests  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
N, DONE_BEFORE_KILL, CONCURRENCY = 40, 15, 4


def run_batch(url: str, cache_dir: Path, out: Path) -> subprocess.Popen:
    env = {**os.environ, "CFA_CACHE_DIR": str(cache_dir)}
    command = [
        sys.executable,
        "-m",
        "tests.servers.run_batch",
        "--base-url",
        f"{url}/v1",
        "--n",
        str(N),
        "--concurrency",
        str(CONCURRENCY),
        "--out",
        str(out),
    ]
    return subprocess.Popen(command, cwd=ROOT, env=env)


def comparable(rows: list[dict]) -> list[dict]:
    volatile = {"latency_s", "cached", "retries"}
    return [{k: v for k, v in row.items() if k not in volatile} for row in rows]


def test_sigkill_midway_then_rerun_answers_each_request_once(tmp_path: Path) -> None:
    server, app = start_fake_openai(FaultConfig(delay_s=0.02))
    try:
        httpx.post(f"{server.url}/control", json={"hold_after": DONE_BEFORE_KILL})  # the rest wait in flight
        cache_dir = tmp_path / "cache"
        proc = run_batch(server.url, cache_dir, tmp_path / "killed.json")
        wait_until(lambda: app.stats()["answered"] == DONE_BEFORE_KILL, "first answers")
        wait_until(
            lambda: (
                (cache_dir / "completions.sqlite").exists()
                and len(CompletionCache(cache_dir)) == DONE_BEFORE_KILL
            ),
            "answers cached",
        )
        wait_until(lambda: app.stats()["requests"] == DONE_BEFORE_KILL + CONCURRENCY, "requests in flight")
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(10) == -signal.SIGKILL
        wait_until(lambda: app.stats()["aborted"] == CONCURRENCY, "server to see the dead client")
        with sqlite3.connect(cache_dir / "completions.sqlite") as db:
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

        httpx.post(f"{server.url}/control", json={"hold_after": None})
        rerun = run_batch(server.url, cache_dir, tmp_path / "resumed.json")
        assert rerun.wait(60) == 0
        resumed = json.loads((tmp_path / "resumed.json").read_text())
        stats = app.stats()
    finally:
        server.stop()
    assert stats["answered"] == N
    assert all(p["answered"] == 1 for p in stats["prompts"].values()) and len(stats["prompts"]) == N
    assert sum(row["cached"] for row in resumed) == DONE_BEFORE_KILL

    clean_server, _ = start_fake_openai(FaultConfig(delay_s=0.0))
    try:
        clean = run_batch(clean_server.url, tmp_path / "clean_cache", tmp_path / "clean.json")
        assert clean.wait(60) == 0
    finally:
        clean_server.stop()
    uninterrupted = json.loads((tmp_path / "clean.json").read_text())
    assert comparable(resumed) == comparable(uninterrupted)
    assert [row["text"] for row in resumed] == [expected_answer(r.messages) for r in batch_requests(N)]
