"""Model names, pre-flight errors, cache file errors, prices, thinking split, estimates (no servers)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from cfa_lib.models import (
    ModelSpecError,
    ModelUnavailableError,
    Request,
    get_client,
    parse_model_name,
)
from cfa_lib.models.pricing import cost_usd, price_for
from cfa_lib.models.thinking import split_thinking


@pytest.mark.parametrize(
    ("name", "backend", "model"),
    [
        ("gpt-4o-mini", "openai", "gpt-4o-mini"),
        ("gpt-5-mini", "openai", "gpt-5-mini"),
        ("o3-mini", "openai", "o3-mini"),
        ("openai/my-finetune", "openai", "my-finetune"),
        ("ollama/qwen3", "ollama", "qwen3"),
        ("qwen3:32b", "ollama", "qwen3:32b"),
        ("llama3.1:8b", "ollama", "llama3.1:8b"),
        ("local:/models/x.gguf", "local", "x"),
    ],
)
def test_names_map_to_backends(name: str, backend: str, model: str) -> None:
    spec = parse_model_name(name)
    assert (spec.backend, spec.model) == (backend, model)


def test_local_is_the_embedded_smollm2() -> None:
    spec = parse_model_name("local")
    assert spec.path is not None and spec.path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert spec.path.is_file()


@pytest.mark.parametrize("name", ["", " gpt-4o", "gpt 4o", "claude", "openai/", "ollama/", "local:", "foo:"])
def test_bad_names_fail_at_once_listing_accepted_forms(name: str) -> None:
    with pytest.raises(ModelSpecError) as info:
        get_client(name)
    message = str(info.value)
    assert repr(name) in message
    for form in (
        "'local'",
        "local:/path/to/model.gguf",
        "gpt-4o-mini",
        "openai/<name>",
        "ollama/<name>",
        "qwen3:32b",
    ):
        assert form in message


def test_reasoning_models_are_recognised() -> None:
    assert parse_model_name("gpt-5-mini").is_reasoning
    assert parse_model_name("o4-mini").is_reasoning
    assert not parse_model_name("gpt-4o").is_reasoning
    assert parse_model_name("qwen3:32b").is_thinking
    assert not parse_model_name("llama3.1:8b").is_thinking


def test_missing_openai_key_is_reported_by_check(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    client = get_client("gpt-4o-mini", cache_dir=tmp_path)  # no network, no error yet
    with pytest.raises(ModelUnavailableError, match="OPENAI_API_KEY"):
        client.check()
    with pytest.raises(ModelUnavailableError, match="OPENAI_API_KEY"):
        client.complete([{"role": "user", "content": "hi"}])


def test_missing_gguf_is_reported_with_its_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "model.gguf"
    client = get_client(f"local:{missing}", cache_dir=tmp_path)
    with pytest.raises(ModelUnavailableError, match="not found") as info:
        client.check()
    assert str(missing) in str(info.value)
    not_gguf = tmp_path / "fake.gguf"
    not_gguf.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(ModelUnavailableError, match="not a GGUF"):
        get_client(f"local:{not_gguf}", cache_dir=tmp_path).check()


def test_unreachable_loopback_server_is_reported(tmp_path: Path) -> None:
    client = get_client("openai/x", base_url="http://127.0.0.1:9/v1", cache_dir=tmp_path)
    with pytest.raises(ModelUnavailableError, match="127.0.0.1:9"):
        client.check()


def test_cache_dir_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CFA_CACHE_DIR", str(tmp_path / "c"))
    assert get_client("gpt-4o-mini").cache.path == tmp_path / "c" / "completions.sqlite"


def test_prices_match_snapshots_by_longest_prefix() -> None:
    assert price_for("openai", "gpt-4o-mini-2024-07-18") == (0.15, 0.60)
    assert price_for("openai", "gpt-4o-2024-08-06") == (2.50, 10.00)
    assert price_for("openai", "my-finetune") is None
    assert price_for("ollama", "gpt-4o") is None
    assert cost_usd("openai", "gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.75)
    assert cost_usd("local", "x", 10, 10) == 0.0  # the embedded model runs in this process: no bill


def test_thinking_is_split_from_the_answer() -> None:
    assert split_thinking("<think>\nA is wrong.\n</think>\n\nB") == ("B", "A is wrong.")
    assert split_thinking("B", "separate field") == ("B", "separate field")
    assert split_thinking("because X</think>C") == ("C", "because X")
    assert split_thinking("<think>ran out of tok") == ("", "ran out of tok")
    assert split_thinking("plain answer") == ("plain answer", None)


def test_estimate_never_fails_offline_and_prices_the_batch(tmp_path: Path) -> None:
    client = get_client("gpt-4o-mini", cache_dir=tmp_path)
    requests = [Request([{"role": "user", "content": "x" * 400}])] * 1000
    est = client.estimate(requests)
    assert est.n_requests == 1000 and est.n_cached == 0
    assert est.completion_budget_tokens == 1000 * 1024
    assert 0 < est.cost_low_usd < est.cost_usd < est.cost_high_usd
    # 1000 requests x (100 prompt tokens + 4 message overhead) at $0.15 / M, the whole budget at $0.60 / M
    if est.token_method == "tiktoken":
        assert 50_000 < est.prompt_tokens < 150_000
    else:
        assert est.prompt_tokens == 104_000 and "characters / 4" in est.note
        assert est.cost_high_usd == pytest.approx((104_000 * 0.15 + 1_024_000 * 0.60) / 1e6)
    assert est.batch_cost_usd == pytest.approx(est.cost_usd / 2) and not est.batch
    assert str(est).startswith(
        f"about ${est.cost_usd:.2f} live or ${est.batch_cost_usd:.2f} by the Batch API (batch=True) for 1000 "
        "requests (prompt tokens ≈ "
    )
    batch = client.estimate(requests, batch=True)
    assert str(batch).startswith(f"about ${est.batch_cost_usd:.2f} by the Batch API (live: ${est.cost_usd:.2f})")


def test_unpriced_estimate_says_so(tmp_path: Path) -> None:
    est = get_client("qwen3:32b", cache_dir=tmp_path).estimate(
        [Request([{"role": "user", "content": "abcd" * 10}])]
    )
    assert est.cost_usd is None and est.prompt_tokens == 14
    assert str(est).startswith("cost unknown (no price for this model) for 1 requests")
    in_batch = get_client("qwen3:32b", cache_dir=tmp_path).estimate([Request([{"role": "user", "content": "a"}])],
                                                                    batch=True)
    assert in_batch.batch_cost_usd is None and "qwen3:32b has no batch API, so it runs live" in str(in_batch)


def test_the_embedded_model_is_free_and_a_cached_batch_costs_nothing(tmp_path: Path) -> None:
    client = get_client("local", cache_dir=tmp_path)
    est = client.estimate([Request([{"role": "user", "content": "What is 2 + 2?"}])])
    assert est.cost_usd == 0.0 and str(est).startswith("free (the model runs on this machine) for 1 requests")
    assert "completion budget" not in str(est)  # no budget of tokens to pay for
    cached = replace(est, n_cached=1)
    assert str(cached) == "all 1 requests already cached: nothing to send, nothing to pay"


def test_malformed_requests_name_the_request(tmp_path: Path) -> None:
    client = get_client("gpt-4o-mini", cache_dir=tmp_path)
    with pytest.raises(ValueError, match="request 1: message 0"):
        client.complete_many([Request([{"role": "user", "content": "ok"}]), Request([{"text": "no role"}])])


def test_timeout_and_attempts_come_from_the_environment(monkeypatch, tmp_path) -> None:
    """An overnight run is tuned with CFA_TIMEOUT_S / CFA_MAX_ATTEMPTS; a bad value names the variable."""
    from cfa_lib.models import get_client

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-env")
    monkeypatch.setenv("CFA_TIMEOUT_S", "7.5")
    monkeypatch.setenv("CFA_MAX_ATTEMPTS", "3")
    client = get_client("gpt-4o-mini", cache_dir=tmp_path)
    assert client.backend.timeout_s == 7.5 and client.retry.max_attempts == 3
    explicit = get_client("gpt-4o-mini", timeout_s=2, max_attempts=2, cache_dir=tmp_path)
    assert explicit.backend.timeout_s == 2 and explicit.retry.max_attempts == 2
    monkeypatch.setenv("CFA_MAX_ATTEMPTS", "many")
    with pytest.raises(ValueError, match="CFA_MAX_ATTEMPTS='many' is not valid"):
        get_client("gpt-4o-mini", cache_dir=tmp_path)


def test_retry_after_is_read_in_each_form_and_a_bad_one_falls_back_to_backoff() -> None:
    from email.utils import formatdate
    from time import time

    from cfa_lib.models.retry import parse_retry_after

    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert 8 <= parse_retry_after({"retry-after": formatdate(time() + 10, usegmt=True)}) <= 10
    assert parse_retry_after({"retry-after": "soon, please"}) is None
    assert parse_retry_after({}) is None


def test_backends_are_registered_by_kind_and_made_from_one_settings_object() -> None:
    from cfa_lib.models.backend import BACKENDS, BackendSettings

    assert set(BACKENDS) == {"openai", "ollama", "local"}  # every kind names.py parses has its backend
    server = BACKENDS["openai"](parse_model_name("gpt-4o-mini"), BackendSettings(base_url="http://127.0.0.1:9/v1"))
    assert (server.kind, server.base_url, server.timeout_s, server.supports_batch) == \
        ("openai", "http://127.0.0.1:9/v1", 120.0, True)
    assert BACKENDS["ollama"](parse_model_name("qwen3:32b"), BackendSettings(timeout_s=5.0)).timeout_s == 5.0
    assert get_client("local").backend.kind == "local"
