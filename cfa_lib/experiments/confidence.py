"""Confidence calibration: does the model know when it is right?

Each question is asked in Format A (with its options); the conversation then goes on with one more turn,
"how confident are you that your answer is correct, 0 to 100", answered as a JSON object
(`StatedConfidence`). A model is calibrated when, of the answers it gives 80 % confidence, about 80 % are
right. Reported: accuracy, mean stated confidence, the Brier score (mean of (confidence − correct)²), the
expected calibration error (ECE: over equal-width confidence bins, the share-weighted gap between each
bin's accuracy and its mean confidence, with a 95 % bootstrap interval over questions) and a reliability
diagram. A failed or cut-short answer, and a confidence the model did not state in the asked form, are
excluded and counted, never guessed; an answer with no letter is counted (not correct) when its confidence
was stated. ECE is biased upwards on few questions: with fewer than `MIN_FOR_INTERVAL` graded questions no
interval is printed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, Field

from cfa_lib import prompts
from cfa_lib.answerability import is_open_answerable
from cfa_lib.answers.structured import parse_reply
from cfa_lib.checks import invalid
from cfa_lib.data import Question
from cfa_lib.experiments.contract import FORMAT_A, Context, Experiment, Graded, Key, Sample, Summary, tally
from cfa_lib.experiments.outcome import Outcome, grade_letter
from cfa_lib.experiments.page import Page, code, md
from cfa_lib.models import Ask, Completion, Request, Steps
from cfa_lib.params import Parameters, checked_by
from cfa_lib.results import ResultRow

CONFIDENCE_FOLLOW_UP = (
    "How confident are you that the answer you just gave is correct? Reply with a JSON object "
    '{"confidence": N}, where N is a whole number from 0 (certainly wrong) to 100 (certainly right).')
MIN_FOR_INTERVAL = 20  # graded questions below which the ECE's bootstrap interval is not printed
RESAMPLES = 2000


class StatedConfidence(BaseModel):
    """The follow-up's reply: the model's confidence in its own answer, 0-100."""

    confidence: int = Field(ge=0, le=100)


def check_bins(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 2 <= value <= 50:
        raise invalid(name, value, "a whole number from 2 to 50")
    return value


class Options(Parameters):
    bins: Annotated[int, checked_by(check_bins)] = 10  # equal-width confidence bins of the ECE and the diagram


@dataclass
class Row(ResultRow):
    question_id: str
    status: str  # the answer's outcome: correct, incorrect, no_answer or excluded
    excluded: str | None = None  # why (outcome.Exclusion): failed, truncated, letter_undecided, unreadable
    letter: str | None = None
    confidence: int | None = None  # 0-100, as stated
    reason: str | None = None  # why excluded, in a sentence
    response: str | None = None
    confidence_response: str | None = None

    @property
    def outcome(self) -> Outcome:
        if self.status == "excluded":
            return Outcome.exclude(self.excluded or "failed", self.reason, value=self.letter)  # type: ignore[arg-type]
        return Outcome(self.status, self.letter, self.reason)  # type: ignore[arg-type]


@dataclass(frozen=True)
class ConfidenceBin:
    lower: float
    upper: float
    n: int
    mean_confidence: float | None
    accuracy: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"lower": self.lower, "upper": self.upper, "n": self.n, "mean_confidence": self.mean_confidence,
                "accuracy": self.accuracy}


@dataclass(frozen=True)
class ConfidenceSummary(Summary):
    n_questions: int
    n_graded: int  # an answer and a stated confidence
    excluded: dict[str, int]  # by reason
    accuracy: float | None
    mean_confidence: float | None  # 0-1
    overconfidence: float | None  # mean confidence − accuracy
    brier_score: float | None
    ece: float | None
    ece_ci: tuple[float, float] | None  # 95 % bootstrap over questions; None below MIN_FOR_INTERVAL
    bins: tuple[ConfidenceBin, ...]


def calibration_bins(confidence: np.ndarray, correct: np.ndarray, n_bins: int) -> list[ConfidenceBin]:
    """Equal-width bins over [0, 1] (a confidence of 1 in the last), each with its count, mean confidence and
    accuracy."""
    index = np.minimum((confidence * n_bins).astype(int), n_bins - 1)
    out = []
    for b in range(n_bins):
        inside = index == b
        n = int(inside.sum())
        out.append(ConfidenceBin(b / n_bins, (b + 1) / n_bins, n, float(confidence[inside].mean()) if n else None,
                                 float(correct[inside].mean()) if n else None))
    return out


def expected_calibration_error(confidence: np.ndarray, correct: np.ndarray, n_bins: int) -> float:
    """Σ over bins of (share of answers) × |accuracy − mean confidence|."""
    total = len(confidence)
    return float(sum(b.n / total * abs(b.accuracy - b.mean_confidence)
                     for b in calibration_bins(confidence, correct, n_bins) if b.n))


def ece_interval(confidence: np.ndarray, correct: np.ndarray, n_bins: int, seed: int = 0) -> tuple[float, float]:
    """The 95 % percentile bootstrap interval of the ECE, questions resampled with replacement."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(confidence), size=(RESAMPLES, len(confidence)))
    values = [expected_calibration_error(confidence[d], correct[d], n_bins) for d in draws]
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)


