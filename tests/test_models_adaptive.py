"""Adaptive concurrency: the limit grows while answers are clean, is cut on 429 (never a failure), pauses on
server errors; against the loopback server that answers 429 above 20 requests in flight."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.servers under any pytest import mode
from cfa_lib.models import AdaptiveLimit, Request, get_client  # noqa: E402
from cfa_lib.models.limiter import CUT, START  # noqa: E402
from tests.servers.fake_batch import start_fake_batch  # noqa: E402
from tests.servers.fake_openai import FaultConfig, expected_answer  # noqa: E402


def clean(limit: AdaptiveLimit, n: int) -> None:
    for _ in range(n):
        limit.release(limit.acquire(), "ok")


def test_limit_grows_by_one_per_clean_answer_up_to_the_ceiling() -> None:
    limit = AdaptiveLimit(ceiling=64)
    assert limit.limit == START == 16
    clean(limit, 10)
    assert limit.limit == 26
    clean(limit, 100)
    assert limit.limit == 64  # the ceiling
    assert limit.stats()["concurrency_history"][-1][1] == 64


def test_a_429_cuts_once_per_round_trip_and_is_counted_not_failed() -> None:
    limit = AdaptiveLimit(ceiling=64)
    clean(limit, 48)
    in_flight = [limit.acquire() for _ in range(10)]  # ten requests sent before any 429
    limit.release(in_flight[0], "rate_limited")
    assert CUT == 0.85 and limit.limit == 54  # int(64 x 0.85)
    for epoch in in_flight[1:]:  # their 429s say nothing new: no further cut
        limit.release(epoch, "rate_limited")
    assert limit.limit == 54 and limit.rate_limited == 10 and limit.errors == 0
    limit.release(limit.acquire(), "rate_limited")  # sent after the cut: cuts again
    assert limit.limit == 45
    clean(limit, 46)  # after a cut, growth is one per round trip (about `limit` answers)
    assert limit.limit == pytest.approx(46, abs=0.05)
    history = [h[1] for h in limit.stats()["concurrency_history"]]
    assert history[:2] == [16, 17] and history[-4:] == [64, 54, 45, 46]


def test_server_errors_and_timeouts_pause_growth_without_cutting() -> None:
    limit = AdaptiveLimit(ceiling=64)
    limit.release(limit.acquire(), "error")
    assert limit.limit == 16 and limit.errors == 1
    clean(limit, 16)  # a round trip of clean answers before growth resumes
    assert limit.limit == 16
    clean(limit, 4)
    assert limit.limit == 20


def test_acquire_never_exceeds_the_limit() -> None:
    limit = AdaptiveLimit(ceiling=3, start=16)
    epochs = [limit.acquire() for _ in range(3)]
    assert limit.in_flight == 3 and limit.limit == 3
    import threading

    got = threading.Event()
    waiter = threading.Thread(target=lambda: (limit.acquire(), got.set()))
    waiter.start()
    assert not got.wait(0.2)  # blocked while three are in flight
    limit.release(epochs[0], "ok")
    assert got.wait(5)
    waiter.join()


def test_local_models_keep_one_request_at_a_time_and_ollama_four(tmp_path: Path) -> None:
    local = get_client("local", cache_dir=tmp_path)
    assert local.limit.stats()["concurrency"] == "fixed" and local.limit.limit == 1
    ollama = get_client("ollama/llama3.1:8b", cache_dir=tmp_path)
    assert ollama.limit.stats()["concurrency"] == "fixed" and ollama.limit.limit == 4
    openai_client = get_client("openai/some-model", base_url="http://127.0.0.1:9/v1", cache_dir=tmp_path)
    assert openai_client.limit.stats()["concurrency"] == "adaptive" and openai_client.limit.limit == 16


def test_options_come_from_arguments_then_get_client_then_environment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("CFA_MAX_CONCURRENCY", "12")
    monkeypatch.setenv("CFA_BATCH", "1")
    monkeypatch.setenv("CFA_BATCH_FALLBACK", "live")
    monkeypatch.setenv("CFA_MAX_COST_USD", "2.5")
    client = get_client("gpt-4o-mini", cache_dir=tmp_path)
    opts = client.options()
    assert (opts.max_concurrency, opts.batch, opts.batch_fallback, opts.max_cost_usd) == (12, True, "live", 2.5)
    client = get_client("gpt-4o-mini", cache_dir=tmp_path, max_concurrency=30, batch=False, max_cost_usd=9)
    opts = client.options(batch_fallback="batch")
    assert (opts.max_concurrency, opts.batch, opts.batch_fallback, opts.max_cost_usd) == (30, False, "batch", 9.0)
    assert client.options(max_concurrency=5, batch=True).max_concurrency == 5
    for name in ("CFA_MAX_CONCURRENCY", "CFA_BATCH", "CFA_BATCH_FALLBACK", "CFA_MAX_COST_USD"):
        monkeypatch.delenv(name)
    opts = get_client("gpt-4o-mini", cache_dir=tmp_path).options()
    assert (opts.max_concurrency, opts.batch, opts.batch_fallback, opts.max_cost_usd) == (64, False, "batch", None)
    monkeypatch.setenv("CFA_BATCH_FALLBACK", "sometimes")
    with pytest.raises(ValueError, match="CFA_BATCH_FALLBACK='sometimes' is not valid"):
        get_client("gpt-4o-mini", cache_dir=tmp_path)
    monkeypatch.delenv("CFA_BATCH_FALLBACK")
    monkeypatch.setenv("CFA_MAX_COST_USD", "-1")
    with pytest.raises(ValueError, match="CFA_MAX_COST_USD='-1' is not valid"):
        get_client("gpt-4o-mini", cache_dir=tmp_path)


@pytest.mark.slow
def test_a_rate_limited_server_is_used_to_its_limit_with_no_failure(tmp_path: Path) -> None:
    """The server answers 429 + Retry-After: 1 whenever 20 requests are in flight; with max_attempts=1 any
    real failure would show, so every answer being ok proves the 429s were not counted as failures."""
    server, app = start_fake_batch(FaultConfig(delay_s=0.05), limit_in_flight=20)
    try:
        client = get_client("openai/fake-model", base_url=f"{server.url}/v1", cache_dir=tmp_path, max_attempts=1)
        requests = [Request([{"role": "user", "content": f"limited {i}"}]) for i in range(400)]
        results = client.complete_many(requests, max_concurrency=64, progress=False)
        stats = app.stats()
        engine = client.engine_stats()
    finally:
        server.stop()
    assert [c.text for c in results] == [expected_answer(r.messages) for r in requests]
    assert stats["answered"] == 400 and stats["rate_limited"] > 0 and stats["max_in_flight"] <= 20
    assert engine["rate_limited_429"] == stats["rate_limited"] == sum(c.retries for c in results)
    limits = [h[1] for h in engine["concurrency_history"]]
    assert limits[0] == 16 and max(limits) > 20  # grew past the server's limit, then was cut
    assert any(b < a for a, b in zip(limits, limits[1:], strict=False))
    # cut multiplicatively (by 15 %) on a 429, not one by one; where the limit ends depends on the timing
    # of the last answers, so it is not asserted
    assert any(b <= int(a * 0.85) + 1 and b < a for a, b in zip(limits, limits[1:], strict=False))
    assert json.loads(json.dumps(engine)) == engine  # goes into a results file's metadata as it is


def test_an_empty_quota_stops_the_run_instead_of_waiting_forever(tmp_path: Path) -> None:
    """OpenAI answers 429 insufficient_quota when the account has no credit: no pacing helps, so it is not
    retried like a rate limit but raised, saying what to do."""
    from cfa_lib.models import ModelUnavailableError
    from tests.servers.mini_http import HttpResponse, MiniHTTPServer

    calls = []

    async def handler(request, watch):
        if request.path.endswith("/models"):
            return HttpResponse(body={"object": "list", "data": []})
        calls.append(request.path)
        return HttpResponse(429, {"error": {"message": "You exceeded your current quota",
                                            "type": "insufficient_quota", "code": "insufficient_quota"}})

    server = MiniHTTPServer(handler).start()
    try:
        client = get_client("openai/fake-model", base_url=f"{server.url}/v1", cache_dir=tmp_path)
        with pytest.raises(ModelUnavailableError, match="insufficient_quota"):
            client.complete_many([Request([{"role": "user", "content": "q"}])], progress=False)
    finally:
        server.stop()
    assert calls == ["/v1/chat/completions"]
