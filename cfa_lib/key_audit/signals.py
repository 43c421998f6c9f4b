"""Signals that point at a wrong answer key, and the ranked list of questions to review (issue #35).

A key is suspect when evidence independent of it lands elsewhere:

* `models_agree`: both of the study's models (gpt-4o-mini and gpt-5-mini) choose the same other option in the
  option-bias runs (MMLU-Redux's first flag: strong models converge on another answer); the evidence counts how
  many of their recorded answers (the counterfactual run's originals, and the open answers whose value falls on one
  option, too) name it;
* `computation`: the reviewed census of the counterfactual templates found that the textbook computation does
  not give the key, or that the question's own data contradict it (`datasets/templates/*_without_template`);
* `missing_material`: the question needs material it does not contain (another question, an exhibit, a
  figure), by the census or by its words ("the same information as in Question 8", "Exhibit 2");
* `negative_discrimination`: the stronger model (gpt-5-mini) misses the key in every run while the weaker one
  finds it (the item statistic of IRT in its two-model form: a weak signal alone, counted with the others).

`candidates` ranks the questions by how many signals they carry, strongest first; each names its evidence so a
reviewer sees why it was flagged. The review itself is `cfa_lib.key_audit.records`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

from cfa_lib.answers.key import grade_number, option_value
from cfa_lib.answers.numbers import Number
from cfa_lib.data import Question, load_dataset
from cfa_lib.paths import DATASETS_DIR, REFERENCE_DIR

SIGNALS = {
    "models_agree": "both of the study's models choose the same other option, with the options",
    "computation": "the textbook computation, or the question's own data, does not give the key",
    "missing_material": "the question needs material it does not contain (another question, an exhibit)",
    "negative_discrimination": "the stronger model misses the key in every run while the weaker one finds it",
}
STRONGER, WEAKER = "gpt-5-mini", "gpt-4o-mini"
_CENSUS_SIGNAL = {"key disagrees": "computation", "source contradicts": "computation",
                  "inputs elsewhere": "missing_material"}
_MISSING = re.compile(r"(?i)\b(?:same (?:information|data) as in question \d+|(?:in|from|see) (?:the )?question \d+|"
                      r"(?:shown|given|presented) in (?:the )?(?:figure|graph|chart)\b)")
_EXHIBIT = re.compile(r"(?i)\bexhibit \d+\b")


@dataclass
class Candidate:
    """A question flagged for review, with the evidence behind each signal."""

    question: Question
    signals: dict[str, str] = field(default_factory=dict)
    pointed: str | None = None  # the option the models agree on, if they do

    @property
    def strength(self) -> tuple[int, int]:
        """Rank: how many signals, the model agreement first (the one that names a corrected letter)."""
        return (len(self.signals), int("models_agree" in self.signals))


def _letter_of_value(question: Question, value: float | None) -> str | None:
    """The one option whose number an open answer's value falls on (2 % and half the gap, as the grader's
    window), or None."""
    if value is None or pd.isna(value):
        return None
    numbers = {letter: option_value(text) for letter, text in question.choices.items()}
    if any(n is None for n in numbers.values()):
        return None
    hits = [letter for letter, n in numbers.items()
            if grade_number(Number(float(value), n.unit), n, [o for k, o in numbers.items() if k != letter],
                            rel_tol=0.02).match]
    return hits[0] if len(hits) == 1 else None


def recorded_answers(dataset: str) -> dict[str, dict[str, list[tuple[str, str | None]]]]:
    """`{question id: {model: [(condition, letter)]}}` from the study's reference runs of `dataset`: each Format A
    letter ("A"), each original question of the counterfactual run ("original"), each Format B value that falls on
    one option ("B")."""
    from cfa_lib.experiments.registry import load_results
    from cfa_lib.report.items_frame import items_frame

    # the runs as graded against the dataset's keys: the audit's input, never its output
    frame = items_frame([load_results(path, keys="original") for path in sorted(REFERENCE_DIR.glob("*.json"))])
    frame = frame[(frame["dataset"] == dataset) & frame["condition"].isin(["A", "B", "original"])
                  & (frame["status"] != "excluded")]
    questions = {q.id: q for q in load_dataset(dataset)}
    answers: dict[str, dict[str, list[tuple[str, str | None]]]] = defaultdict(lambda: defaultdict(list))
    for row in frame.itertuples():
        question = questions.get(row.question_id)
        if question is None:
            continue
        if row.condition == "B":
            letter = _letter_of_value(question, row.value) if isinstance(row.value, float | int) else None
        else:
            letter = row.value if isinstance(row.value, str) and row.value in question.choices else None
        if row.condition != "B" or letter is not None:
            answers[row.question_id][row.model].append((row.condition, letter))
    return answers


def _missing(stem: str) -> str:
    """Words of the stem that refer to material it does not hold: another question, a figure, or an exhibit
    named once (an exhibit the stem holds is named again as its heading, '|Exhibit 1|')."""
    if found := _MISSING.search(stem):
        return found[0]
    exhibits = [m[0].lower() for m in _EXHIBIT.finditer(stem)]
    return next((name for name in exhibits if exhibits.count(name) == 1), "")


def _census(dataset: str) -> dict[str, tuple[str, str]]:
    from cfa_lib.perturbation.census import read_reasons

    path = DATASETS_DIR / "templates" / f"{dataset}_without_template.jsonl"
    return {qid: (_CENSUS_SIGNAL[item["category"]], item["reason"])
            for qid, item in read_reasons(path, categorised=True).items() if item["category"] in _CENSUS_SIGNAL}


def candidates(dataset: str, questions: Iterable[Question] | None = None) -> list[Candidate]:
    """Every question of `dataset` that carries at least one signal, strongest first (then in dataset order)."""
    answers = recorded_answers(dataset)
    census = _census(dataset)
    found = []
    for question in questions if questions is not None else load_dataset(dataset):
        candidate = Candidate(question)
        by_model = {model: [letter for _, letter in found] for model, found in answers.get(question.id, {}).items()}
        format_a = [letter for found in answers.get(question.id, {}).values() for c, letter in found if c == "A"]
        if len(format_a) >= 2 and len(set(format_a)) == 1 and None not in format_a and format_a[0] != question.answer:
            pointed = format_a[0]
            letters = [letter for model_letters in by_model.values() for letter in model_letters]
            candidate.pointed = pointed
            candidate.signals["models_agree"] = (f"{' and '.join(sorted(by_model))} both answer {pointed} with the "
                                                 f"options; {letters.count(pointed)} of their {len(letters)} recorded "
                                                 f"answers name {pointed}")
        if question.id in census:
            signal, reason = census[question.id]
            candidate.signals[signal] = reason
        if "missing_material" not in candidate.signals and (words := _missing(question.stem)):
            candidate.signals["missing_material"] = f"the stem refers to material it does not contain: '{words}'"
        strong, weak = by_model.get(STRONGER, []), by_model.get(WEAKER, [])
        if strong and weak and all(letter != question.answer for letter in strong) \
                and all(letter == question.answer for letter in weak):
            candidate.signals["negative_discrimination"] = (f"{STRONGER} misses the key in all {len(strong)} runs, "
                                                            f"{WEAKER} finds it in all {len(weak)}")
        if candidate.signals:
            found.append(candidate)
    return sorted(found, key=lambda c: (-c.strength[0], -c.strength[1], c.question.index))
