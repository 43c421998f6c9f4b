"""The OpenAI path against a real loopback server (tests/servers/fake_openai.py) that injects 429 with
Retry-After, 500, hangs past the client timeout and dropped connections."""

from __future__ import annotations

import logging
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.servers under any pytest import mode
from cfa_lib.models import ModelClient, Request, get_client  # noqa: E402
from tests.servers.fake_openai import FakeOpenAI, FaultConfig, expected_answer, start_fake_openai  # noqa: E402
from tests.servers.mini_http import MiniHTTPServer  # noqa: E402


class Answer(BaseModel):
    answer: str
    confidence: float


@pytest.fixture()
def fake() -> Iterator[tuple[MiniHTTPServer, FakeOpenAI]]:
    server, app = start_fake_openai(FaultConfig(retry_after_s=0.02, hang_s=30.0))
    yield server, app
    server.stop()


def client_for(
    server: MiniHTTPServer, cache_dir: Path, model: str = "openai/fake-model", **kw: object
) -> ModelClient:
    options: dict = {"timeout_s": 1.0, "backoff_base_s": 0.01, "backoff_max_s": 0.05, **kw}
    return get_client(model, base_url=f"{server.url}/v1", cache_dir=cache_dir, **options)


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_200_requests_under_faults_all_answered_with_retries_counted(fake, tmp_path: Path) -> None:
    server, app = fake
    app.config.rate = 0.3
    requests = [Request(user(f"question {i}")) for i in range(200)]
    results = client_for(server, tmp_path).complete_many(requests, max_concurrency=16, progress=False)
    stats = app.stats()
    assert all(c.ok for c in results)
    assert [c.text for c in results] == [expected_answer(r.messages) for r in requests]
    assert set(stats["faults"]) == {"429", "500", "hang", "drop"}
    assert sum(c.retries for c in results) == sum(stats["faults"].values()) > 40
    assert all(p["answered"] == 1 for p in stats["prompts"].values()) and stats["answered"] == 200
    assert stats["aborted"] == stats["faults"]["hang"]  # the client gave up on every hanging request


def test_retry_after_is_honoured(fake, tmp_path: Path) -> None:
    server, app = fake
    app.config.rate, app.config.kinds, app.config.retry_after_s = 1.0, ("429",), 0.4
    app.config.max_faults_per_prompt = 1
    completion = client_for(server, tmp_path).complete(user("rate limited"))
    assert completion.ok and completion.retries == 1
    assert completion.latency_s >= 0.4


def test_give_up_is_recorded_not_cached_and_only_failures_rerun(fake, tmp_path: Path, caplog) -> None:
    server, app = fake
    client = client_for(server, tmp_path, max_attempts=3)
    first = [Request(user(f"q{i}")) for i in range(3)]
    assert all(c.ok for c in client.complete_many(first, progress=False))
    app.config.rate, app.config.kinds, app.config.max_faults_per_prompt = 1.0, ("500",), 100
    more = first + [Request(user("q3")), Request(user("q4"))]
    with caplog.at_level(logging.WARNING, logger="cfa_lib.models"):
        results = client.complete_many(more, progress=False)
    assert [c.cached for c in results] == [True, True, True, False, False]
    assert [c.error_kind for c in results] == [None, None, None, "failed", "failed"]
    assert results[3].retries == 2 and "HTTP 500" in results[3].error
    assert "2 of 5 requests failed (failed=2)" in caplog.text
    app.config.rate = 0.0
    rerun = client_for(server, tmp_path).complete_many(more, progress=False)
    assert all(c.ok for c in rerun) and [c.cached for c in rerun] == [True, True, True, False, False]
    counts = {p: s["requests"] for p, s in app.stats()["prompts"].items()}
    assert counts == {"q0": 1, "q1": 1, "q2": 1, "q3": 4, "q4": 4}  # 3 failed attempts + 1 on rerun


