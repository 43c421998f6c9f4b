"""Answer-format variants beside Format A and B: where the multiple-choice advantage comes from.

Format A (choices) and Format B (no choices) show *that* the options raise the score; the variants ask
*how*, each on the same questions and paired with Format A:

* ``options_only``: the choices without the stem. Accuracy above chance (1 / number of options) can only
  come from the answer set itself: a familiar phrase, an option that looks like the others' centre.
* ``none_of_the_above``: the correct option's text replaced, in place, by "None of the above."; the key
  stays on that letter, so the key's letter distribution is Format A's and a letter prior cannot fake a
  result. A model that finds the answer by recognising the familiar option, not by solving, falls here.
* ``shuffled``: the same options in a different order (a derangement seeded by the question id: every
  option moves, so "same letter" and "same option" can be told apart); the key letter follows its text.
  Gives position bias (the answered letters against the keys') and consistency (the same option text
  chosen in both orders).
* ``reason_then_choose``: the Format B conversation continued: its reply (the completion Format B already
  obtained) as the assistant turn, then the choices with "Now choose the option that matches your answer".
  How much of the gap between A and B closes when the reasoning comes before the options.

Every reply is read by `grade_letter` (the Format A reader): a failed call or one cut before its answer
line is excluded, never counted wrong; no letter is an answer that is wrong (``no_answer``).

The variants ride on option-bias rows (`Row.variants`, one dict of the file's fields per variant); this
module reads any row with `correct_with_options` and `variants`, so it needs no option-bias import.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from cfa_lib import params, prompts, stats
from cfa_lib.data import Question
from cfa_lib.experiments.contract import Summary, tally
from cfa_lib.experiments.outcome import Outcome, cut_short, grade_letter
from cfa_lib.experiments.study_files import letter_error, response_status
from cfa_lib.models import Completion, Request
from cfa_lib.stats import McNemarResult

OPTIONS_ONLY = "options_only"
NONE_OF_THE_ABOVE = "none_of_the_above"
SHUFFLED = "shuffled"
REASON_THEN_CHOOSE = "reason_then_choose"
VARIANTS: tuple[str, ...] = (OPTIONS_ONLY, NONE_OF_THE_ABOVE, SHUFFLED, REASON_THEN_CHOOSE)


def check_variants(value: Any, name: str = "variants") -> list[str]:
    """The notebook parameter `variants`: [] (none), a list of names, or papermill's text form of one."""
    return params.check_names(value, name, VARIANTS)


def _rng(name: str, question: Question) -> random.Random:
    digest = hashlib.sha256(f"{name}/{question.id}".encode()).hexdigest()
    return random.Random(int(digest[:16], 16))


# The variants, one function each --------------------------------------------------------------------------

def shuffle_order(question: Question) -> dict[str, str]:
    """New letter → original letter: a derangement (every option moves) drawn with the question id as seed."""
    letters = list(question.choices)
    moved = [p for p in itertools.permutations(letters) if all(a != b for a, b in zip(p, letters, strict=True))]
    if not moved:  # a single option cannot move
        return {letter: letter for letter in letters}
    return dict(zip(letters, _rng(SHUFFLED, question).choice(moved), strict=True))


def shuffled(question: Question) -> Question:
    """The question with its options in the seeded new order; the key letter follows the key's text."""
    order = shuffle_order(question)
    key = next(new for new, old in order.items() if old == question.answer)
    return replace(question, choices={new: question.choices[old] for new, old in order.items()}, answer=key)


def none_of_the_above(question: Question) -> Question:
    """The correct option's text replaced by "None of the above." on its own letter, which stays the key."""
    choices = {letter: prompts.NONE_OF_THE_ABOVE if letter == question.answer else text
               for letter, text in question.choices.items()}
    return replace(question, choices=choices)


def options_only(question: Question) -> list[dict[str, str]]:
    """The messages of the choices without the stem; the key is the question's own."""
    return prompts.options_only_messages(question)


def reason_then_choose(question: Question, open_reply: str) -> list[dict[str, str]]:
    """Two turns in one conversation: Format B with its reply, then the choices."""
    return prompts.reason_then_choose_messages(question, open_reply)


def variant_question(name: str, question: Question) -> Question:
    """The question a variant's reply is graded against (its choices and key)."""
    if name == SHUFFLED:
        return shuffled(question)
    if name == NONE_OF_THE_ABOVE:
        return none_of_the_above(question)
    return question


def continues_from(completion: Completion | None) -> str | None:
    """The Format B reply reason_then_choose continues from, or None (failed, cut short or empty)."""
    if completion is None or not completion.ok or cut_short(completion) or not completion.text.strip():
        return None
    return completion.text


def variant_requests(questions: Sequence[Question], names: Sequence[str],
                     format_b_answers: Mapping[str, Completion] | None = None
                     ) -> dict[tuple[str, str], Request]:
    """Every variant request, keyed by (question id, variant name).

    reason_then_choose needs Format B's reply: a question whose reply failed or was cut short gets no
    request (its row says so). Without `format_b_answers` (the cost estimate, before Format B is asked) its
    assistant turn is left empty, so the estimate counts the prompt without the reply's tokens.
    """
    requests: dict[tuple[str, str], Request] = {}
    for q in questions:
        for name in names:
            if name == REASON_THEN_CHOOSE:
                reply = "" if format_b_answers is None else continues_from(format_b_answers.get(q.id))
                if reply is not None:
                    requests[q.id, name] = Request(reason_then_choose(q, reply))
            elif name == OPTIONS_ONLY:
                requests[q.id, name] = Request(options_only(q))
            else:
                requests[q.id, name] = Request(prompts.mcq_messages(variant_question(name, q)))
    return requests


