"""Gold answers for open-ended grading.

A number taken straight from the correct option needs no model. When the option is a statement
("greater than the lump sum"), a gold model derives the number, and that number is kept only if a
second call confirms it makes the correct option true and the others false: an unchecked model
answer key would grade students against the key's own mistakes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from pydantic import BaseModel

from cfa_lib import prompts
from cfa_lib.answers import gold_number_from_option, numeric_key, parse_reply
from cfa_lib.data import Question
from cfa_lib.models import Request, complete_keyed

GoldSource = Literal["option", "model", "text"]


class GoldReply(BaseModel):
    numerical_answer: float | None
    unit: str | None
    concept: str
    solution_summary: str


class GoldCheck(BaseModel):
    consistent: bool
    reasoning: str


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
    key = numeric_key(question.choices, question.answer)
    if key is None:
        return text_only(question, "a distractor carries the same number: graded in words")
    return GoldAnswer(key.gold.value, key.gold.unit, question.correct_text, None, None, "option")


def gold_request(question: Question) -> Request:
    user = prompts.GOLD_USER.format(mcq=question.mcq_text(), answer=question.answer,
                                    correct_text=question.correct_text)
    return Request(prompts.chat(prompts.GOLD_SYSTEM, user), schema=GoldReply)


def check_request(question: Question, reply: GoldReply) -> Request:
    user = prompts.GOLD_CHECK_USER.format(mcq=question.mcq_text(), answer=question.answer,
                                          value=reply.numerical_answer, unit=reply.unit or "")
    return Request(prompts.chat(prompts.GOLD_CHECK_SYSTEM, user), schema=GoldCheck)


def text_only(question: Question, note: str, reply: GoldReply | None = None) -> GoldAnswer:
    return GoldAnswer(None, None, question.correct_text, reply.concept if reply else None,
                      reply.solution_summary if reply else None, "text", note)


def gold_answers(questions: Sequence[Question], client, **engine: Any) -> dict[str, GoldAnswer]:
    """Gold answers keyed by question id; model calls go through the cache, so each dataset and gold
    model pays for them once, whichever subject model is graded."""
    golds: dict[str, GoldAnswer] = {}
    need_model: dict[str, Question] = {}
    for question in questions:
        gold = from_option(question)
        if gold is None:
            need_model[question.id] = question
        else:
            golds[question.id] = gold
    replies = complete_keyed(client, {qid: gold_request(q) for qid, q in need_model.items()},
                             **engine, desc="Gold answers")
    to_check: dict[str, GoldReply] = {}
    for qid, completion in replies.items():
        question = need_model[qid]
        reply, why = parse_reply(completion, GoldReply, "gold model")
        if reply is None:
            golds[qid] = text_only(question, f"gold model failed: {completion.error}" if not completion.ok else why)
        elif reply.numerical_answer is None:
            golds[qid] = text_only(question, "no number in the gold model's answer", reply)
        else:
            to_check[qid] = reply
    checks = complete_keyed(client, {qid: check_request(need_model[qid], r) for qid, r in to_check.items()},
                            **engine, desc="Gold checks")
    for qid, completion in checks.items():
        question, reply = need_model[qid], to_check[qid]
        check = parse_reply(completion, GoldCheck, "gold check")[0]
        if check is not None and check.consistent:
            golds[qid] = GoldAnswer(reply.numerical_answer, reply.unit, question.correct_text,
                                    reply.concept, reply.solution_summary, "model")
        else:
            why = check.reasoning if check else f"check failed: {completion.error}"
            golds[qid] = text_only(
                question, f"model number {reply.numerical_answer} dropped: not confirmed by the answer key ({why})",
                reply)
    return {q.id: golds[q.id] for q in questions}
