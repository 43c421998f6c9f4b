"""Keep a model's reasoning out of the answer text that graders read: the one rule for reasoning tags."""

from __future__ import annotations

import re

_TAGS = "think|thinking|reasoning|reflection"
_BLOCK = re.compile(rf"<({_TAGS})\b[^>]*>(.*?)</\1\s*>", re.DOTALL | re.IGNORECASE)
_OPEN = re.compile(rf"<(?:{_TAGS})\b[^>]*>", re.IGNORECASE)
_CLOSE = re.compile(rf"</(?:{_TAGS})\s*>", re.IGNORECASE)


def split_thinking(content: str, thinking: str | None = None) -> tuple[str, str | None]:
    """(answer, thinking) from content that may hold reasoning blocks, merged with a separate thinking field.

    An unclosed opener (the budget ran out mid-thought) leaves no answer after it; a stray closer
    (templates that open the block in the prompt) marks everything before the last one as thinking.
    """
    parts = [thinking.strip()] if thinking and thinking.strip() else []
    parts += [m.group(2).strip() for m in _BLOCK.finditer(content) if m.group(2).strip()]
    answer = _BLOCK.sub(" ", content)
    closers = list(_CLOSE.finditer(answer))
    if closers:
        parts.append(answer[: closers[-1].start()].strip())
        answer = answer[closers[-1].end() :]
    if (opened := _OPEN.search(answer)) is not None:
        parts.append(answer[opened.end() :].strip())
        answer = answer[: opened.start()]
    joined = "\n\n".join(p for p in parts if p)
    return answer.strip(), joined or None
