"""What a person can check in a run: one `ReviewItem` per verdict a rule or a judge decided.

Each item carries what the reviewer sees (the question, the key, the response, whole where the file has
it whole) and, apart, what the toolkit decided (`verdict`) and which path decided it (`path`), so an
export can leave those out and the score can join them back by `item_id`. The item id is the run row's
key: `<question_id>|B` (option bias, the open format), `<question_id>|open` (three-tier),
`<question_id>|L<level>|s<seed>` (a counterfactual item; `s-` when the file records no seed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cfa_lib.data import Question, dataset_of, questions_by_id
from cfa_lib.experiments.contract import Sample
from cfa_lib.experiments.loading import LoadedRun

Kind = Literal["open", "tier", "item"]
CANNOT_TELL = "cannot_tell"
# The verdicts a reviewer may give, per kind of item; "cannot_tell" is counted and excluded, never guessed.
VERDICTS: dict[str, tuple[str, ...]] = {
    "open": ("correct", "incorrect", CANNOT_TELL),
    "tier": ("A", "B", "C", CANNOT_TELL),
    "item": ("valid", "defective", CANNOT_TELL),
}


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


def _item(run: LoadedRun, sample: Sample, kind: str) -> ReviewItem | None:
    """The review item of one sample, or None when it is not reviewable (excluded, or nothing stored)."""
    qid, outcome, question = sample.question_id, sample.outcome, _question(sample.question_id)
    if kind == "item":  # the generated item's validity, shown beside the original and its key
        if sample.item is None or not qid:
            return None  # nothing of the item is stored: no one can review it blind
        seed = sample.seed if sample.seed is not None else run.metadata.get("perturbation_seed")
        part, verdict = f"L{sample.perturbation_level}", "valid" if sample.valid else "defective"
        original = f"{question.mcq_text()}\n\nKey: {_key_text(question)}" if question else ""
        return ReviewItem(f"{qid}|{part}|s{'-' if seed is None else seed}", run.experiment, qid, part, seed, "item",
                          original, sample.item_key or "", sample.item, sample.item_whole,
                          sample.perturbation_source or "generator", verdict, verdict)
    if outcome is None or outcome.status == "excluded" or not qid:
        return None
    if kind == "tier":
        verdict = str(outcome.tier)
        status = outcome.status if outcome.status == "no_answer" else verdict
    else:
        verdict, status = ("correct" if outcome.status == "correct" else "incorrect"), outcome.status
    return ReviewItem(f"{qid}|{sample.condition}", run.experiment, qid, sample.condition, None, kind,  # type: ignore[arg-type]
                      question.open_text() if question else "", _key_text(question), sample.response or "",
                      ours(run) and sample.response_whole, outcome.decided_by, verdict, status)


def review_items(run: LoadedRun) -> list[ReviewItem]:
    """Every reviewable item of a loaded run, in the file's order: the samples its experiment declares reviewed
    (`Experiment.reviewed`: a condition and the kind of item a person checks)."""
    if run.entry.reviewed is None:
        return []
    condition, kind = run.entry.reviewed
    items = (_item(run, sample, kind) for sample in run.samples() if sample.condition == condition)
    return [item for item in items if item is not None]
