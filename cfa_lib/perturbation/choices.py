"""Answer choices for a perturbed question, rebuilt around its new correct value.

The new options must not give the answer away: distractors keep their original relative gaps, the
options stay sorted when the originals were, and each keeps its own written format.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal

import numpy as np

from cfa_lib.data import Question
from cfa_lib.perturbation.number_text import NumberText

CLOSE = 0.005  # no two options within 0.5 % of each other: one of them would be as right as the other


def rebuild_choices(
    question: Question,
    options: Mapping[str, NumberText],
    new_correct_number: float,
    rng: np.random.Generator,
    template: NumberText | None = None,
    pinned: Mapping[str, float] | None = None,
) -> tuple[dict[str, str], str]:
    """Choices for the new answer: each distractor keeps its relative gap |d - c| / |c| to the correct one,
    or, when `pinned` gives its number (a named mistake written on the new numbers), takes that number.

    The correct option goes to a seeded random letter, so a memorised letter is worth nothing. When the
    original options were sorted by value (as CFA options usually are), the rebuilt ones are sorted the same
    way and the key's letter follows from its rank (an out-of-order option would give it away); a distractor
    may move to the other side of the correct value (same relative gap, mirrored) so that the key lands at
    the drawn letter. No two options lie within CLOSE of each other (ValueError otherwise).
    Each option keeps its own format (currency, separators, decimals, %, trailing words such as
    " compounded semiannually."), or all use `template` (level 3, where the answer is an input).
    Decimals grow (up to +4) if rounding would merge options. An option without a number (a distractor
    "Unlimited.", absent from `options`) keeps its letter and text; the numeric options share the others.
    """
    correct = options[question.answer]
    letters = [letter for letter in question.choices if letter in options]
    numeric_distractors = [letter for letter in question.distractors if letter in options]
    wanted = int(rng.integers(len(letters)))
    pinned = pinned or {}
    ratios = {letter: pinned[letter] / new_correct_number if letter in pinned
              else options[letter].number / correct.number for letter in numeric_distractors}
    order = ordering([options[letter].number for letter in letters])
    ratios = _spread(ratios, order, wanted, len(letters), frozenset(pinned))
    new_numbers = {question.answer: new_correct_number} | {
        letter: new_correct_number * ratio for letter, ratio in ratios.items()
    }
    period = _trailing_period(list(question.choices.values()))
    group = any(options[letter].grouped for letter in letters)  # one option "$1,300.": every option groups

    def write(letter: str, extra: int) -> str:
        style = template or options[letter]
        decimals = (style.decimals if template is None else _level3_decimals(style)) + extra
        text = style.write(new_numbers[letter], decimals, keep_lead=template is None, group=group)
        if template is not None:
            text = text[: len(text) - len(style.suffix)] + style.unit
        text = text.rstrip()
        if period and not text.endswith("."):
            text += "."
        return text

    texts = _distinct_texts(new_numbers, write)
    return _placed(question, letters, numeric_distractors, letters[wanted], order, new_numbers, texts)


def _spread(ratios: Mapping[str, float], order: Order, wanted: int,
            count: int, pinned: frozenset[str] = frozenset()) -> dict[str, float]:
    """The distractors' ratios to the key, mirrored (same gap, other side) so that the key lands at rank
    `wanted` of an ordered set when that works, else at another rank; refused (ValueError) when every way
    leaves two options within CLOSE of each other (the key and a distractor, or two distractors), or closer
    than the original's closest two. A `pinned` distractor (a named mistake) never moves."""
    tries: list[dict[str, float]] = []
    if order and all(ratio > 0 for ratio in ratios.values()):
        for rank in [wanted, *(r for r in range(count) if r != wanted)]:
            below = rank if order == "ascending" else count - 1 - rank
            mirrored = _mirror(ratios, below, pinned)
            if mirrored is not None:
                tries.append(mirrored)
    tries.append(dict(ratios))
    # an original that itself prints two options closer than CLOSE (easy_3: $113,330 and $113,733) keeps its gaps
    limit = min(CLOSE, _closest([1.0, *ratios.values()]) * 0.99)
    for candidate in tries:
        if _closest([1.0, *candidate.values()]) >= limit:
            return candidate
    raise ValueError(f"rebuilt options would lie within {limit:.2%} of each other")


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


def _trailing_period(texts: Sequence[str]) -> bool:
    """Most options end with '.' ("$112,555."); the FinEval files drop it from the last option."""
    return sum(t.rstrip().endswith(".") for t in texts) * 2 > len(texts)


def _mirror(ratios: Mapping[str, float], below: int, pinned: frozenset[str] = frozenset()
            ) -> dict[str, float] | None:
    """Move distractors across the correct value (ratio r -> 2 - r) until `below` of them are under it; None
    when that needs a `pinned` one to move."""
    result = dict(ratios)
    movers = _movers(ratios, below)
    if movers is None or pinned & set(movers):
        return None
    for role in movers:
        result[role] = _mirrored(ratios[role])
    if len(set(result.values())) != len(result):
        return None
    return result


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
    letter; when the originals were sorted by their first number (one sign throughout), a distractor may be
    mirrored across the correct option (all its positions together, same gaps) so that the options stay
    sorted by their first number with the correct one at its new letter. Decimals grow (up to +4) if
    rounding would merge two options. An option without a number keeps its letter and text.
    """
    correct = options[question.answer]
    count = len(correct)
    letters = [letter for letter in question.choices if letter in options]
    numeric_distractors = [letter for letter in question.distractors if letter in options]
    correct_letter = letters[int(rng.integers(len(letters)))]
    ratios = {
        letter: [options[letter][i].number / correct[i].number for i in range(count)] for letter in numeric_distractors
    }
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
    return _placed(question, letters, numeric_distractors, correct_letter, order, firsts, texts)


def _level3_decimals(style: NumberText) -> int:
    """A level-3 answer is an input ("7%"); written as an option it gets at least two places ("7.00%")."""
    return max(style.decimals, 2 if style.percent else 0)