# Grading ------------------------------------------------------------------------------------------------

def grade_variant(name: str, question: Question, completion: Completion | None,
                  answer_with: str | None = None) -> dict[str, Any]:
    """One variant's row fields: the letter, correct (None: excluded), status, key, and the reply.

    For shuffled also the order (new letter → original letter), the original letter of the chosen option
    and whether it is the option Format A chose (`answer_with`, a letter of the original order).
    """
    asked = variant_question(name, question)
    outcome = grade_letter(completion, asked) if completion is not None else \
        Outcome.exclude("skipped", "no complete Format B reply to continue from")
    fields: dict[str, Any] = {"key": asked.answer, "n_options": len(asked.choices), "letter": outcome.value,
                              "correct": outcome.correct, "status": response_status(outcome),
                              "error": letter_error(outcome),
                              "response": None if completion is None else completion.text}
    if name == SHUFFLED:
        order = shuffle_order(question)
        original = order.get(outcome.value) if outcome.value else None
        fields.update(order=order, original_letter=original,
                      same_option_as_mcq=None if original is None or answer_with is None else original == answer_with)
    return fields


def attach(rows: Sequence[Any], questions: Sequence[Question], names: Sequence[str],
           completions: Mapping[tuple[str, str], Completion]) -> None:
    """Set each option-bias row's `variants` field from the variant completions (rows in question order)."""
    for row, q in zip(rows, questions, strict=True):
        row.variants = {name: grade_variant(name, q, completions.get((q.id, name)), row.answer_with)
                        for name in names}


# Summary ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class VariantSummary(Summary):
    """One variant against Format A on the questions where both were answered (paired)."""

    n: int
    accuracy: float | None  # the variant's, with its Wilson interval
    accuracy_ci: list[float] | None
    difference_vs_mcq: float | None  # variant − Format A on the same questions
    difference_ci: list[float] | None  # paired bootstrap
    mcnemar: McNemarResult  # b = right in Format A only, c = right in the variant only
    accuracy_mcq: float | None
    status: dict[str, int]  # answered, no_answer, truncated, failed, skipped


@dataclass(frozen=True)
class OptionsOnlySummary(VariantSummary):
    chance_level: float | None  # one over the number of options, averaged


@dataclass(frozen=True)
class LetterDistribution(Summary):
    n: int
    answers: dict[str, int]  # answered letters (shuffled order)
    keys: dict[str, int]  # the keys' letters on the same questions


@dataclass(frozen=True)
class Consistency(Summary):
    n: int
    same_option: int  # the option Format A chose, chosen again in the new order
    share: float | None


@dataclass(frozen=True)
class ShuffledSummary(VariantSummary):
    letter_distribution: LetterDistribution  # position bias: answered letters against the keys' letters
    consistency: Consistency


def names_in(rows: Sequence[Any]) -> list[str]:
    """The variants the rows carry, in the canonical order."""
    present = {name for r in rows for name in (r.variants or {})}
    return [name for name in VARIANTS if name in present]


def summarize_variant(rows: Sequence[Any], name: str, seed: int = 0) -> VariantSummary:
    """One variant against Format A on the questions where both were answered (paired): accuracy with its
    Wilson interval, the difference with a paired bootstrap interval, McNemar's test."""
    fields = [((r.variants or {}).get(name), r) for r in rows]
    fields = [(v, r) for v, r in fields if v is not None]
    paired = [(v, r) for v, r in fields if v.get("correct") is not None and r.correct_with_options is not None]
    variant = [bool(v["correct"]) for v, _ in paired]
    mcq = [bool(r.correct_with_options) for _, r in paired]
    n = len(paired)
    outcomes = stats.paired_outcomes(mcq, variant)
    diff = stats.paired_bootstrap_diff(variant, mcq, seed=seed) if n >= 2 else None
    shared: dict[str, Any] = {
        "n": n,
        "accuracy": sum(variant) / n if n else None,
        "accuracy_ci": list(stats.wilson_interval(sum(variant), n)) if n else None,
        "difference_vs_mcq": (sum(variant) - sum(mcq)) / n if n else None,
        "difference_ci": None if diff is None else [diff[1], diff[2]],
        "mcnemar": stats.mcnemar(outcomes.b, outcomes.c),
        "accuracy_mcq": sum(mcq) / n if n else None,
        "status": tally([v.get("status") for v, _ in fields]),
    }
    if name == OPTIONS_ONLY:
        sizes = [v.get("n_options") or 3 for v, _ in fields]
        return OptionsOnlySummary(**shared, chance_level=sum(1 / k for k in sizes) / len(sizes) if sizes else None)
    if name == SHUFFLED:
        answered = [v for v, _ in fields if v.get("letter")]
        letters = sorted({letter for v, _ in fields for letter in (v.get("order") or {})})
        same = [v["same_option_as_mcq"] for v, _ in fields if v.get("same_option_as_mcq") is not None]
        return ShuffledSummary(
            **shared,
            letter_distribution=LetterDistribution(
                n=len(answered),
                answers={letter: sum(v["letter"] == letter for v in answered) for letter in letters},
                keys={letter: sum(v["key"] == letter for v in answered) for letter in letters}),
            consistency=Consistency(n=len(same), same_option=sum(same), share=sum(same) / len(same) if same else None))
    return VariantSummary(**shared)


def summarize_variants(rows: Sequence[Any], names: Sequence[str] | None = None, seed: int = 0
                       ) -> dict[str, VariantSummary]:
    """Each variant asked (default: those the rows carry), summarized against Format A from the rows."""
    chosen = names_in(rows) if names is None else list(names)
    return {name: summarize_variant(rows, name, seed) for name in chosen}
