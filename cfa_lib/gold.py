"""Gold answers for open-ended grading: grounded in the answer key, or none.

A numeric gold exists only where code can check it: the correct option's own number (as the answer-key
rules read it). Everything else (a conceptual option, a decision such as "daily" or "greater than the lump
sum") is graded in words against the option's text. A gold model may describe the concept and the steps
for the judge, but its number is never used: a confirmation by another model call is not a check, and an
unchecked model answer key grades students against the key's own mistakes (the original study's gold
for easy_2, "daily.", was 365; easy_0's became "1.0 A").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from pydantic import BaseModel

from cfa_lib import prompts
from cfa_lib.answers import gold_number_from_option, open_key, parse_reply
from cfa_lib.data import Question
from cfa_lib.models import Ask, Request, Steps

GoldSource = Literal["option", "text"]


class GoldReply(BaseModel):
    numerical_answer: float | None
    unit: str | None
    concept: str
    solution_summary: str


@dataclass(frozen=True)
class GoldAnswer:
    numerical: float | None
    unit: str | None
    text: str
    concept: str | None
    solution_summary: str | None
    source: GoldSource
    note: str | None = None  # why a model-derived number was dropped, or why the model was not used

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def from_option(question: Question) -> GoldAnswer | None:
    """The correct option's own number; a number that a distractor shares ("a 10% increase in total
    revenue" against "... in average revenue") cannot decide, so that question is graded in words."""
    if gold_number_from_option(question.correct_text) is None:
        return None
    key = open_key(question)  # the option's number read in the unit the stem asks for ('(€ millions)')
    if key is None:
        return text_only(question, "a distractor carries the same number: graded in words")
    return GoldAnswer(key.gold.value, key.gold.unit, question.correct_text, None, None, "option")


def gold_request(question: Question) -> Request:
    user = prompts.GOLD_USER.format(mcq=question.mcq_text(), answer=question.answer,
                                    correct_text=question.correct_text)
    return Request(prompts.chat(prompts.GOLD_SYSTEM, user), schema=GoldReply)


def text_only(question: Question, note: str, reply: GoldReply | None = None) -> GoldAnswer:
    return GoldAnswer(None, None, question.correct_text, reply.concept if reply else None,
                      reply.solution_summary if reply else None, "text", note)


def gold_step(questions: Sequence[Question], model: str) -> Ask:
    """The gold model asked for the questions whose correct option carries no gold of its own."""
    return Ask({q.id: gold_request(q) for q in questions if from_option(q) is None}, "Gold answers", model,
               counted_as="gold")


def gold_answers(questions: Sequence[Question], model: str) -> Steps[dict[str, GoldAnswer]]:
    """Gold answers keyed by question id, the options' where they carry one; the rest asked of the gold `model`
    (a declared step, `cfa_lib.models.steps`: it counts in the run's usage). Calls go through the cache, so each
    dataset and gold model pays for them once, whichever subject model is graded."""
    golds = {q.id: gold for q in questions if (gold := from_option(q)) is not None}
    step = gold_step(questions, model)
    replies = (yield step) if step.requests else {}
    by_id = {q.id: q for q in questions}
    for qid, completion in replies.items():
        question = by_id[qid]
        reply, why = parse_reply(completion, GoldReply, "gold model")
        if reply is None:
            golds[qid] = text_only(question, f"gold model failed: {completion.error}" if not completion.ok else why)
        elif reply.numerical_answer is None:
            golds[qid] = text_only(question, "graded in words against the correct option", reply)
        else:
            golds[qid] = text_only(question, f"model number {reply.numerical_answer:g} not used: the correct option "
                                             "carries no number code can check it against", reply)
    return {q.id: golds[q.id] for q in questions}
