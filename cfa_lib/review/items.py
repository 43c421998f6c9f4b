"""What a person can check in a run: one `ReviewItem` per verdict a rule or a judge decided.

Each item carries what the reviewer sees (the question, the key, the response, whole where the file has
it whole) and, apart, what the toolkit decided (`verdict`) and which path decided it (`path`), so an
export can leave those out and the score can join them back by `item_id`. The item id is the run row's
key: `<question_id>|B` (option bias, the open format), `<question_id>|open` (three-tier),
`<question_id>|L<level>|s<seed>` (a counterfactual item; `s-` when the file records no seed).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from cfa_lib.data import Question, dataset_of, questions_by_id
from cfa_lib.experiments.loading import LoadedRun

Kind = Literal["open", "tier", "item"]
CANNOT_TELL = "cannot_tell"
# The verdicts a reviewer may give, per kind of item; "cannot_tell" is counted and excluded, never guessed.
VERDICTS: dict[str, tuple[str, ...]] = {
    "open": ("correct", "incorrect", CANNOT_TELL),
    "tier": ("A", "B", "C", CANNOT_TELL),
    "item": ("valid", "defective", CANNOT_TELL),
}
TIER_OF_LEVEL = {"exact": "A", "directional": "B", "incorrect": "C"}


@dataclass(frozen=True)
class ReviewItem:
    """One decided verdict, with what a reviewer needs to decide it again."""

    item_id: str
    experiment: str
    question_id: str
    part: str  # "B" (option bias), "open" (three-tier), "L1" (a counterfactual level)
    seed: int | None
    kind: Kind
    question: str  # what the model was asked (for an item: the original question with its key)
    correct_option: str  # the key the verdict is checked against
    response: str  # the model's response (for an item: the generated item)
    response_whole: bool  # False: the file stores the response cut short
    path: str  # who decided: final_line, heuristic, numbers, judge, refusal rule, template, generator
    verdict: str  # the toolkit's verdict in the reviewer's vocabulary (VERDICTS[kind])
    status: str  # the toolkit's own finer verdict (no_answer, ...): a stratum of the sample

    @property
    def stratum(self) -> tuple[str, str]:
        return self.path, self.status


def _question(question_id: str) -> Question | None:
    dataset = dataset_of(question_id)
    return questions_by_id(dataset).get(question_id) if dataset else None


def _key_text(question: Question | None) -> str:
    return "" if question is None else f"{question.answer}: {question.correct_text}"


def ours(run: LoadedRun) -> bool:
    """A file this toolkit wrote stores responses whole; the study's files cut them to a few hundred characters."""
    return "prompt_version" in run.metadata


def _open_path(judged: bool, source: str | None, status: str) -> str:
    if judged:
        return "judge"
    if source in ("final_line", "heuristic"):
        return source
    return "refusal rule" if status == "no_answer" else "numbers"


def option_bias_items(run: LoadedRun) -> Iterator[ReviewItem]:
    """Format B (no options) of every counted question: the open answer against the correct option."""
    for row in run.regraded_rows:
        outcome = row.without_options
        if outcome.status == "excluded":
            continue
        question = _question(row.question_id)
        whole = ours(run) and row.response_without is not None
        response = row.response_without if row.response_without is not None else (row.answer_without or "")
        yield ReviewItem(
            f"{row.question_id}|B", run.experiment, row.question_id, "B", None, "open",
            question.open_text() if question else "", _key_text(question), response, whole,
            _open_path(outcome.judged, outcome.source, outcome.status),
            "correct" if outcome.status == "correct" else "incorrect", outcome.status)


def three_tier_items(run: LoadedRun) -> Iterator[ReviewItem]:
    """Every counted open answer of a three-tier run, its level A, B or C (no answer is C)."""
    for row in run.regraded_rows:
        outcome = row.outcome
        if outcome.status == "excluded" or row.question_id is None:
            continue
        question = _question(row.question_id)
        tier = "C" if outcome.status == "no_answer" else TIER_OF_LEVEL[str(row.level)]
        whole = ours(run)
        yield ReviewItem(
            f"{row.question_id}|open", run.experiment, row.question_id, "open", None, "tier",
            question.open_text() if question else "", _key_text(question), row.model_response or "", whole,
            _open_path(outcome.judged, outcome.source, outcome.status), tier,
            outcome.status if outcome.status == "no_answer" else tier)


def _item_text(entry: Mapping[str, Any]) -> str | None:
    """The generated item as the reviewer sees it: its stem and options, or the changes the file lists."""
    if entry.get("question"):
        choices = "\n".join(f"{k}: {v}" for k, v in (entry.get("choices") or {}).items())
        return f"{entry['question']}\n\n{choices}".strip()
    if "changes_made" in entry:
        changes = entry.get("changes_made") or []
        listed = "\n".join(f"- {c}" for c in changes) if changes else "(no change listed)"
        return ("The file stores no text of the new question, only the changes made to the original:\n"
                f"{listed}")
    return None


def counterfactual_items(run: LoadedRun) -> Iterator[ReviewItem]:
    """Every generated item the file shows (valid or defective): is it a sound question with that key?"""
    default_seed = run.metadata.get("perturbation_seed")
    for row in run.regraded_rows:
        question = _question(row.question_id or "")
        for entry in row.perturbations:
            text = _item_text(entry)
            if text is None or row.question_id is None:
                continue  # nothing of the item is stored: no one can review it blind
            seed = entry.get("seed", default_seed)
            letter = entry.get("correct_letter") or entry.get("perturbed_answer") or ""
            claimed = (entry.get("choices") or {}).get(letter)
            verdict = "valid" if entry.get("valid") else "defective"
            original = f"{question.mcq_text()}\n\nKey: {_key_text(question)}" if question else ""
            yield ReviewItem(
                f"{row.question_id}|L{entry.get('level')}|s{'-' if seed is None else seed}", run.experiment,
                row.question_id, f"L{entry.get('level')}", seed, "item", original,
                f"{letter}: {claimed}" if claimed else letter, text, bool(entry.get("question")),
                str(entry.get("source") or "generator"), verdict, verdict)


ITEMS = {"option_bias": option_bias_items, "three_tier": three_tier_items, "counterfactual": counterfactual_items}


def review_items(run: LoadedRun) -> list[ReviewItem]:
    """Every reviewable item of a loaded run, in the file's order."""
    return list(ITEMS[run.experiment](run))
