"""The Ollama adapter against recorded-format Ollama API exchanges.

No Ollama server can be installed here, so tests/servers/ollama_replay.py serves /api/tags and /api/chat
replies written in Ollama's wire format (tests/fixtures/ollama/*.json: a plain model, a thinking model with
message.thinking, one with inline <think> tags, one cut off by the token limit, a structured reply) to the
real `ollama` client on a loopback port.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.servers under any pytest import mode
from cfa_lib.models import ModelUnavailableError, get_client  # noqa: E402
from tests.servers.mini_http import MiniHTTPServer  # noqa: E402
from tests.servers.ollama_replay import OllamaReplay, start_ollama_replay  # noqa: E402


class Choice(BaseModel):
    answer: str
    confidence: float


@pytest.fixture()
def replay(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[MiniHTTPServer, OllamaReplay]]:
    server, app = start_ollama_replay()
    monkeypatch.setenv("OLLAMA_HOST", server.url)
    yield server, app
    server.stop()


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_plain_chat_maps_params_to_options(replay, tmp_path: Path) -> None:
    _, app = replay
    client = get_client("ollama/llama3.1:8b", cache_dir=tmp_path)
    client.check()
    c = client.complete(user("Which is the correct answer? A: 4% B: 5% C: 6%. Reply with the letter."))
    assert (c.text, c.thinking, c.finish_reason) == ("The correct answer is B.", None, "stop")
    assert (c.prompt_tokens, c.completion_tokens, c.cost_usd) == (58, 8, None)
    sent = app.received[-1]
    assert sent["options"] == {"temperature": 0, "num_predict": 1024} and sent["stream"] is False


def test_thinking_field_is_kept_out_of_the_answer(replay, tmp_path: Path) -> None:
    _, app = replay
    client = get_client("qwen3:32b", cache_dir=tmp_path)
    c = client.complete(user("A bond pays 5% annually for 2 years at par 100; yield 5%. Price?"), think=True)
    assert c.text == "The price is 100."
    assert c.thinking is not None and c.thinking.startswith("Coupon equals yield")
    assert app.received[-1]["think"] is True and app.received[-1]["options"]["num_predict"] == 8000


def test_inline_think_tags_are_split(replay, tmp_path: Path) -> None:
    c = get_client("qwen3:32b", cache_dir=tmp_path).complete(
        user("What is 10% of 250? Reply with the number.")
    )
    assert (c.text, c.thinking) == ("25", "10% of 250 is 25.")


def test_budget_exhausted_by_thinking_is_retried_then_truncated(replay, tmp_path: Path) -> None:
    _, app = replay
    c = get_client("qwen3:32b", cache_dir=tmp_path).complete(user("Derive the Black-Scholes formula."))
    assert c.error_kind == "truncated" and not c.ok
    assert [r["options"]["num_predict"] for r in app.received] == [8000, 16000]


def test_structured_output_sends_the_schema_as_format(replay, tmp_path: Path) -> None:
    _, app = replay
    client = get_client("llama3.1:8b", cache_dir=tmp_path)
    c = client.complete(user("Answer as JSON: which option is correct? A: 4% B: 5% C: 6%"), schema=Choice)
    assert c.parsed == {"answer": "B", "confidence": 0.8}
    assert app.received[-1]["format"] == Choice.model_json_schema()
    again = client.complete(user("Answer as JSON: which option is correct? A: 4% B: 5% C: 6%"), schema=Choice)
    assert again.cached and again.parsed == c.parsed and len(app.received) == 1


def test_model_not_pulled_and_host_down_are_clear(replay, tmp_path: Path, monkeypatch) -> None:
    with pytest.raises(ModelUnavailableError, match="ollama pull mistral:7b"):
        get_client("mistral:7b", cache_dir=tmp_path).check()
    get_client("ollama/qwen3:32b", cache_dir=tmp_path).check()
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    with pytest.raises(ModelUnavailableError, match="ollama serve"):
        get_client("qwen3:32b", cache_dir=tmp_path).check()


def test_unknown_model_reply_is_a_failed_completion(replay, tmp_path: Path) -> None:
    client = get_client("llama3.1:8b", cache_dir=tmp_path)
    c = client.complete(user("a prompt that was never recorded"))
    assert c.error_kind == "failed" and "not found" in c.error