def summarize(rows: Sequence[Row], n_bins: int) -> ConfidenceSummary:
    graded = [r for r in rows if r.status != "excluded"]
    excluded = tally([r.excluded for r in rows if r.status == "excluded"])
    if not graded:
        return ConfidenceSummary(len(rows), 0, excluded, None, None, None, None, None, None, ())
    confidence = np.array([r.confidence / 100 for r in graded])
    correct = np.array([r.status == "correct" for r in graded], dtype=float)
    accuracy, mean_confidence = float(correct.mean()), float(confidence.mean())
    interval = ece_interval(confidence, correct, n_bins) if len(graded) >= MIN_FOR_INTERVAL else None
    return ConfidenceSummary(len(rows), len(graded), excluded, accuracy, mean_confidence,
                             mean_confidence - accuracy, float(((confidence - correct) ** 2).mean()),
                             expected_calibration_error(confidence, correct, n_bins), interval,
                             tuple(calibration_bins(confidence, correct, n_bins)))


def follow_up(question: Question, reply: str) -> Request:
    """The conversation of Format A, continued: the model's own answer, then the question of its confidence."""
    return Request([*prompts.mcq_messages(question), {"role": "assistant", "content": reply},
                    {"role": "user", "content": CONFIDENCE_FOLLOW_UP}], schema=StatedConfidence)


def row_of(question: Question, answer: Completion, stated: Completion | None = None) -> Row:
    """The answer's row: its letter graded, then the stated confidence read (`with_confidence`)."""
    outcome = grade_letter(answer, question)
    row = Row(question.id, outcome.status, outcome.excluded, outcome.value, reason=outcome.reason,
              response=answer.text)
    return with_confidence(row, stated)


def with_confidence(row: Row, stated: Completion | None) -> Row:
    """The row with the confidence the follow-up stated, or excluded as unreadable; an excluded answer (never
    followed up) stays as it is."""
    if row.status == "excluded" or stated is None:
        return row
    parsed, why = parse_reply(stated, StatedConfidence, who="subject")
    row.confidence_response = stated.text
    if parsed is None:
        row.status, row.excluded, row.reason = "excluded", "unreadable", why
    else:
        row.confidence = parsed.confidence
    return row


