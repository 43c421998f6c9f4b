"""Can an item tell a memorizer from a reasoner? What a generated item gives away about the original's key.

An item a model answers from memory of the original question inflates robust accuracy and shrinks the
memorization gap. These are the measures of issue #32, one predicate per way an item can fail, each on one
record and its original question, and `separation` counting them over every valid item:

* `key_kept`: a numeric key within 0.5 % of the original's (a decision: `record.flipped` is False);
* `answer_in_original`: a level-3 key that equals a number of the original stem or options;
* `order_broken`: options whose order rule (ascending, descending, none) differs from the original's, the key
  the one out of place;
* `close_options`: two numeric options within 0.5 % of each other;
* `separates`: a valid item whose decision flipped or whose numeric key a memorized answer misses;
* `original_key_passes`: what a memorizer answers (the original's key; at level 3 also the asked unknown's
  original value) is graded correct against the item's own options (`grade_number`: the key ± min(2 %, half the
  gap to the nearest option)).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from cfa_lib.answers import Number, gold_number_from_option, grade_number, numeric_key
from cfa_lib.answers.numbers import relative_difference
from cfa_lib.data import Question
from cfa_lib.perturbation.choices import ordering
from cfa_lib.perturbation.number_text import find_numbers
from cfa_lib.perturbation.types import PerturbationRecord

TOLERANCE = 0.005  # the grading tolerance: two numbers this close are one answer


def option_values(choices: Mapping[str, str]) -> list[float]:
    """The first number of every option that has one, in letter order (as the order rule reads them)."""
    return [found[0].number for text in choices.values() if (found := find_numbers(text))]


def order_broken(question: Question, record: PerturbationRecord) -> bool:
    """The original's options follow an order rule and the item's do not follow the same one."""
    rule = ordering(option_values(question.choices))
    return rule is not None and ordering(option_values(record.choices)) != rule


def close_options(record: PerturbationRecord, tolerance: float = TOLERANCE) -> bool:
    """Two options carry the same count of numbers and every one of them within `tolerance` of the other's."""
    rows = [[n.number for n in find_numbers(text)] for text in record.choices.values()]
    rows = [row for row in rows if row]
    return any(len(a) == len(b) and all(relative_difference(x, y) <= tolerance for x, y in zip(a, b, strict=True))
               for i, a in enumerate(rows) for b in rows[i + 1:])


def key_kept(record: PerturbationRecord, tolerance: float = TOLERANCE) -> bool:
    """A numeric item's key within `tolerance` of the original key (level 3: the original's answer)."""
    new, old = record.new_answer_value, record.original_answer_value
    return new is not None and old is not None and relative_difference(new, old) <= tolerance


def memorized_answers(question: Question, record: PerturbationRecord) -> list[Number]:
    """What a model that remembers the original question answers: the original key's number; at level 3 also
    the asked unknown's value as the original stem writes it (the level-3 stem asks for that input)."""
    answers = [gold_number_from_option(question.choices.get(question.answer))]
    if record.level == 3 and record.changed:
        span = next((p.get("span") for p in record.parameters if p.get("name") == record.changed[0]), None)
        answers.append(gold_number_from_option(span))
    return [answer for answer in answers if answer is not None]


def original_key_passes(question: Question, record: PerturbationRecord) -> bool:
    """A memorized answer (`memorized_answers`) lies in the acceptance window of the item's key: the item cannot
    tell a model that remembers the original from one that computes. False for an item graded by letter."""
    if record.correct_letter is None or record.correct_letter not in record.choices:
        return False
    key = numeric_key(record.choices, record.correct_letter)
    if key is None:
        return False
    distractors = list(key.distractors.values())
    return any(grade_number(answer, key.gold, distractors).match for answer in memorized_answers(question, record))


def separates(question: Question, record: PerturbationRecord) -> bool | None:
    """Whether a valid item tells a memorizer from a reasoner: a decision whose key flipped, or a numeric key a
    memorized answer misses (`original_key_passes` is False); None when not valid or graded by letter only."""
    if not record.valid:
        return None
    if record.flipped is not None:
        return record.flipped
    if record.correct_letter is None or numeric_key(record.choices, record.correct_letter) is None:
        return None
    return not original_key_passes(question, record)


def original_numbers(question: Question) -> list[float]:
    """Every number written in the original stem and options, as written."""
    return [n.number for text in (question.stem, *question.choices.values()) for n in find_numbers(text)]


def answer_in_original(question: Question, record: PerturbationRecord, tolerance: float = TOLERANCE) -> bool:
    """The item's keyed option states a number written in the original question (within `tolerance`)."""
    if record.correct_letter is None:
        return False
    keyed = find_numbers(record.choices.get(record.correct_letter, ""))
    numbers = original_numbers(question)
    return any(relative_difference(k.number, n) <= tolerance for k in keyed for n in numbers)


@dataclass
class Separation:
    """The counts of issue #32 over a set of valid items."""

    valid: Counter[tuple[str, int]] = field(default_factory=Counter)  # (dataset, level)
    valid_at_seed_0: Counter[tuple[str, int]] = field(default_factory=Counter)
    numeric: int = 0
    numeric_key_kept: int = 0
    original_key_passes: Counter[int] = field(default_factory=Counter)  # by level: a memorized answer graded correct
    decisions: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))  # id -> flip/keep
    level3_stems: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # id -> stem per seed
    level3: int = 0
    level3_in_original: int = 0
    ordered_originals: int = 0  # numeric items whose original follows an order rule
    order_broken: Counter[str] = field(default_factory=Counter)  # by the original's rule
    close: int = 0
    same_letter: int = 0  # numeric items keyed at the original's letter (a third of them by chance, three options)

    def add(self, dataset: str, seed: int, question: Question, record: PerturbationRecord) -> None:
        """Count one valid item."""
        self.valid[dataset, record.level] += 1
        self.valid_at_seed_0[dataset, record.level] += seed == 0
        if record.flipped is not None:
            self.decisions[record.question_id]["flipped" if record.flipped else "kept"] += 1
            return
        self.numeric += 1
        self.numeric_key_kept += key_kept(record)
        self.original_key_passes[record.level] += original_key_passes(question, record)
        rule = ordering(option_values(question.choices))
        self.ordered_originals += rule is not None
        if order_broken(question, record):
            self.order_broken[str(rule)] += 1
        self.close += close_options(record)
        self.same_letter += record.correct_letter == question.answer
        if record.level == 3:
            self.level3 += 1
            self.level3_stems[record.question_id].append(record.question or "")
            self.level3_in_original += answer_in_original(question, record)

    @property
    def flipped(self) -> int:
        return sum(c["flipped"] for c in self.decisions.values())

    @property
    def decision_items(self) -> int:
        return sum(c.total() for c in self.decisions.values())

    @property
    def one_stem(self) -> list[str]:
        """Level-3 questions valid at two seeds or more whose stem is the same at every valid seed."""
        return sorted(qid for qid, stems in self.level3_stems.items() if len(stems) > 1 and len(set(stems)) == 1)


def separation(items: Iterable[tuple[str, int, Question, PerturbationRecord]]) -> Separation:
    """The counts over (dataset, seed, original question, record) for every record; invalid ones skipped."""
    result = Separation()
    for dataset, seed, question, record in items:
        if record.valid:
            result.add(dataset, seed, question, record)
    return result
