"""Declared steps: the model calls a piece of work makes, as values the engine sends for it.

Grading that needs more model calls (judges, their calibration, gold answers, a follow-up turn, perturbations
written by a generator) is a generator function: it yields an `Ask` (the requests, who answers, whose usage the
calls count in) and receives the replies. So it is a function of replies: the engine (`Session.answer` in a run,
a plain client elsewhere) sends each step with the run's settings and through the cache, and a test drives the
same generator with scripted replies, with no client and no patched module (`run_steps(steps, scripted)`).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Hashable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from cfa_lib.models.types import Request

T = TypeVar("T")
SUBJECT = "subject"


@dataclass(frozen=True)
class Ask:
    """One round of model calls: `requests` by key, answered by `model` (None: the run's subject) or, with
    `panel`, by every judge of the run's panel (replies `{key: {judge: completion}}`); the calls count in
    `counted_as`'s usage; `desc` labels the progress bar."""

    requests: Mapping[Hashable, Request]
    desc: str
    model: str | None = None
    panel: bool = False
    counted_as: str = SUBJECT


Steps = Generator[Ask, Mapping[Hashable, Any], T]


def run_steps(steps: Steps[T] | T, answer: Callable[[Ask], Mapping[Hashable, Any]]) -> T:
    """Drive `steps` to its end, `answer` sending each `Ask`; what the steps return (work that needs no call
    may return its result directly, not as a generator)."""
    if not isinstance(steps, Generator):
        return steps
    replies: Mapping[Hashable, Any] | None = None
    while True:
        try:
            ask = steps.send(replies)  # type: ignore[arg-type]  # the first send must be None
        except StopIteration as done:
            return done.value
        replies = answer(ask)
