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
  gap to the nearest option));
* `nearest_is_key`: the option nearest what a memorizer recalls is the key (a memorizer who picks the closest
  option lands on it): at levels 1 and 2 the original key's number (easy_* with original key 263 keyed 692 beside
  789 and 861), at level 3 the asked unknown's original value (challenge_87 remembered 9.70, keyed 8.90 beside
  13.24 and 14.68);
* `letter_kept`: a numeric item keyed at the original's letter (a model that remembers only "B" is right);
* `memory_finds_key`: any of the three, the one rejection rule of a draw;
* `evenly_spaced_key`: the key is the middle of an evenly spaced set ("4 / 5 / 6"), found by symmetry;
* `grain_singles_out_key`: the key is written at a grain (its rounding step: 63,100 at 100, 4.00 % at 1) no
  distractor shares (the only round option, or the only odd one);
* `sign_singles_out_key`: the key is the only option of its sign in the original and in the item alike.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from cfa_lib.answers import Number, gold_number_from_option, grade_number, numeric_key
from cfa_lib.answers.numbers import aligned_values, relative_difference
from cfa_lib.data import Question
from cfa_lib.perturbation.choices import evenly_spaced, grain, ordering
from cfa_lib.perturbation.number_text import NumberText, find_numbers
from cfa_lib.perturbation.types import PerturbationRecord

TOLERANCE = 0.005  # the grading tolerance: two numbers this close are one answer


def first_numbers(choices: Mapping[str, str]) -> dict[str, NumberText]:
    """The first number of every option that has one, by letter in letter order: what the order, grain, sign
    and spacing rules read of an option."""
    return {letter: found[0] for letter, text in choices.items() if (found := find_numbers(text))}


def option_values(choices: Mapping[str, str]) -> list[float]:
    """The first number of every option that has one, in letter order (as the order rule reads them)."""
    return [found.number for found in first_numbers(choices).values()]


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


def nearest_is_key(question: Question, record: PerturbationRecord) -> bool:
    """The item's option nearest what a memorizer recalls (on one scale) is its key: a model that remembers the
    original and picks the closest option is graded correct. What it recalls is the number it would answer: at
    levels 1 and 2 the original key's, at level 3 the asked unknown's original value (the original key is an
    input there). A decision keeps its option texts and is judged by its flip instead. `choices.nearest` applies
    the same rule while the options are built."""
    if record.flipped is not None or record.correct_letter is None or record.correct_letter not in record.choices:
        return False
    key = numeric_key(record.choices, record.correct_letter)
    answers = memorized_answers(question, record)
    remembered = answers[1:] if record.level == 3 else answers[:1]
    if key is None or not remembered:
        return False
    options = {record.correct_letter: key.gold} | {k: v for k, v in key.distractors.items() if v is not None}

    def distance(option: Number) -> float:
        x, reference = aligned_values(remembered[0], option)
        return abs(x - reference)

    return min(options, key=lambda letter: distance(options[letter])) == record.correct_letter


def letter_kept(question: Question, record: PerturbationRecord) -> bool:
    """A numeric item (not a decision, whose key stays about half the time by design) keyed at the original's
    letter: a model that remembers only the letter is right."""
    return record.flipped is None and record.correct_letter == question.answer


def memory_finds_key(question: Question, record: PerturbationRecord) -> bool:
    """The one memorizer rule of a draw: a memorized answer is graded correct (`original_key_passes`), its
    nearest option is the key (`nearest_is_key`) or the key keeps the original's letter (`letter_kept`). A draw
    for which this holds is drawn again."""
    return (original_key_passes(question, record) or nearest_is_key(question, record)
            or letter_kept(question, record))


def evenly_spaced_key(record: PerturbationRecord) -> bool:
    """The key is the middle of an evenly spaced option set (`choices.evenly_spaced`: "4 / 5 / 6",
    "0.17 / 0.25 / 0.33", or key/r and key*r), so symmetry points at it without computing."""
    values = {letter: found.number for letter, found in first_numbers(record.choices).items()}
    key = values.pop(record.correct_letter or "", None)
    return key is not None and record.flipped is None and evenly_spaced(key, values.values())


def grain_singles_out_key(record: PerturbationRecord) -> bool:
    """The key's rounding step as written ("$63,100": 100; "4.00%": 1) is shared by no numeric distractor, so
    the key is the only round option (or the only odd one) and points at itself without computing."""
    grains = {letter: grain(found.number, found.decimals) for letter, found in first_numbers(record.choices).items()}
    key = grains.pop(record.correct_letter or "", None)
    return key is not None and bool(grains) and key not in grains.values()


def _sign_unique(values: Mapping[str, float], letter: str) -> bool:
    return letter in values and sum((v > 0) == (values[letter] > 0) for v in values.values()) == 1 < len(values)


def sign_singles_out_key(question: Question, record: PerturbationRecord) -> bool:
    """The key is the only positive (or only negative) option both in the original and in the item: "pick the
    increase" answers from memory (easy_206: +x / -x / -3x before and after)."""
    def first(choices: Mapping[str, str]) -> dict[str, float]:
        return {letter: found.number for letter, found in first_numbers(choices).items()}

    return (_sign_unique(first(question.choices), question.answer)
            and _sign_unique(first(record.choices), record.correct_letter or ""))


def separates(question: Question, record: PerturbationRecord) -> bool | None:
    """Whether a valid item tells a memorizer from a reasoner: a decision whose key flipped, or a numeric key a
    memorized answer misses (`original_key_passes` is False); None when not valid or graded by letter only."""
    if not record.valid:
        return None
    if record.flipped is not None:
        return record.flipped
    if record.correct_letter is None or numeric_key(record.choices, record.correct_letter) is None:
        return None
    return not memory_finds_key(question, record)


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
    nearest_is_key: Counter[int] = field(default_factory=Counter)  # by level: memorizer's nearest option is the key
    grain_singles_out_key: Counter[int] = field(default_factory=Counter)  # by level
    sign_singles_out_key: int = 0
    same_letter: int = 0  # numeric items keyed at the original's letter (a third of them by chance, three options)
    evenly_spaced_key: int = 0  # numeric items whose key is the middle of an evenly spaced set

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
        self.nearest_is_key[record.level] += nearest_is_key(question, record)
        self.grain_singles_out_key[record.level] += grain_singles_out_key(record)
        self.sign_singles_out_key += sign_singles_out_key(question, record)
        rule = ordering(option_values(question.choices))
        self.ordered_originals += rule is not None
        if order_broken(question, record):
            self.order_broken[str(rule)] += 1
        self.close += close_options(record)
        self.same_letter += letter_kept(question, record)
        self.evenly_spaced_key += evenly_spaced_key(record)
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
