"""The OpenAI path against a real OpenAI-compatible server: llama-cpp-python's server running the embedded
SmolLM2 GGUF on 127.0.0.1, behind a counting proxy (tests/servers/counting_proxy.py) that proves how many
calls reached it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.servers under any pytest import mode
from cfa_lib.models import Request, get_client  # noqa: E402
from tests.servers.counting_proxy import CountingProxy, start_counting_proxy  # noqa: E402
from tests.servers.processes import start_llama_server  # noqa: E402

pytestmark = pytest.mark.slow
CHAT = "POST /v1/chat/completions"


class Pick(BaseModel):
    answer: Literal["A", "B", "C"]


@pytest.fixture(scope="session")
def llama_server() -> Iterator[str]:
    try:
        server = start_llama_server("smollm2")
    except RuntimeError as exc:
        pytest.fail(str(exc))
    yield server.url
    server.stop()


@pytest.fixture()
def proxy(llama_server: str) -> Iterator[tuple[str, CountingProxy]]:
    server, counter = start_counting_proxy(llama_server)
    yield f"{server.url}/v1", counter
    server.stop()


def test_plain_chat_with_usage(proxy, tmp_path: Path) -> None:
    base_url, counter = proxy
    client = get_client("openai/smollm2", base_url=base_url, cache_dir=tmp_path)
    client.check()
    c = client.complete([{"role": "user", "content": "What is the capital of France?"}], max_tokens=24)
    assert c.ok and c.text.strip() and c.finish_reason in {"stop", "length"}
    assert c.prompt_tokens > 5 and 0 < c.completion_tokens <= 24 and c.cost_usd is None
    assert counter.counts[CHAT] == 1


def test_structured_output_validates(proxy, tmp_path: Path) -> None:
    base_url, _ = proxy
    client = get_client("openai/smollm2", base_url=base_url, cache_dir=tmp_path)
    question = "Which is a currency? A: Euro B: Paris C: Apple. Answer in JSON."
    c = client.complete([{"role": "user", "content": question}], schema=Pick, max_tokens=32)
    assert c.ok, c.error
    assert Pick.model_validate(c.parsed).answer in {"A", "B", "C"}


def test_concurrent_batch_then_rerun_from_cache_makes_no_calls(proxy, tmp_path: Path) -> None:
    base_url, counter = proxy
    requests = [
        Request([{"role": "user", "content": f"Name the number {i} in words."}], {"max_tokens": 8})
        for i in range(6)
    ]
    first = get_client("openai/smollm2", base_url=base_url, cache_dir=tmp_path).complete_many(
        requests, max_concurrency=4, progress=False
    )
    assert all(c.ok for c in first) and counter.counts[CHAT] == 6
    assert all(c.completion_tokens and c.completion_tokens > 0 for c in first)
    second = get_client("openai/smollm2", base_url=base_url, cache_dir=tmp_path).complete_many(
        requests, max_concurrency=4, progress=False
    )
    assert counter.counts[CHAT] == 6  # zero calls the second time
    assert all(c.cached for c in second) and [c.text for c in second] == [c.text for c in first]


def test_a_refused_json_schema_is_asked_once_per_server_and_recorded(proxy, tmp_path: Path) -> None:
    """llama-cpp-python's server refuses OpenAI's json_schema response_format with HTTP 500; the engine learns
    it from one request and sends json_object + schema from then on, for every client of that server."""
    base_url, counter = proxy
    requests = [Request([{"role": "user", "content": f"Which is a currency ({i})? A: Euro B: Paris C: Apple."}],
                        {"max_tokens": 16}, Pick) for i in range(4)]
    subject = get_client("openai/smollm2", base_url=base_url, cache_dir=tmp_path / "a")
    judge = get_client("openai/smollm2", base_url=base_url, cache_dir=tmp_path / "b")  # a second client, same server
    replies = [c for client in (subject, judge) for c in client.complete_many(requests, max_concurrency=4,
                                                                              progress=False)]
    assert all(c.ok for c in replies), [c.error for c in replies]
    assert counter.statuses[f"{CHAT} 500"] == 1 and counter.statuses[f"{CHAT} 200"] == 8
    refused = subject.engine_stats()["refused"]["json_schema"]
    assert refused.startswith("HTTP 500") and "Input should be 'text' or 'json_object'" in refused
