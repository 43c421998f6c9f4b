"""A deterministic failure is an answer: cached with its reason, not sent again unless retry_failed; and the
bounded structured replies of the in-process model (bounds.py, replies.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.servers under any pytest import mode
from cfa_lib.experiments.option_bias import JudgeVerdict  # noqa: E402
from cfa_lib.models import Request, get_client  # noqa: E402
from cfa_lib.models.backend import RawReply  # noqa: E402
from cfa_lib.models.bounds import STRING_CHARS, bounded, close_cut, reply_tokens  # noqa: E402
from cfa_lib.models.local_backend import LocalBackend  # noqa: E402
from cfa_lib.models.names import parse_model_name  # noqa: E402
from cfa_lib.models.replies import Attempt, settle  # noqa: E402
from cfa_lib.models.schema import json_schema_of  # noqa: E402
from cfa_lib.models.types import Completion  # noqa: E402
from tests.servers.fake_openai import FakeOpenAI, start_fake_openai  # noqa: E402
from tests.servers.mini_http import MiniHTTPServer  # noqa: E402

BAD = [{"role": "user", "content": "[[invalid-json]] judge this"}]


class Answer(BaseModel):
    answer: str


@pytest.fixture()
def fake() -> Iterator[tuple[MiniHTTPServer, FakeOpenAI]]:
    server, app = start_fake_openai()
    yield server, app
    server.stop()


def client_for(server: MiniHTTPServer, cache_dir: Path, **options: object):
    return get_client("openai/fake-model", base_url=f"{server.url}/v1", cache_dir=cache_dir, timeout_s=5.0,
                      **options)


def sent(app: FakeOpenAI) -> int:
    return app.stats()["prompts"][BAD[0]["content"]]["requests"]


def test_a_deterministic_failure_is_cached_with_its_reason_and_not_sent_again(fake, tmp_path: Path) -> None:
    server, app = fake
    first = client_for(server, tmp_path, deterministic=True).complete(BAD, schema=Answer)
    assert first.error_kind == "invalid_json" and "reply is not JSON" in first.error and not first.cached
    assert sent(app) == 1  # no second try: the same request would get the same reply

    again = client_for(server, tmp_path, deterministic=True).complete_many([Request(BAD, schema=Answer)])[0]
    assert again.cached and not again.ok
    assert (again.error_kind, again.error) == ("invalid_json", first.error)
    assert sent(app) == 1

    resent = client_for(server, tmp_path, deterministic=True).complete_many([Request(BAD, schema=Answer)],
                                                                            retry_failed=True)[0]
    assert not resent.cached and resent.error_kind == "invalid_json"
    assert sent(app) == 2


def test_retry_failed_from_the_client_and_the_environment(fake, tmp_path: Path, monkeypatch) -> None:
    server, app = fake
    client_for(server, tmp_path, deterministic=True).complete(BAD, schema=Answer)
    assert client_for(server, tmp_path, deterministic=True, retry_failed=True).complete(BAD, schema=Answer).cached \
        is False
    assert sent(app) == 2
    monkeypatch.setenv("CFA_RETRY_FAILED", "1")
    client_for(server, tmp_path, deterministic=True).complete_many([Request(BAD, schema=Answer)])
    assert sent(app) == 3
    client_for(server, tmp_path, deterministic=True, retry_failed=False).complete(BAD, schema=Answer)
    assert sent(app) == 3  # the argument wins over the variable


def test_a_server_not_marked_deterministic_keeps_retrying_failures(fake, tmp_path: Path, monkeypatch) -> None:
    server, app = fake
    client_for(server, tmp_path).complete(BAD, schema=Answer)
    assert sent(app) == 2  # one second try for invalid JSON, as before
    assert client_for(server, tmp_path).complete(BAD, schema=Answer).cached is False
    assert sent(app) == 4
    monkeypatch.setenv("CFA_DETERMINISTIC", "1")  # the user marks the server
    client_for(server, tmp_path).complete(BAD, schema=Answer)
    assert client_for(server, tmp_path).complete(BAD, schema=Answer).cached
    assert sent(app) == 5


def test_which_backends_are_deterministic(monkeypatch, tmp_path: Path) -> None:
    local = get_client("local", cache_dir=tmp_path)
    openai = get_client("openai/fake-model", base_url="http://127.0.0.1:9/v1", cache_dir=tmp_path)
    assert local._deterministic(local.backend.prepare_params({}))
    assert not local._deterministic(local.backend.prepare_params({"temperature": 0.7, "seed": None}))
    assert not openai._deterministic(openai.backend.prepare_params({}))
    monkeypatch.setenv("CFA_DETERMINISTIC", "0")
    assert not local._deterministic(local.backend.prepare_params({}))
    assert get_client("local", cache_dir=tmp_path, deterministic=True)._deterministic({})  # the argument first
    monkeypatch.setenv("CFA_DETERMINISTIC", "maybe")
    with pytest.raises(ValueError, match="CFA_DETERMINISTIC='maybe' is not valid"):
        get_client("local", cache_dir=tmp_path)


def test_the_local_grammar_bounds_every_string_and_the_verdict_budget() -> None:
    schema = bounded(json_schema_of(JudgeVerdict))
    assert schema["properties"]["reasoning"]["maxLength"] == STRING_CHARS
    assert list(schema["properties"]) == ["correct", "reasoning"]  # the verdict before its reason
    assert reply_tokens(schema) == 169  # {"correct": false, "reasoning": "<300 characters>"} at 2 per token
    assert reply_tokens(json_schema_of(JudgeVerdict)) is None  # unbounded: the request's budget applies
    declared = bounded({"type": "object", "properties": {"a": {"type": "string", "maxLength": 5},
                                                         "b": {"type": "array", "items": {"enum": ["x"]}}}})
    assert declared["properties"]["a"]["maxLength"] == 5 and declared["properties"]["b"]["maxItems"] == 16
    local = LocalBackend(parse_model_name("local"))
    assert local.constrained_schema(json_schema_of(JudgeVerdict)) == schema


@pytest.mark.parametrize(("cut", "closed"), [
    ('{"correct": false, "reasoning": "The student', '{"correct": false, "reasoning": "The student"}'),
    ('{"correct": true, "reaso', '{"correct": true}'),
    ('{"a": [1, {"b": "x\\u00', '{"a": [1, {"b": "x"}]}'),
    ('{"correct": true}', None),
])
def test_a_reply_cut_short_is_closed_where_it_stopped(cut: str, closed: str | None) -> None:
    assert close_cut(cut) == closed


def test_a_verdict_cut_in_its_reason_is_kept_and_one_cut_before_it_fails() -> None:
    def read(text: str) -> Completion:
        raw = RawReply(text, None, "length", 10, 169)
        result = settle(Completion(text=text, model="local", finish_reason="length"), raw, Attempt({}),
                        JudgeVerdict, "max_tokens", deterministic=True)
        assert result is not None  # deterministic: no second try
        return result

    kept = read('{"correct": false, "reasoning": "The answer misses the')
    assert kept.ok and kept.parsed == {"correct": False, "reasoning": "The answer misses the"}
    lost = read('{"correct": fa')
    assert lost.error_kind == "invalid_json" and lost.parsed is None
