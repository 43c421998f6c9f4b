"""Answer choices for a perturbed question, rebuilt around its new correct value.

The new options must not give the answer away (issue #32): distractors keep their original relative gaps, the
options stay sorted when the originals were, and then every option is written at the key's own grain (a round key
among round distractors, never the only round or the only odd option), inside the asked quantity's domain (no
correlation above 1, no price below what the stem allows: `Inside`), and never the only option of its sign when
the original's key was.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
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
) -> tuple[dict[str, str], str]:
    """Choices for the new answer: each distractor keeps its relative gap |d - c| / |c| to the correct one,
    or, when `pinned` gives its number (a named mistake written on the new numbers), takes that number.

    The correct option goes to a seeded random letter, so a memorised letter is worth nothing. When the
    original options were sorted by value (as CFA options usually are), the rebuilt ones are sorted the same
    way and the key's letter follows from its rank (an out-of-order option would give it away); a distractor
    may move to the other side of the correct value (same relative gap, mirrored) so that the key lands at
    the drawn letter. A key that was the only option of its sign keeps a distractor of its sign
    (`_sign_shared`). Every distractor not pinned is then written at the key's grain and inside `inside`
    (`_settled`), so neither roundness nor an impossible value points at the key. No two options lie within
    CLOSE of each other (ValueError otherwise).
    Each option keeps its own format (currency, separators, %, trailing words such as " compounded
    semiannually.") with the key's decimals, or all use `template` (level 3, where the answer is an input).
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
    limit = _close_limit(ratios)
    ratios = _sign_shared(ratios, frozenset(pinned))
    order = ordering([options[letter].number for letter in letters])
    ratios = _spread(ratios, order, wanted, len(letters), frozenset(pinned))
    decimals = correct.decimals if template is None else _level3_decimals(template)
    step = grain(new_correct_number, decimals)
    distractors = {letter: new_correct_number * ratio for letter, ratio in ratios.items()}
    new_numbers = {question.answer: new_correct_number} | _settled(
        new_correct_number, distractors, step, limit, inside, rng, frozenset(pinned))
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
    return _placed(question, letters, numeric_distractors, letters[wanted], order, new_numbers, texts)


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
             rng: np.random.Generator, pinned: frozenset[str] = frozenset()) -> dict[str, float]:
    """Every distractor not pinned moved to the nearest free number at the key's grain `step` (a multiple of it,
    not of ten times it: "$63,100" gets "$57,400", never "$57,364" nor "$57,000"), keeping its sign, at least
    `limit` from every other option and inside `inside`; one outside is first drawn between the key and the
    domain's edge on its own side. Nearest to the key first; ValueError when no place is free."""
    settled = {role: distractors[role] for role in pinned if role in distractors}
    taken = [key, *settled.values()]
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
    has `target`'s sign, lies at least `limit` from every number in `taken` and inside `inside`."""
    base = round(target / step)
    for units in sorted(range(base - GRID_STEPS, base + GRID_STEPS + 1), key=lambda u: (abs(u - target / step), u)):
        value = units * step
        if units % 10 == 0 or (value > 0) != (target > 0):
            continue
        if any(_closest([value, other]) < limit for other in taken):
            continue
        if inside is None or inside(value):
            return value
    raise ValueError(f"no free option at the key's grain ({step:g}) near {target:.6g}")


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
    limit = _close_limit(ratios)
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