def test_cache_hit_needs_no_server_and_refresh_bypasses_it(fake, tmp_path: Path) -> None:
    server, app = fake
    first = client_for(server, tmp_path).complete(user("cache me"))
    again = client_for(server, tmp_path).complete(user("cache me"))
    assert (first.cached, again.cached) == (False, True) and again.text == first.text
    assert again.prompt_tokens == first.prompt_tokens
    fresh = client_for(server, tmp_path, refresh=True).complete(user("cache me"))
    assert not fresh.cached
    assert app.stats()["prompts"]["cache me"]["requests"] == 2
    assert client_for(server, tmp_path).complete(user("cache me"), temperature=0.7).cached is False


def test_identical_requests_in_a_batch_are_sent_once(fake, tmp_path: Path) -> None:
    server, app = fake
    results = client_for(server, tmp_path).complete_many([Request(user("same"))] * 5, progress=False)
    assert len({c.text for c in results}) == 1 and len(results) == 5
    assert app.stats()["prompts"]["same"]["requests"] == 1


def test_structured_output_is_validated(fake, tmp_path: Path) -> None:
    server, app = fake
    completion = client_for(server, tmp_path).complete(user("structured"), schema=Answer)
    assert completion.ok and set(completion.parsed) == {"answer", "confidence"}
    Answer.model_validate(completion.parsed)
    sent = app.stats()["prompts"]["structured"]["last_params"]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["strict"] is True
    assert sent["json_schema"]["schema"]["additionalProperties"] is False


def test_invalid_json_gets_one_retry_then_a_typed_failure(fake, tmp_path: Path) -> None:
    server, app = fake
    completion = client_for(server, tmp_path).complete(user("[[invalid-json]] answer"), schema=Answer)
    assert completion.error_kind == "invalid_json" and completion.parsed is None
    assert app.stats()["prompts"]["[[invalid-json]] answer"]["requests"] == 2
    assert (
        client_for(server, tmp_path).complete(user("[[invalid-json]] answer"), schema=Answer).cached is False
    )


def test_reasoning_model_params_and_larger_budget_retry(fake, tmp_path: Path) -> None:
    server, app = fake
    client = client_for(server, tmp_path, model="gpt-5-mini")
    completion = client.complete(user("[[needs-budget:10000]] think hard"), temperature=0)
    prompt = app.stats()["prompts"]["[[needs-budget:10000]] think hard"]
    assert completion.ok and completion.text.startswith("echo ")
    assert prompt["requests"] == 2
    assert prompt["last_params"]["max_completion_tokens"] == 16000
    assert "temperature" not in prompt["last_params"] and "max_tokens" not in prompt["last_params"]
    assert completion.cost_usd == pytest.approx(
        (completion.prompt_tokens * 0.25 + completion.completion_tokens * 2.00) / 1e6
    )
    cut = client.complete(user("[[empty-length]] never enough"))
    assert cut.error_kind == "truncated" and cut.text == "" and "16000" in cut.error


def test_chat_model_defaults_and_thinking_split(fake, tmp_path: Path) -> None:
    server, app = fake
    completion = client_for(server, tmp_path).complete(user("[[think]] q"))
    assert completion.text == expected_answer(user("[[think]] q"))
    assert completion.thinking and completion.thinking.startswith("Let me work through")
    params = app.stats()["prompts"]["[[think]] q"]["last_params"]
    assert params["temperature"] == 0 and params["max_tokens"] == 1024


def test_api_key_never_reaches_repr_results_or_cache(fake, tmp_path: Path, monkeypatch) -> None:
    server, _ = fake
    secret = "sk-test-DO-NOT-STORE-1234567890"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    client = client_for(server, tmp_path)
    completion = client.complete(user("secret check"))
    assert completion.ok
    assert secret not in repr(client) and secret not in repr(client.backend)
    assert secret not in str(completion.to_dict())
    for file in tmp_path.iterdir():
        assert secret.encode() not in file.read_bytes()
    with sqlite3.connect(client.cache.path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_fake_server_reports_stats_over_http(fake) -> None:
    server, _ = fake
    response = httpx.post(f"{server.url}/v1/chat/completions", json={"model": "m", "messages": user("hi")})
    assert response.json()["choices"][0]["message"]["content"] == expected_answer(user("hi"))
    assert httpx.get(f"{server.url}/stats").json()["prompts"]["hi"]["answered"] == 1
