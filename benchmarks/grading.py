"""Grading precision and coverage on hand-labelled corpora, and grading speed on CFA-Easy.

    PYTHONPATH=. .venv/bin/python benchmarks/grading.py [CORPUS_DIR ...]
    (default: every tests/grading_corpus* folder: the first corpus, _commitment, _blind, _fresh, _kept_out,
    _kept_out_2 to _kept_out_20 and _fresh_2)

Each corpus directory holds `open.jsonl` and/or `mcq.jsonl` in the format of tests/grading_corpus/README.md
(`question_id`, `class`, `response`, `finish_reason`, `expected_verdict`, and `expected_value` or
`expected_letter`); a row on a perturbed item carries the item itself in `question` (`dataset`, `stem`,
`choices`, `answer`). Every corpus is reported on its own, per class and overall:

* precision: of the rows the code DECIDES (any verdict but `judge`), the share whose verdict equals the
  label. A row labelled `judge` that the code decides counts as a wrong decision; a `judge` returned for
  a row labelled otherwise is a deferral, not an error.
* coverage: the share of rows settled without an unneeded judge call: the code decides, or the label is
  `judge` and the code returns `judge` (the judge is what the label asks for). A row labelled e.g.
  `correct` that the code sends to the judge is not covered.
* agreement: the share of rows whose verdict equals the label (deferrals count as misses).
* extraction: on rows that label a value (MCQ: a letter) and are decided, the share read exactly.

Targets: precision >= 99 % and coverage >= 90 % in every class. Then the time to grade 1,032 synthetic
Easy responses twice (with a `FINAL ANSWER:` line, and without: the heuristic reader); goal under 1 s each.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from cfa_lib.answers import grade_choice, grade_open_answer
from cfa_lib.data import Question, dataset_of, load_dataset, questions_by_id

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPORA = [ROOT / "tests" / name for name in
                   ("grading_corpus", "grading_corpus_commitment", "grading_corpus_blind", "grading_corpus_fresh",
                    "grading_corpus_kept_out", "grading_corpus_kept_out_2", "grading_corpus_kept_out_3",
                    "grading_corpus_kept_out_4", "grading_corpus_fresh_2", "grading_corpus_kept_out_5",
                    "grading_corpus_kept_out_6", "grading_corpus_kept_out_7", "grading_corpus_kept_out_8",
                    "grading_corpus_kept_out_9", "grading_corpus_kept_out_10",
                    "grading_corpus_kept_out_11", "grading_corpus_kept_out_12",
                    "grading_corpus_kept_out_13", "grading_corpus_kept_out_14",
                    "grading_corpus_kept_out_15", "grading_corpus_kept_out_16",
                    "grading_corpus_kept_out_17", "grading_corpus_kept_out_18",
                    "grading_corpus_kept_out_19", "grading_corpus_kept_out_20",
                    "grading_corpus_kept_out_21", "grading_corpus_kept_out_22", "grading_corpus_kept_out_23",
                    "grading_corpus_kept_out_24", "grading_corpus_kept_out_25", "grading_corpus_kept_out_26",
                    "grading_corpus_kept_out_27", "grading_corpus_kept_out_28", "grading_corpus_kept_out_29",
                    "grading_corpus_kept_out_30", "grading_corpus_kept_out_31", "grading_corpus_kept_out_32",
                    "grading_corpus_kept_out_33", "grading_corpus_kept_out_34",
                    "grading_corpus_kept_out_35", "grading_corpus_kept_out_36",
                    "grading_corpus_kept_out_37", "grading_corpus_kept_out_38",
                    "grading_corpus_kept_out_39", "grading_corpus_kept_out_40",
                    "grading_corpus_kept_out_41", "grading_corpus_kept_out_42",
                    "grading_corpus_kept_out_43", "grading_corpus_kept_out_44",
                    "grading_corpus_kept_out_45", "grading_corpus_kept_out_46", "grading_corpus_kept_out_47",
                    "grading_corpus_kept_out_48", "grading_corpus_kept_out_49", "grading_corpus_kept_out_50",
                    "grading_corpus_kept_out_51", "grading_corpus_kept_out_52", "grading_corpus_kept_out_56",
                    "grading_corpus_kept_out_58", "grading_corpus_kept_out_59", "grading_corpus_kept_out_60",
                    "grading_corpus_kept_out_61", "grading_corpus_kept_out_53", "grading_corpus_kept_out_54",
                    "grading_corpus_kept_out_55", "grading_corpus_kept_out_57")]
PRECISION_GOAL, COVERAGE_GOAL = 0.99, 0.90


@dataclass
class Tally:
    """Counts of one class: rows, decided, decided right, covered, agreeing, values checked and right."""

    rows: int = 0
    decided: int = 0
    right: int = 0
    covered: int = 0
    agree: int = 0
    valued: int = 0
    value_ok: int = 0

    def add(self, other: Tally) -> None:
        for name in vars(self):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def precision(self) -> float | None:
        return self.right / self.decided if self.decided else None

    @property
    def coverage(self) -> float:
        return self.covered / self.rows if self.rows else 0.0


def corpus_rows(corpus: Path) -> list[tuple[str, dict]]:
    """(kind, row) for every row of a corpus directory's open.jsonl and mcq.jsonl."""
    rows = []
    for kind in ("open", "mcq"):
        path = corpus / f"{kind}.jsonl"
        if path.exists():
            rows += [(kind, json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not rows:
        raise SystemExit(f"{corpus}: no open.jsonl or mcq.jsonl rows")
    return rows


def corpus_row(row_id: str, corpus: str | Path) -> tuple[Question, dict]:
    """A row of a corpus (a folder under tests/, or a path) by its id, and the question it answers."""
    folder = Path(corpus) if Path(corpus).is_absolute() else Path(__file__).resolve().parents[1] / "tests" / corpus
    for _, row in corpus_rows(folder):
        if row["id"] == row_id:
            return corpus_question(row), row
    raise KeyError(f"{row_id} is not a row of {folder}")


def corpus_question(row: dict) -> Question:
    """The question a row answers: a dataset question by id, or the perturbed item the row carries frozen in its
    `question` field (stem, choices, answer), so that a later change to the templates cannot change the row."""
    item = row.get("question")
    if item is None:
        return questions_by_id(dataset_of(row["question_id"]))[row["question_id"]]
    return Question(id=row["question_id"], dataset=item["dataset"], index=-1, stem=item["stem"],
                    choices=dict(item["choices"]), answer=item["answer"])


def score_row(kind: str, row: dict) -> Tally:
    """One row's contribution: decided or deferred, right or wrong, its value read exactly or not."""
    question = corpus_question(row)
    label = row["expected_verdict"]
    if kind == "open":
        grade = grade_open_answer(question, row["response"], row["finish_reason"])
        expected = row.get("expected_value")
        value_ok = expected is not None and grade.value is not None and math.isclose(
            grade.value.value, expected, rel_tol=1e-6, abs_tol=1e-9)
    else:
        grade = grade_choice(question, row["response"], row["finish_reason"])
        expected = row.get("expected_letter")
        value_ok = expected is not None and grade.letter == expected
    decided = grade.verdict != "judge"
    valued = decided and expected is not None
    return Tally(1, int(decided), int(decided and grade.verdict == label), int(decided or label == "judge"),
                 int(grade.verdict == label), int(valued), int(valued and value_ok))


def corpus_report(corpus: Path) -> tuple[dict[str, Tally], Tally]:
    """Tallies per class and overall for one corpus directory."""
    classes: dict[str, Tally] = defaultdict(Tally)
    for kind, row in corpus_rows(corpus):
        classes[row["class"]].add(score_row(kind, row))
    overall = Tally()
    for tally in classes.values():
        overall.add(tally)
    return dict(classes), overall


def _ratio(part: int, whole: int) -> str:
    return f"{part / whole:.1%} ({part}/{whole})" if whole else "–"


def print_report(corpus: Path) -> bool:
    """The table of one corpus; True when every class meets both targets."""
    classes, overall = corpus_report(corpus)
    print(f"\n{corpus.relative_to(ROOT) if corpus.is_relative_to(ROOT) else corpus}")
    print(f"{'class':<24} {'n':>4}  {'precision':>17}  {'coverage':>17}  {'agreement':>17}  {'extraction':>17}")
    for name, t in [*classes.items(), ("overall", overall)]:
        print(f"{name:<24} {t.rows:>4}  {_ratio(t.right, t.decided):>17}  {_ratio(t.covered, t.rows):>17}  "
              f"{_ratio(t.agree, t.rows):>17}  {_ratio(t.value_ok, t.valued):>17}")
    short = [name for name, t in classes.items()
             if (t.precision is not None and t.precision < PRECISION_GOAL) or t.coverage < COVERAGE_GOAL]
    print(f"goal: precision >= {PRECISION_GOAL:.0%} and coverage >= {COVERAGE_GOAL:.0%} in every class: "
          + ("met" if not short else f"NOT met ({', '.join(short)})"))
    return not short


def synthetic_responses(final_line: bool) -> list[tuple[object, str]]:
    responses = []
    for question in load_dataset("easy"):
        text = question.correct_text.rstrip(".")
        body = (f"Working through the problem step by step with the data given.\n\n"
                f"Putting the pieces together, the result is {text}.")
        responses.append((question, body + (f"\n\nFINAL ANSWER: {text}" if final_line else "")))
    return responses


def timed(responses) -> tuple[float, dict[str, int]]:
    counts: dict[str, int] = defaultdict(int)
    start = time.perf_counter()
    for question, response in responses:
        counts[grade_open_answer(question, response, "stop").verdict] += 1
    return time.perf_counter() - start, dict(counts)


def main(argv: list[str] | None = None) -> int:
    corpora = [Path(arg).resolve() for arg in (sys.argv[1:] if argv is None else argv)] or DEFAULT_CORPORA
    met = all([print_report(corpus) for corpus in corpora])
    timed(synthetic_responses(True)[:50])  # warm the regex caches
    print()
    for final_line in (True, False):
        responses = synthetic_responses(final_line)
        seconds, counts = timed(responses)
        label = "FINAL ANSWER line" if final_line else "heuristic reader"
        print(f"grading {len(responses)} Easy responses ({label}): {seconds:.3f} s "
              f"({'met' if seconds < 1 else 'NOT met'}: goal < 1 s); verdicts {counts}")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
