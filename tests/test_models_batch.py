"""The Batch API path, driven by the real `openai` client against tests/servers/fake_batch.py: no OpenAI
server can be reached from here, so that loopback server implements the Files and Batches endpoints in
OpenAI's documented wire format. Requests are counted at the server: none is ever paid for twice."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import openai
import pytest
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.servers under any pytest import mode
from cfa_lib.models import CompletionCache, Request, get_client  # noqa: E402
from tests.reliability_plugin import wait_until  # noqa: E402
from tests.servers.fake_batch import start_fake_batch  # noqa: E402
from tests.servers.fake_openai import FaultConfig, expected_answer, start_fake_openai  # noqa: E402
from tests.servers.run_batch import batch_requests  # noqa: E402
from tests.test_models_resume import run_batch  # noqa: E402

N = 40


class Answer(BaseModel):
    answer: str
    confidence: float


@pytest.fixture(autouse=True)
def fast_polls(monkeypatch) -> None:
    monkeypatch.setenv("CFA_BATCH_POLL_S", "0.1")


@pytest.fixture()
def batch_server():
    server, app = start_fake_batch(FaultConfig(delay_s=0.01))
    yield server, app
    server.stop()


def requests_(n: int = N) -> list[Request]:
    return [Request([{"role": "user", "content": f"batch question {i}"}], schema=Answer if i % 2 else None)
            for i in range(n)]


def test_a_batch_is_submitted_polled_and_cached_at_half_price(batch_server, tmp_path: Path) -> None:
    server, app = batch_server
    client = get_client("gpt-4o-mini", base_url=f"{server.url}/v1", cache_dir=tmp_path, batch=True)
    requests = requests_()
    results = client.complete_many(requests + requests[:5], progress=False)  # duplicates are sent once
    stats = app.stats()
    assert stats["batches_created"] == 1 and stats["lines_submitted"] == N and stats["requests"] == 0
    assert stats["paid"] == N and stats["paid_twice"] == 0
    assert all(c.ok for c in results) and len(results) == N + 5
    assert [c.text for c in results[:N:2]] == [expected_answer(r.messages) for r in requests[::2]]
    assert all(set(c.parsed) == {"answer", "confidence"} for c in results[1:N:2])
    live_price = (results[0].prompt_tokens * 0.15 + results[0].completion_tokens * 0.60) / 1e6
    assert results[0].cost_usd == pytest.approx(live_price / 2)
    engine = client.engine_stats()
    assert engine["batch_ids"] == ["batch_000001"] and engine["batch_requests"] == N
    again = client.complete_many(requests, progress=False)  # from the cache: nothing new is submitted
    assert all(c.cached for c in again) and app.stats()["batches_created"] == 1
    assert CompletionCache(tmp_path).batch_jobs("gpt-4o-mini") == []  # collected jobs are forgotten


def test_requests_failed_inside_a_batch_go_into_the_next_batch(batch_server, tmp_path: Path) -> None:
    server, app = batch_server
    app.batch_fault_rate, app.config.max_faults_per_prompt = 0.3, 1
    client = get_client("openai/fake-model", base_url=f"{server.url}/v1", cache_dir=tmp_path, batch=True)
    results = client.complete_many(requests_(), progress=False)
    stats = app.stats()
    assert all(c.ok for c in results)
    assert 0 < stats["batch_faults"] < N and stats["batches_created"] == 2
    assert stats["lines_submitted"] == N + stats["batch_faults"] and stats["requests"] == 0
    assert stats["paid"] == N and stats["paid_twice"] == 0
    assert sum(c.retries for c in results) == stats["batch_faults"]


def test_with_fallback_live_failed_batch_requests_are_retried_live(batch_server, tmp_path: Path) -> None:
    server, app = batch_server
    app.batch_fault_rate, app.config.max_faults_per_prompt = 0.3, 1
    client = get_client("openai/fake-model", base_url=f"{server.url}/v1", cache_dir=tmp_path)
    results = client.complete_many(requests_(), progress=False, batch=True, batch_fallback="live")
    stats = app.stats()
    assert all(c.ok for c in results)
    assert stats["batches_created"] == 1 and stats["requests"] == stats["batch_faults"] > 0
    assert stats["paid"] == N and stats["paid_twice"] == 0


def test_a_server_without_the_batch_api_runs_live(tmp_path: Path, caplog) -> None:
    server, app = start_fake_openai(FaultConfig())  # no /v1/files: 404
    try:
        client = get_client("openai/fake-model", base_url=f"{server.url}/v1", cache_dir=tmp_path, batch=True)
        results = client.complete_many(requests_(10), progress=False)
    finally:
        server.stop()
    assert all(c.ok for c in results) and app.stats()["answered"] == 10
    assert "has no batch API; running live" in caplog.text
    assert CompletionCache(tmp_path).batch_jobs("openai/fake-model") == []


def test_a_batch_created_but_not_recorded_is_found_by_its_tag(batch_server, tmp_path: Path) -> None:
    """A run killed between batches.create and recording the id: its tag (in the cache and the batch's
    metadata) leads the rerun to the same batch."""
    server, app = batch_server
    client = get_client("openai/fake-model", base_url=f"{server.url}/v1", cache_dir=tmp_path, batch=True)
    requests = requests_(6)
    keys = [client._prepare(r, "r")[2] for r in requests]
    cache = CompletionCache(tmp_path)
    cache.add_batch_job("deadbeef", "openai/fake-model", keys)
    cache._connect().execute("UPDATE batch_jobs SET pid = 999999999")  # its process is gone
    api = openai.OpenAI(api_key="sk-test", base_url=f"{server.url}/v1")
    lines = [{"custom_id": k, "method": "POST", "url": "/v1/chat/completions",
              "body": client.backend.batch_body(r.messages, client._prepare(r, "r")[1], r.schema)}
             for k, r in zip(keys, requests, strict=True)]
    uploaded = api.files.create(file=("x.jsonl", "\n".join(map(json.dumps, lines)).encode()), purpose="batch")
    api.batches.create(input_file_id=uploaded.id, endpoint="/v1/chat/completions", completion_window="24h",
                       metadata={"cfa_tag": "deadbeef"})
    results = client.complete_many(requests, progress=False)
    stats = app.stats()
    assert all(c.ok for c in results) and stats["batches_created"] == 1 and stats["paid"] == 6
    assert client.engine_stats()["batch_ids"] == ["batch_000001"]


@pytest.mark.slow
def test_kill_9_while_waiting_then_rerun_polls_the_same_batch(batch_server, tmp_path: Path) -> None:
    """The same command twice (CFA_BATCH=1 in the environment): the first is killed while it waits on its
    batch; the second finds the batch id in the cache, polls it, and submits nothing again."""
    server, app = batch_server
    app.batch_hold = True  # the batch stays in_progress while the first run waits on it
    cache_dir = tmp_path / "cache"
    os.environ["CFA_BATCH"] = "1"
    try:
        first = run_batch(server.url, cache_dir, tmp_path / "killed.json")
        wait_until(lambda: (cache_dir / "completions.sqlite").exists()
                   and any(j["batch_id"] for j in CompletionCache(cache_dir).batch_jobs("openai/fake-model")),
                   "the batch id recorded in the cache")
        time.sleep(0.3)  # well into polling
        os.kill(first.pid, signal.SIGKILL)
        assert first.wait(10) == -signal.SIGKILL
        assert app.stats()["batches_created"] == 1 and app.stats()["lines_submitted"] == N
        app.batch_hold = False
        rerun = run_batch(server.url, cache_dir, tmp_path / "resumed.json")
        assert rerun.wait(120) == 0
    finally:
        os.environ.pop("CFA_BATCH", None)
    resumed = json.loads((tmp_path / "resumed.json").read_text())
    stats = app.stats()
    assert stats["batches_created"] == 1 and stats["lines_submitted"] == N and stats["submitted_twice"] == 0
    assert stats["paid"] == N and stats["paid_twice"] == 0 and stats["requests"] == 0
    assert [row["text"] for row in resumed] == [expected_answer(r.messages) for r in batch_requests(N)]
    assert CompletionCache(cache_dir).batch_jobs("openai/fake-model") == []
