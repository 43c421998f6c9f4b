"""max_cost_usd: the run stops before crossing the cap, says what was spent and what is left, keeps what it
answered in the cache, and the same requests with a higher cap continue without paying anything twice."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.servers under any pytest import mode
from cfa_lib.models import CompletionCache, Request, SpendCapReached, get_client  # noqa: E402
from tests.servers.fake_batch import start_fake_batch  # noqa: E402
from tests.servers.fake_openai import FaultConfig  # noqa: E402

N = 60
MODEL = "gpt-4o-mini"  # priced; the loopback server answers any model name


@pytest.fixture()
def server(monkeypatch):
    monkeypatch.setenv("CFA_BATCH_POLL_S", "0.1")
    monkeypatch.setenv("CFA_SPEND_SESSION", "test-session")
    server, app = start_fake_batch(FaultConfig(delay_s=0.01))
    yield server, app
    server.stop()


def requests_() -> list[Request]:
    """A budget of 5 tokens, about what the fake server answers, so expected and actual costs agree."""
    return [Request([{"role": "user", "content": f"spend question {i} " + "x" * 400}], {"max_tokens": 5})
            for i in range(N)]


def per_request_usd() -> float:
    """What the engine expects one request to cost: its prompt (characters / 4 offline) and 5 tokens."""
    prompt = round(len("spend question 10 " + "x" * 400) / 4) + 4
    return (prompt * 0.15 + 5 * 0.60) / 1e6


@pytest.mark.parametrize("batch", [False, True], ids=["live", "batch"])
def test_the_cap_stops_the_run_and_a_higher_cap_continues(server, tmp_path: Path, batch: bool) -> None:
    srv, app = server
    factor = 0.5 if batch else 1.0
    cap = 20.5 * per_request_usd() * factor  # room for about 20 requests at the expected cost
    client = get_client(MODEL, base_url=f"{srv.url}/v1", cache_dir=tmp_path, batch=batch)
    with pytest.raises(SpendCapReached) as stopped:
        client.complete_many(requests_(), progress=False, max_cost_usd=cap)
    paid = app.stats()["paid"]
    spent = CompletionCache(tmp_path).spent("test-session")
    assert 15 <= paid <= 20 and len(CompletionCache(tmp_path)) == paid
    assert spent <= cap and stopped.value.spent_usd == pytest.approx(spent)
    assert stopped.value.remaining == N - paid
    message = str(stopped.value)
    assert f"${spent:.4f} spent of max_cost_usd=${cap:.4f}" in message
    assert f"{N - paid} requests (about $" in message
    assert "rerun the same command with a higher max_cost_usd" in message
    assert client.engine_stats()["spent_usd"] == pytest.approx(spent, abs=1e-6)

    results = client.complete_many(requests_(), progress=False, max_cost_usd=10 * cap)
    stats = app.stats()
    assert all(c.ok for c in results) and sum(c.cached for c in results) == paid
    assert stats["paid"] == N and stats["paid_twice"] == 0


def test_the_cap_comes_from_the_environment(server, tmp_path: Path, monkeypatch) -> None:
    srv, app = server
    monkeypatch.setenv("CFA_MAX_COST_USD", f"{5.5 * per_request_usd():.10f}")
    client = get_client(MODEL, base_url=f"{srv.url}/v1", cache_dir=tmp_path)
    with pytest.raises(SpendCapReached, match=r"\d+ requests \(about \$0\.\d{4} more\) are left to run"):
        client.complete_many(requests_(), progress=False)
    assert 1 <= app.stats()["paid"] <= 5


def test_an_unpriced_model_is_not_capped(server, tmp_path: Path, caplog) -> None:
    srv, app = server
    client = get_client("openai/fake-model", base_url=f"{srv.url}/v1", cache_dir=tmp_path, max_cost_usd=1e-9)
    assert all(c.ok for c in client.complete_many(requests_()[:5], progress=False))
    assert "max_cost_usd is not applied to openai/fake-model: no price is known for it" in caplog.text
