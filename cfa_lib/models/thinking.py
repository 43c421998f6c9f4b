"""Keep a thinking model's reasoning out of the answer text that graders read."""

from __future__ import annotations

import re

_BLOCK = re.compile(r"<think(?:ing)?>(.*?)</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_OPEN = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)


def split_thinking(content: str, thinking: str | None = None) -> tuple[str, str | None]:
    """(answer, thinking) from content that may hold <think> blocks, merged with a separate thinking field.

    An unclosed <think> (the budget ran out mid-thought) leaves no answer; a lone </think> (templates
    that open the block in the prompt) marks everything before it as thinking.
    """
    parts = [thinking.strip()] if thinking and thinking.strip() else []
    parts += [m.strip() for m in _BLOCK.findall(content) if m.strip()]
    answer = _BLOCK.sub("", content)
    if (close := _CLOSE.search(answer)) is not None:
        parts.append(answer[: close.start()].strip())
        answer = answer[close.end() :]
    if (opened := _OPEN.search(answer)) is not None:
        parts.append(answer[opened.end() :].strip())
        answer = answer[: opened.start()]
    joined = "\n\n".join(p for p in parts if p)
    return answer.strip(), joined or None
