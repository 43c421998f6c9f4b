"""Answer choices for a perturbed question, rebuilt around its new correct value.

The new options must not give the answer away (issue #32): distractors keep their original relative gaps, the
options stay sorted when the originals were, and then every option is written at the key's own grain (a round key
among round distractors, never the only round or the only odd option), inside the asked quantity's domain (no
correlation above 1, no price below what the stem allows: `Inside`), and never the only option of its sign when
the original's key was. What a memorizer recalls finds nothing: the key is never at the original's letter, never
the option nearest the remembered answer, and never the middle of an evenly spaced set (`_placements`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import combinations
from typing import Literal

import numpy as np

from cfa_lib.data import Question
from cfa_lib.perturbation.number_text import NumberText

CLOSE = 0.005  # no two options within 0.5 % of each other: one of them would be as right as the other
GRID_STEPS = 60  # how far (in steps of the key's grain) a distractor may be nudged to find a free place

Inside = Callable[[float], bool]
"""Whether a number, as the options write it, is a possible value of the asked quantity (a correlation within
[-1, 1], a price above the stem's minimum): the callers know the quantity (`level3`, `plan`)."""


def rebuild_choices(
    question: Question,
    options: Mapping[str, NumberText],
    new_correct_number: float,
    rng: np.random.Generator,
    template: NumberText | None = None,
    pinned: Mapping[str, float] | None = None,
    inside: Inside | None = None,
    remembered: float | None = None,
    rounded_key: bool = False,
) -> tuple[dict[str, str], str]:
    """Choices for the new answer: each distractor keeps its relative gap |d - c| / |c| to the correct one,
    or, when `pinned` gives its number (a named mistake written on the new numbers), takes that number.

    The key never keeps the original's letter (a model that remembers only "B" must miss): it goes to a letter
    drawn by the seeded generator among the others (`_placements`). When the original options were sorted by
    value (as CFA options usually are), the rebuilt ones are sorted the same way and the key's letter follows
    from its rank (an out-of-order option would give it away); distractors move to the other side of the
    correct value (same relative gap, mirrored) so that the key lands at the drawn letter. A key that was the
    only option of its sign keeps a distractor of its sign (`_sign_shared`). Every distractor not pinned is then
    written at the key's grain and inside `inside` (`_settled`), so neither roundness nor an impossible value
    points at the key. A placement is kept only when the option nearest `remembered` (what a memorizer of the
    original answers, on the options' scale: the original key at levels 1 and 2, the asked unknown's original
    value at level 3) is not the key, and the key is not the middle of an evenly spaced set (`evenly_spaced`).
    No two options lie within CLOSE of each other. With `rounded_key` (a template's `key_rounded`: the key is
    written rounded to its decimals, "€6" for 5.56) no distractor comes within CLOSE of the key as written either.
    ValueError when no placement keeps every rule: the caller
    draws again.
    Each option keeps its own format (currency, separators, %, trailing words such as " compounded
    semiannually.") with the key's decimals, or all use `template` (level 3, where the answer is an input).
    Decimals grow (up to +4) if rounding would merge options. An option without a number (a distractor
    "Unlimited.", absent from `options`) keeps its letter and text; the numeric options share the others.
    """
    correct = options[question.answer]
    letters = [letter for letter in question.choices if letter in options]
    numeric_distractors = [letter for letter in question.distractors if letter in options]
    pinned = pinned or {}
    ratios = {letter: pinned[letter] / new_correct_number if letter in pinned
              else options[letter].number / correct.number for letter in numeric_distractors}
    limit = _close_limit(ratios)
    ratios = _sign_shared(ratios, frozenset(pinned))
    order = ordering([options[letter].number for letter in letters])
    decimals = correct.decimals if template is None else _level3_decimals(template)
    new_numbers, correct_letter = _placements(question, letters, ratios, order, new_correct_number, decimals, limit,
                                              inside, rng, frozenset(pinned), remembered, rounded_key)
    period = _trailing_period(list(question.choices.values()))
    group = any(options[letter].grouped for letter in letters)  # one option "$1,300.": every option groups

    def write(letter: str, extra: int) -> str:
        style = template or options[letter]
        if (new_numbers[letter] > 0) != (style.number > 0):  # a distractor that took the key's sign, its "+$"
            style = correct
        text = style.write(new_numbers[letter], decimals + extra, keep_lead=template is None, group=group)
        if template is not None:
            text = text[: len(text) - len(style.suffix)] + style.unit
        text = text.rstrip()
        if period and not text.endswith("."):
            text += "."
        return text

    texts = _distinct_texts(new_numbers, write)
    return _placed(question, letters, numeric_distractors, correct_letter, order, new_numbers, texts)


def _placements(question: Question, letters: Sequence[str], ratios: Mapping[str, float], order: Order, key: float,
                decimals: int, limit: float, inside: Inside | None, rng: np.random.Generator, pinned: frozenset[str],
                remembered: float | None, rounded_key: bool = False) -> tuple[dict[str, float], str]:
    """The first placement of the distractors (every number, and the key's letter for an unordered set) that keeps
    every rule: the key's letter is not the original's, the option nearest `remembered` is not the key, the key is
    not the middle of an evenly spaced set (both judged on the key as written, `decimals` places), and the
    options settle at the key's grain (`_settled`). The key's letters are tried in a seeded order among the
    allowed ones, so it lands on each about equally often. ValueError when none does."""
    step = grain(key, decimals)
    shown = round(key, decimals)
    allowed = [letter for letter in letters if letter != question.answer]
    tried = False
    for letter in (allowed[int(i)] for i in rng.permutation(len(allowed))):
        for candidate in _spread(ratios, order, letters, question.answer, key, letter, pinned):
            for spaced in (candidate, *_stretched(candidate, pinned)):
                if _closest([1.0, *spaced.values()]) < limit:
                    continue
                tried = True
                try:
                    numbers = {question.answer: key} | _settled(key, {r: key * x for r, x in spaced.items()}, step,
                                                                limit, inside, rng, pinned,
                                                                shown if rounded_key else None)
                except ValueError:
                    continue
                placed = _key_letter(letters, order, numbers, question.answer) or letter
                written = numbers | {question.answer: shown}
                if placed == question.answer or evenly_spaced(shown, [v for r, v in written.items()
                                                                      if r != question.answer]):
                    continue
                if remembered is not None and nearest(written, remembered) == question.answer:
                    continue
                return numbers, placed
    if not tried:
        raise ValueError(f"rebuilt options would lie within {limit:.2%} of each other")
    raise ValueError("no placement of the distractors keeps the key off the original's letter, off the option "
                     "nearest the remembered answer and off the middle of evenly spaced options")


def _key_letter(letters: Sequence[str], order: Order, numbers: Mapping[str, float], key: str) -> str | None:
    """The key's letter in an ordered set (its rank among the sorted numbers); None for an unordered one."""
    if not order:
        return None
    roles = sorted(numbers, key=numbers.__getitem__, reverse=order == "descending")
    return letters[roles.index(key)]


SPACING = 1.5
"""The key between two distractors needs one gap at least SPACING times the other. Where the grain is coarse the
gaps are whole numbers of steps: 1:1 ("4 / 5 / 6") and 3:4 ("0.17 / 0.20 / 0.24") read as even at a glance, while
1:2 and 2:3 ("5 / 7 / 10") no longer place the key by symmetry; 1.5 is the smallest whole-step ratio that does
not. Judging two intervals equal is off by some 10-20 % (Weber's fraction), so a ratio this far from 1 is not
mistaken for even."""


SAME_RATIO = 1.1
"""Two distractors key/r1 and key*r2 are "key/r and key*r" when log r1 and log r2 differ by less than a tenth
("2 / 4 / 8", "4.3 / 16.6 / 61.2"): far apart on a linear scale, so SPACING does not see them, yet one r apart
on the ratio scale their writers used. A looser bound would call "1 / 2 / 5" symmetric, which nobody reads so."""


def evenly_spaced(key: float, distractors: Iterable[float]) -> bool:
    """The key lies between two distractors whose gaps to it differ by less than SPACING times, or that are key/r
    and key*r for one r (SAME_RATIO): a reader who picks the middle of a symmetric set finds the key without
    computing."""
    values = list(distractors)
    below, above = [v for v in values if v < key], [v for v in values if v > key]
    if not below or not above:
        return False
    low, high = max(below), min(above)
    gaps = sorted([key - low, high - key])
    if gaps[1] < SPACING * gaps[0] - 1e-9 * abs(key):  # 0.6 / 0.4 is 1.5 as written
        return True
    if low * key <= 0 or high * key <= 0:
        return False
    logs = sorted(abs(math.log(v / key)) for v in (low, high))
    return logs[1] < SAME_RATIO * logs[0]


def nearest(numbers: Mapping[str, float], remembered: float) -> str:
    """The role whose number lies nearest `remembered`: the option a memorizer who recalls that number picks."""
    return min(numbers, key=lambda role: abs(numbers[role] - remembered))


def _stretched(ratios: Mapping[str, float], pinned: frozenset[str]) -> list[dict[str, float]]:
    """When the key lies between two distractors, variants that widen the gap of one not pinned to 2 or 3 times
    the other's (same side), so that a key in the middle is not the centre of an even set; [] otherwise."""
    below = [r for r, x in ratios.items() if x < 1]
    above = [r for r, x in ratios.items() if x > 1]
    if not below or not above:
        return []
    low, high = max(below, key=ratios.__getitem__), min(above, key=ratios.__getitem__)
    variants = []
    for role, other, side in ((high, low, 1.0), (low, high, -1.0)):
        for factor in (2.0, 3.0):
            ratio = 1 + side * factor * abs(ratios[other] - 1)
            if role not in pinned and ratio > 0:
                variants.append(dict(ratios) | {role: ratio})
    return variants


def _close_limit(ratios: Mapping[str, float]) -> float:
    """How close two options may come: CLOSE, or a little under the original's closest two when the original
    itself prints two options closer than that (easy_3: $113,330 and $113,733 keep their gaps)."""
    return min(CLOSE, _closest([1.0, *ratios.values()]) * 0.99)


def _sign_shared(ratios: Mapping[str, float], pinned: frozenset[str] = frozenset()) -> dict[str, float]:
    """When every distractor has the other sign than the key (the original's key was its only positive option:
    easy_206's +x / -x / -3x), the distractor farthest from the key in size takes the key's sign (r -> -r), so
    "pick the increase", remembered from the original, no longer finds the key. A named mistake never moves,
    nor one whose flip would land on the key."""
    result = dict(ratios)
    movable = [role for role, ratio in ratios.items() if role not in pinned and abs(abs(ratio) - 1) > CLOSE]
    if len(ratios) < 2 or any(ratio > 0 for ratio in ratios.values()) or not movable:
        return result
    farthest = max(movable, key=lambda role: abs(abs(ratios[role]) - 1))
    result[farthest] = -ratios[farthest]
    return result


def _settled(key: float, distractors: Mapping[str, float], step: float, limit: float, inside: Inside | None,
             rng: np.random.Generator, pinned: frozenset[str] = frozenset(), shown: float | None = None
             ) -> dict[str, float]:
    """Every distractor not pinned moved to the nearest free number at the key's grain `step` (a multiple of it,
    not of ten times it: "$63,100" gets "$57,400", never "$57,364" nor "$57,000"), keeping its sign, at least
    `limit` from every other option and inside `inside`; one outside is first drawn between the key and the
    domain's edge on its own side. Nearest to the key first; ValueError when no place is free. `shown`: the key
    as written when that is rounded beyond CLOSE (`key_rounded`), kept clear as well."""
    settled = {role: distractors[role] for role in pinned if role in distractors}
    taken = [key, *([] if shown is None else [shown]), *settled.values()]
    for role in sorted((r for r in distractors if r not in pinned), key=lambda r: abs(distractors[r] - key)):
        target = distractors[role]
        if inside is not None and not inside(target):
            target = _drawn_inside(key, target, inside, rng)
        settled[role] = _on_grid(target, step, limit, taken, inside)
        taken.append(settled[role])
    return settled


def _drawn_inside(key: float, outside: float, inside: Inside, rng: np.random.Generator) -> float:
    """A number drawn between the key and the domain's edge on the side of `outside` (the edge found by bisection
    from the key, which lies inside): the distractor stays on its side, where the domain has room."""
    if not inside(key):
        return outside
    low, high = key, outside
    for _ in range(50):
        middle = (low + high) / 2
        low, high = (middle, high) if inside(middle) else (low, middle)
    return key + (low - key) * float(rng.uniform(0.3, 0.9))


def _on_grid(target: float, step: float, limit: float, taken: Sequence[float], inside: Inside | None) -> float:
    """The multiple of `step` nearest `target` that is not a multiple of 10 * step (the key's grain exactly),
    has `target`'s sign, lies at least `limit` from every number in `taken` and inside `inside`; one on
    `target`'s side of the key (`taken[0]`) first, so the placement `_placements` chose (and the key's letter
    with it) survives the nudge."""
    base = round(target / step)
    key = taken[0]

    def rank(units: int) -> tuple[bool, float, int]:
        return ((units * step - key) * (target - key) < 0, abs(units - target / step), units)

    for units in sorted(range(base - GRID_STEPS, base + GRID_STEPS + 1), key=rank):
        value = units * step
        if units % 10 == 0 or (value > 0) != (target > 0):
            continue
        if any(_closest([value, other]) < limit for other in taken):
            continue
        if inside is None or inside(value):
            return value
    raise ValueError(f"no free option at the key's grain ({step:g}) near {target:.6g}")


def _spread(ratios: Mapping[str, float], order: Order, letters: Sequence[str], key: str, value: float, letter: str,
            pinned: frozenset[str] = frozenset()) -> list[dict[str, float]]:
    """The distractors' ratios to the key (`value`, at role `key`), as drawn and with every subset of them mirrored
    (same relative gap, other side of the key: `_mirrored`; one that would land within CLOSE of another takes twice
    its gap). Only a distractor not `pinned` (a named mistake never moves) and of the key's sign moves, so signs
    stay. For an ordered set the variants that put the key at `letter` come first; for an unordered one the key
    is at `letter` anyway and the drawn gaps come first."""
    movable = [role for role, ratio in ratios.items() if role not in pinned and ratio > 0]
    variants: list[dict[str, float]] = []
    for size in range(len(movable) + 1):
        for subset in combinations(movable, size):
            candidate = dict(ratios)
            for role in subset:
                mirrored = _mirrored(ratios[role])
                if any(abs(mirrored - other) <= CLOSE * abs(other) for r, other in candidate.items() if r != role):
                    mirrored = 1 + 2 * (mirrored - 1)
                candidate[role] = mirrored
            if all(candidate[role] > 0 for role in subset) and candidate not in variants:
                variants.append(candidate)
    if order:
        variants.sort(key=lambda c: _key_letter(letters, order, {key: value} | {r: value * x for r, x in c.items()},
                                                key) != letter)
    return variants


def _closest(values: Sequence[float]) -> float:
    """The smallest relative gap between two of `values`."""
    return min((abs(a - b) / max(abs(a), abs(b), 1e-300) for i, a in enumerate(values) for b in values[i + 1:]),
               default=float("inf"))


def _distinct_texts(roles: Iterable[str], write: Callable[[str, int], str]) -> dict[str, str]:
    """Every role's option text, with up to 4 more decimals than written if rounding would merge two."""
    roles = list(roles)
    for extra in range(5):
        texts = {role: write(role, extra) for role in roles}
        if len(set(texts.values())) == len(texts):
            return texts
    raise ValueError("rebuilt options coincide after rounding")


def _placed(question: Question, letters: Sequence[str], distractors: Sequence[str], correct_letter: str,
            order: Order, sort_keys: Mapping[str, float],
            texts: Mapping[str, str]) -> tuple[dict[str, str], str]:
    """The option texts at their letters and the key's letter: sorted like the originals when they were (the
    key's letter follows from its rank), else the key at `correct_letter` and the distractors in the others."""
    if order and len(set(sort_keys.values())) == len(sort_keys):
        roles = sorted(sort_keys, key=sort_keys.__getitem__, reverse=order == "descending")
        choices = {letter: texts[role] for letter, role in zip(letters, roles, strict=True)}
        return _with_unnumbered(question, choices), letters[roles.index(question.answer)]
    if order:
        raise ValueError("rebuilt options tie: the original's order cannot be kept")
    free = [letter for letter in letters if letter != correct_letter]
    choices = {correct_letter: texts[question.answer]} | dict(zip(free, (texts[d] for d in distractors), strict=True))
    return _with_unnumbered(question, choices), correct_letter


def _with_unnumbered(question: Question, rebuilt: Mapping[str, str]) -> dict[str, str]:
    """All options in the question's letter order: the rebuilt numeric ones, the others as written."""
    return {letter: rebuilt.get(letter, text) for letter, text in question.choices.items()}


Order = Literal["ascending", "descending", None]


def ordering(values: Sequence[float]) -> Order:
    """The order rule of option values: strictly ascending, strictly descending, or none (also for fewer than
    two values). The rebuilt options keep the original's; `separation` checks that they did."""
    if len(values) < 2:
        return None
    if all(a < b for a, b in zip(values, values[1:], strict=False)):
        return "ascending"
    if all(a > b for a, b in zip(values, values[1:], strict=False)):
        return "descending"
    return None


def grain(number: float, decimals: int) -> float:
    """The rounding step `number` shows when written with `decimals` places: the largest power of ten it is a
    multiple of ("63,100" -> 100, "4.00" -> 1, "0.020" -> 0.01, "3.44" -> 0.01). A reader sees it at a glance:
    an option at another grain than the others stands out."""
    exponent = -decimals
    units = round(abs(number) * 10**decimals)
    while units and units % 10 == 0:
        units //= 10
        exponent += 1
    return 10.0**exponent


def _trailing_period(texts: Sequence[str]) -> bool:
    """Most options end with '.' ("$112,555."); the FinEval files drop it from the last option."""
    return sum(t.rstrip().endswith(".") for t in texts) * 2 > len(texts)


def _movers(ratios: Mapping[str, float], below: int) -> list[str] | None:
    """The distractors to move across the correct value so that `below` of them are under it."""
    under = [role for role, ratio in ratios.items() if ratio < 1]
    over = [role for role, ratio in ratios.items() if ratio > 1]
    if len(under) + len(over) != len(ratios):
        return None
    return under[below:] if len(under) > below else over[: below - len(under)]


def _mirrored(ratio: float) -> float:
    """The same relative gap on the other side of the correct value: r -> 2 - r (or 1/r if that is <= 0)."""
    mirrored = 2 - ratio
    return mirrored if mirrored > 0 else 1 / ratio


def rebuild_tuple_choices(
    question: Question,
    options: Mapping[str, Sequence[NumberText]],
    new_correct_numbers: Sequence[float],
    rng: np.random.Generator,
) -> tuple[dict[str, str], str]:
    """`rebuild_choices` for options carrying several numbers ("¥X and ¥Y."), position by position.

    Each distractor keeps, at every position, its relative gap to the correct option's number there; each
    number keeps its own format and the words around it stay. The correct option goes to a seeded random
    letter other than the original's (ValueError when the order rule puts it back there); when the originals
    were sorted by their first number (one sign throughout), a distractor may be mirrored across the correct
    option (all its positions together, same gaps) so that the options stay
    sorted by their first number with the correct one at its new letter. Decimals grow (up to +4) if
    rounding would merge two options. An option without a number keeps its letter and text.
    """
    correct = options[question.answer]
    count = len(correct)
    letters = [letter for letter in question.choices if letter in options]
    numeric_distractors = [letter for letter in question.distractors if letter in options]
    allowed = [letter for letter in letters if letter != question.answer]  # never the original's letter
    correct_letter = allowed[int(rng.integers(len(allowed)))]
    ratios = _one_mistake_each({
        letter: [options[letter][i].number / correct[i].number for i in range(count)] for letter in numeric_distractors
    })
    order = ordering([options[letter][0].number for letter in letters])
    if order and all(ratio > 0 for row in ratios.values() for ratio in row):
        rank = letters.index(correct_letter)
        below = rank if order == "ascending" else len(letters) - 1 - rank
        movers = _movers({letter: row[0] for letter, row in ratios.items()}, below)
        if movers is not None:
            mirrored = {
                letter: [_mirrored(r) for r in row] if letter in movers else row for letter, row in ratios.items()
            }
            if len({row[0] for row in mirrored.values()}) == len(mirrored):
                ratios = mirrored
    new_numbers = {question.answer: list(new_correct_numbers)} | {
        letter: [new_correct_numbers[i] * row[i] for i in range(count)] for letter, row in ratios.items()
    }
    groups = [any(options[letter][i].grouped for letter in letters) for i in range(count)]

    def write(letter: str, extra: int) -> str:
        text = question.choices[letter]
        pieces, done = [], 0
        for i, style in enumerate(options[letter]):
            start = len(style.lead)
            written = style.write(new_numbers[letter][i], style.decimals + extra, keep_lead=False, group=groups[i])
            pieces += [text[done:start], written[: len(written) - len(style.suffix)]]
            done = len(text) - len(style.suffix)
        return "".join(pieces) + text[done:]

    texts = _distinct_texts(new_numbers, write)
    firsts = {role: numbers[0] for role, numbers in new_numbers.items()}
    choices, letter = _placed(question, letters, numeric_distractors, correct_letter, order, firsts, texts)
    if letter == question.answer:
        raise ValueError(f"the key stays at the original's letter {letter}: no mirroring moves it")
    return choices, letter


def _one_mistake_each(ratios: dict[str, list[float]]) -> dict[str, list[float]]:
    """Two distractors each wrong at another position (easy_193) leave the key the one option sharing a number
    with both others, a test-wise pick (review rounds 9, 10): the first distractor then makes both mistakes."""
    if len(ratios) != 2:
        return ratios
    (first, a), (second, b) = ratios.items()
    wrong_a, wrong_b = ({i for i, r in enumerate(row) if abs(r - 1) > 1e-9} for row in (a, b))
    if len(wrong_a) != 1 or len(wrong_b) != 1 or wrong_a == wrong_b:
        return ratios
    return {first: [b[i] if i in wrong_b else r for i, r in enumerate(a)], second: b}


def _level3_decimals(style: NumberText) -> int:
    """A level-3 answer is an input ("7%"); written as an option it gets at least two places ("7.00%")."""
    return max(style.decimals, 2 if style.percent else 0)