PAGE = Page(
    blurb="the confidence the model states after its Format A answer: accuracy, Brier score, ECE and a reliability "
          "diagram.",
    intro="""
# Confidence calibration: does the model know when it is right?

Each question is asked with its options (Format A); the same conversation then asks the model how confident
it is that its answer is correct, as a whole number from 0 to 100. A calibrated model is right on about 80 %
of the answers it gives 80 % confidence. The **Brier score** is the mean of (confidence − correct)² (0 is
perfect; always saying 50 scores 0.25); the **expected calibration error** (ECE) is the share-weighted gap
between accuracy and mean confidence over equal-width confidence bins, with a 95 % bootstrap interval over
questions (not printed below 20 graded questions: the ECE is biased upwards on few). A failed or cut-short
answer, and a confidence not stated in the asked form, are excluded and counted, never guessed.
""",
    parameters="""
bins = 10                # equal-width confidence bins of the ECE and the reliability diagram
""",
    sections=(
        md("## Summary"),
        code("notebook_tables.summary_table(run)"),
        md("## Reliability diagram\n\nEach bin's accuracy against its mean stated confidence; on the diagonal "
           "the model is calibrated, below it overconfident. The bars count the answers per bin."),
        code("CONFIDENCE.reliability_diagram(run.summary)"),
    ),
)


class Confidence(Experiment[Options, Row, ConfidenceSummary]):
    name, title, notebook = "confidence", "Confidence calibration", "05_confidence.ipynb"
    file_names = frozenset({"confidence"})
    judged = False  # the key decides every answer
    own_prompts = {"CONFIDENCE_FOLLOW_UP": CONFIDENCE_FOLLOW_UP}
    page = PAGE
    Options, Row = Options, Row

    def requests(self, questions: Sequence[Question], options: Options) -> dict[Key, Request]:
        return {(q.id, "answer"): Request(prompts.mcq_messages(q)) for q in questions}

    def estimated_steps(self, run: Context[Options]) -> list[Ask]:
        """Both turns; the follow-up's own answer is not known yet, so the key's text stands in for it."""
        return [*super().estimated_steps(run),
                Ask({(q.id, "confidence"): follow_up(q, f"ANSWER: {q.answer}") for q in run.questions}, "Confidence")]

    def grade(self, run: Context[Options], answers: Mapping[Key, Completion]) -> Steps[Graded[Row]]:
        questions = run.questions
        letters = [row_of(q, answers[q.id, "answer"]) for q in questions]  # each answer graded once
        asked = {(q.id, "confidence"): follow_up(q, answers[q.id, "answer"].text)
                 for q, row in zip(questions, letters, strict=True) if row.status != "excluded"}
        stated = (yield Ask(asked, "Confidence")) if asked else {}
        rows = [with_confidence(row, stated.get((row.question_id, "confidence"))) for row in letters]
        return Graded(rows, metadata={"bins": run.options.bins})

    def summarize(self, rows: Sequence[Row], metadata: Mapping[str, Any]) -> ConfidenceSummary:
        return summarize(rows, int(metadata.get("bins", 10)))

    def samples(self, rows: Sequence[Row]) -> Iterator[Sample]:
        for row in rows:
            yield Sample(row.question_id, FORMAT_A, bool(is_open_answerable(row.question_id)), row.outcome,
                         response=row.response)

    @staticmethod
    def reliability_diagram(summary: ConfidenceSummary) -> Any:
        """Accuracy against mean confidence per bin (the diagonal: calibrated), the answers per bin below."""
        import matplotlib.pyplot as plt

        figure, (top, bottom) = plt.subplots(2, 1, figsize=(5, 5), sharex=True, height_ratios=(3, 1))
        top.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1)
        used = [b for b in summary.bins if b.n]
        top.plot([b.mean_confidence for b in used], [b.accuracy for b in used], marker="o")
        top.set(ylim=(0, 1), ylabel="accuracy", title=f"n = {summary.n_graded} graded questions")
        bottom.bar([(b.lower + b.upper) / 2 for b in summary.bins], [b.n for b in summary.bins],
                   width=1 / max(len(summary.bins), 1) * 0.9)
        bottom.set(xlim=(-0.03, 1.03), xlabel="stated confidence", ylabel="answers")  # a dot at 1 is whole
        figure.tight_layout()
        plt.close(figure)  # returned to a notebook, it is shown once, not twice
        return figure


CONFIDENCE = Confidence()
