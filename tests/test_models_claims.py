"""Claims in the shared cache: two runs never pay for the same request at the same time, and a claim
left by a killed run is taken over."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from cfa_lib.models.cache import CLAIM_MAX_AGE_S, HOST, CompletionCache


def holder_process() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def claim_as(cache: CompletionCache, key: str, pid: int, host: str = HOST, since: float | None = None) -> None:
    with cache._connect() as conn:
        conn.execute("INSERT OR REPLACE INTO claims (key, pid, host, since) VALUES (?, ?, ?, ?)",
                     (key, pid, host, time.time() if since is None else since))


def test_first_asker_claims_and_the_answer_ends_the_claim(tmp_path) -> None:
    cache = CompletionCache(tmp_path)
    assert cache.try_claim("k") == (True, None)
    assert cache.try_claim("k") == (True, None)  # this process's own claim never blocks it
    cache.put("k", "m", {"text": "answer", "model": "m"})
    cache.release("k")
    assert cache.try_claim("k") == (False, {"text": "answer", "model": "m"})
    assert cache.try_claim("k", use_cached=False) == (True, None)  # refresh=True asks again


def test_a_live_run_holds_its_claim_and_a_killed_one_loses_it(tmp_path) -> None:
    cache = CompletionCache(tmp_path)
    other = holder_process()
    try:
        claim_as(cache, "k", other.pid)
        assert cache.try_claim("k") == (False, None)  # the other run is asking: wait for its answer
    finally:
        other.kill()
        other.wait()
    assert cache.try_claim("k") == (True, None)  # it was killed: take over
    cache.release("k")
    assert cache._connect().execute("SELECT COUNT(*) FROM claims").fetchone()[0] == 0


def test_claims_of_another_host_expire(tmp_path) -> None:
    cache = CompletionCache(tmp_path)
    claim_as(cache, "fresh", 1, host="elsewhere")
    claim_as(cache, "old", 1, host="elsewhere", since=time.time() - CLAIM_MAX_AGE_S - 1)
    assert cache.try_claim("fresh") == (False, None)
    assert cache.try_claim("old") == (True, None)


def test_release_leaves_other_processes_claims_alone(tmp_path) -> None:
    cache = CompletionCache(tmp_path)
    claim_as(cache, "k", os.getpid() + 100000, host="elsewhere")
    cache.release("k")
    assert cache.try_claim("k") == (False, None)


def test_two_processes_running_the_same_batch_pay_for_each_request_once(tmp_path) -> None:
    """Against the loopback fake OpenAI server: both runs get every answer, the server answers each once."""
    import json

    from tests.servers.fake_openai import FaultConfig, start_fake_openai
    from tests.test_models_resume import N, run_batch

    server, app = start_fake_openai(FaultConfig(delay_s=0.1))  # slow enough for the runs to overlap
    try:
        runs = [run_batch(server.url, tmp_path / "cache", tmp_path / f"run{i}.json") for i in (1, 2)]
        assert [run.wait(120) for run in runs] == [0, 0]
        stats = app.stats()
    finally:
        server.stop()
    first, second = (json.loads((tmp_path / f"run{i}.json").read_text()) for i in (1, 2))
    assert [r["text"] for r in first] == [r["text"] for r in second] and all(r["ok"] for r in first + second)
    assert len(stats["prompts"]) == N and all(p["answered"] == 1 for p in stats["prompts"].values())
    assert stats["answered"] == N


def test_a_chunk_is_claimed_in_one_go_with_the_same_rules(tmp_path) -> None:
    """claim_many (what complete_many uses): answered keys come back, live claims of others are left alone,
    claims of dead runs are taken over, and an answer or release_many ends this process's claims."""
    cache = CompletionCache(tmp_path)
    cache.put("answered", "m", {"text": "done", "model": "m"})
    holder = holder_process()
    dead = holder_process()
    dead.kill()
    dead.wait()
    try:
        claim_as(cache, "held", holder.pid)
        claim_as(cache, "orphan", dead.pid)
        mine, answered = cache.claim_many(["answered", "held", "orphan", "free"])
        assert mine == {"orphan", "free"} and answered == {"answered": {"text": "done", "model": "m"}}
        with cache._connect() as conn:
            owners = dict(conn.execute("SELECT key, pid FROM claims").fetchall())
        assert owners == {"held": holder.pid, "orphan": os.getpid(), "free": os.getpid()}
        cache.put("free", "m", {"text": "x", "model": "m"})
        cache.release_many(["orphan"])
        with cache._connect() as conn:
            assert dict(conn.execute("SELECT key, pid FROM claims").fetchall()) == {"held": holder.pid}
    finally:
        holder.kill()
        holder.wait()
