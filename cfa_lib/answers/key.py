"""Numeric grading shared by every experiment.

A numeric answer is right when it lies in the acceptance window: gold ± min(tolerance × |gold|, half the
distance from the gold to the nearest other option's number). CFA options are often only a few percent
apart (easy_3: $112,555 / $113,330 / $113,733; easy_566: par 100 is 1.3 % from the key 101.36), so a 2 %
tolerance alone would accept an answer that really picked a distractor or echoed an input. A value on the
window's edge (half the gold's gap to the nearest distractor away from the gold) is not correct.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass

from cfa_lib.answers.numbers import (
    PERCENT,
    REL_TOL_SLACK,
    Number,
    aligned_values,
    extract_numbers_in,
    numbers_in,
    relative_error,
)

__all__ = ["NumericGrade", "NumericKey", "acceptance_window", "gold_number_from_option", "grade_number", "numeric_key",
           "option_value"]

# "less than 2.85%", "above $305 per share": the option states a comparison, not a value.
_COMPARISON = re.compile(
    r"(?i)\b(?:less|more|greater|fewer|higher|lower|larger|smaller)\s+than\b|\b(?:below|above|under|over|"
    r"exceeds?|exceeding|at\s+least|at\s+most|up\s+to|between|within|no\s+more|no\s+less)\b"
)
# A number that names rather than measures (issue, item 8): a maturity or horizon used as an adjective
# ("180-day Libor", "The 30-year.", "10-year US Treasury bond"), an index name ("S&P 500", "500 Index"), a
# statistic's defining value ("Kurtosis of 3", "skewness of zero" has no digits anyway) or a symbol
# ("χ2 statistic"). Counts and amounts stay numeric ("1101 contracts.", "Buy 199 Euro index futures.").
_LABEL_AFTER = re.compile(r"(?i)^[-‑–]\s?(?:day|week|month|quarter|year|yr)s?\b|^\s+index\b")
_LABEL_BEFORE = re.compile(
    r"(?i)(?:\b(?:kurtosis|skewness|skew|mean|median|mode|variance|standard\s+deviation|correlation|"
    r"coefficient|beta|alpha|r-squared|statistic)\s+(?:of|=|equal\s+to|equals|is)\s*|\bS&P\s*|poor['’]s\s+"
    r"|[^\W\d_])$"
)
MAX_OTHER_WORDS = 5  # "8.0% compounded semiannually." yes; a sentence that mentions a number, no
MAX_STATEMENT_WORDS = 12  # "She will need to contribute €3,760 as margin." (open answers only, `option_value`)


@dataclass(frozen=True)
class NumericGrade:
    match: bool
    rel_error: float  # |extracted − gold| / |gold|; inf when nothing was extracted
    closest_distractor_rel_error: float | None  # same, against the nearest numeric distractor
    reason: str

    def to_dict(self) -> dict:
        """JSON-safe: an infinite relative error (nothing extracted, or gold 0) becomes None."""
        return {k: None if isinstance(v, float) and math.isinf(v) else v for k, v in asdict(self).items()}


def gold_number_from_option(text: str | None) -> Number | None:
    """The one number an option's text carries, or None when the option is not a numeric answer.

    "$113,733" -> 113733 "$"; "8.0% compounded semiannually." -> 8.0 "%". None for: no number ("less
    than the lump sum."), several different numbers ("€1,000 and €2,000"), a comparison ("less than
    2.85%"), a formula ("(1 – Recovery rate)") or a sentence that merely mentions a number (more than
    five other words: "The initial margin required is typically at least 10% of the futures price.").
    """
    cleaned, found = numbers_in(text)
    numbers = [f.number for f in found]
    if not numbers or not all(n == numbers[0] for n in numbers):
        return None
    if any(_is_label(cleaned, f) for f in found):
        return None
    if _COMPARISON.search(cleaned):
        return None
    rest = "".join(cleaned[end:start] for end, start in zip([0] + [f.end for f in found],
                                                             [f.start for f in found] + [len(cleaned)],
                                                             strict=True))
    if re.search(r"[+×*/=^]|\s[-–—]\s|\(\s*[-–—]", rest):
        return None
    if len(re.findall(r"[A-Za-z][\w'’-]*", rest)) > MAX_OTHER_WORDS:
        return None
    return numbers[0]


# "1 to 5.", "3 : 1": an option that is only a ratio is the one number a/b (odds, leverage, hedge ratios)
_RATIO_OPTION = re.compile(r"\s*(?P<a>\d+(?:\.\d+)?)\s*(?::|to)\s*(?P<b>\d*[1-9]\d*(?:\.\d+)?)\s*\.?\s*")
# after the one amount of a sentence option: its end, or a preposition ("19 million of bonds", "€3,760 as
# margin"); a noun right after it makes the number a label ("5% critical value", "the next 12 months")
_AMOUNT_END = re.compile(r"(?i)\s*(?:[.;!]?\s*$|(?:of|as|in|to|from|for|on|at|by|per)\b)")
# a sentence option that says more than one thing, or makes its amount conditional: "Sell the real estate
# and €57 million of the securities", "£3.55 million because ...", "will not need to contribute ..."
_SEVERAL_PARTS = re.compile(r"(?i),|\b(?:and|plus|or|nor|but|while|because|if|unless|since|when|not|no|only)\b")
# rule 4 of the labelling manual, in an option: "a loss on the extinguishment of debt of $50,000" is −50,000
_OPTION_SIGN = re.compile(r"(?i)\b(?:loss(?:es)?|lost|decrease[sd]?|declin(?:e[sd]?|ing)|reduction|shortfall|"
                          r"fall(?:s|en)?|fell|drop(?:s|ped)?)\b(?![^.]*\bto\s*$)")


def option_value(text: str | None) -> Number | None:
    """The number an option commits to, as an open answer is graded against it: `gold_number_from_option`,
    and also a ratio ("1 to 5." is 0.2) and a sentence whose one number is the computed amount ("She will
    need to contribute €3,760 as margin.", "SOA will need to issue 19 million of bonds."); a loss or a
    decrease word before it makes it negative (rule 4: "recognize a loss on ... of $50,000" is −50,000).
    None for a sentence with two parts ("Sell the real estate and €57 million of ..."), a condition, a
    negation, or a number that labels the noun after it ("5% critical value", "the next 12 months")."""
    cleaned, found = numbers_in(text)
    ratio = _RATIO_OPTION.fullmatch(cleaned)
    if ratio:
        return Number(float(ratio.group("a")) / float(ratio.group("b")))
    number = gold_number_from_option(text)
    # a date is a number too: "a liability of £982,674 on the 31 December 2010 balance sheet" holds several
    # numbers and states where an amount is recorded (labelling rule 2: judge)
    if number is None and len(found) == 1 and not _is_label(cleaned, found[0]) and not _COMPARISON.search(cleaned):
        rest = cleaned[: found[0].start] + " " + cleaned[found[0].end :]
        words = len(re.findall(r"[A-Za-z][\w'’-]*", rest))
        if (words <= MAX_STATEMENT_WORDS and _AMOUNT_END.match(cleaned, found[0].end)
                and not _SEVERAL_PARTS.search(rest) and not re.search(r"[+×*/=^]", rest)):
            number = found[0].number
    if number is not None and number.value > 0 and found and _OPTION_SIGN.search(cleaned[: found[0].start]):
        return Number(-number.value, number.unit)
    return number


def _is_label(cleaned: str, found) -> bool:
    """The number names something (a maturity, an index, a statistic's defining value), it is not computed."""
    return bool(_LABEL_AFTER.search(cleaned[found.end :]) or _LABEL_BEFORE.search(cleaned[: found.start]))


@dataclass(frozen=True)
class NumericKey:
    """The numbers of a question's options, when the options can be told apart by their numbers."""

    gold: Number
    distractors: dict[str, Number | None]
    ratio: bool = False  # the options are ratios ("1 to 5."): an answer's "1 : 5" is one number
    step: float | None = None  # the key's rounding step on its scale: 0.1 for "0.0", 1e6 for "$2 million"

    def window(self, value: Number, tolerance: float, step: float | None = None) -> NumericGrade:
        """The value against this key's acceptance window (`grade_number`: its distractors, its own rounding, or the
        rounding `step` given)."""
        return grade_number(value, self.gold, list(self.distractors.values()), rel_tol=tolerance,
                            step=self.step if step is None else step)

    def rounds_at_its_zeros(self, value: Number, tolerance: float) -> bool:
        """The key is a whole amount ending in zeros ('£700.'), the value is outside its window but rounds to it at
        those zeros and is nearer it than any other option ('£722.21' against £100, £600, £700): the key may be
        exact or rounded to hundreds; graders differ."""
        g = self.gold.value
        if self.gold.unit == PERCENT or abs(g) < 100 or g != int(g) or self.window(value, tolerance).match:
            return False
        digits = str(int(abs(g)))
        step = 10.0 ** min(len(digits) - len(digits.rstrip("0")), len(digits) - 1)
        return step > 1 and self.window(value, tolerance, step).match

    def on_rounding_edge(self, value: Number, tolerance: float) -> bool:
        """The value lies exactly half the coarse key's last digit from it, nearer the key than any other option
        ('0.225' against '0.23.'): it rounds to the key half-up and away from it half-to-even; graders differ."""
        return self.step is not None and not self.window(value, tolerance).match and \
            self.window(value, tolerance, self.step * (1 + 1e-6)).match


def numeric_key(choices: Mapping[str, str], answer: str, statements: bool = False) -> NumericKey | None:
    """Numeric grading key of a multiple-choice question, or None when it must be graded otherwise:
    the correct option carries no number (or only a label: "Kurtosis of 3", "180-day Libor"), or a distractor
    carries the very same number (easy_927: "a 10% increase in total revenue." vs "a 10% increase in average
    revenue."; easy_826: "equal to 1.0." vs "less than 1.0." and "greater than 1.0.")."""
    if answer not in choices:
        raise ValueError(f"answer={answer!r} is not among the choices {', '.join(choices)}")
    read = option_value if statements else gold_number_from_option
    gold = read(choices[answer])
    if gold is None:
        return None
    distractors = {letter: read(text) for letter, text in choices.items() if letter != answer}
    if any(d is not None and relative_error(d, gold) == 0 for d in distractors.values()):
        return None
    # "equal to 1.0" against "less than 1.0" / "greater than 1.0": the number is shared, the words decide
    for letter, text in choices.items():
        if letter != answer and any(relative_error(n, gold) == 0 for n in extract_numbers_in(text)):
            return None
    ratio = statements and bool(_RATIO_OPTION.fullmatch(numbers_in(choices[answer])[0]))
    return NumericKey(gold, distractors, ratio)


WINDOW_EPSILON = 1e-9  # relative: float noise (0.1 + 0.2) never decides a verdict


def acceptance_window(gold: Number, distractors: list[Number | None] | tuple[Number | None, ...] = (),
                      rel_tol: float = 0.02) -> tuple[float, float | None]:
    """(window, half_gap) on the gold's scale: window = min(rel_tol × |gold|, half_gap), where half_gap is
    half the distance from the gold to the nearest distractor's number (None without numeric distractors)."""
    g = aligned_values(gold, gold)[1]
    gaps = [abs(aligned_values(d, gold)[0] - g) / 2 for d in distractors if d is not None]
    half_gap = min(gaps) if gaps else None
    window = rel_tol * abs(g)
    return (window if half_gap is None else min(window, half_gap)), half_gap


def rounding_step(option: str, read: Callable[[str], Number | None]) -> float | None:
    """The step of the last digit the option writes, on the scale `read` puts it ('0.0' → 0.1, '€6' → 1,
    '$2 million' → 1e6, '66 bps' → 0.01 %): the option read again with that digit moved by one."""
    cleaned, found = numbers_in(option)
    number = read(option)
    if number is None or len(found) != 1:
        return None
    last = max(i for i in range(found[0].start, found[0].end) if cleaned[i].isdigit())
    moved = read(cleaned[:last] + ("8" if cleaned[last] == "9" else str(int(cleaned[last]) + 1)) + cleaned[last + 1 :])
    return None if moved is None else abs(moved.value - number.value)


def grade_number(
    extracted: Number | None,
    gold: Number,
    distractors: list[Number | None] | tuple[Number | None, ...] = (),
    rel_tol: float = 0.02,
    step: float | None = None,
) -> NumericGrade:
    """Grade an extracted number against the gold option's number and the distractors' numbers.

    The acceptance window is gold ± min(rel_tol × |gold|, half the distance from the gold to the nearest
    distractor), on the gold's scale (percent-aware, as `numbers_match`). The tolerance bound is inclusive;
    the half-gap bound is exclusive: a value exactly half the gold's gap to the nearest distractor away
    from the gold (on either side) is not correct. Both comparisons allow a relative epsilon
    (`WINDOW_EPSILON`) so float noise never decides. Being nearer a distractor than the gold is a
    consequence of the window, never accepted. A key written coarser than the tolerance ('€6', '0.0':
    `step`, on the gold's scale) also accepts what rounds to it (strictly within half a step), still only
    when nearer the gold than any distractor.
    """
    if not (isinstance(rel_tol, int | float) and rel_tol >= 0):
        raise ValueError(f"rel_tol={rel_tol!r} must be a non-negative number")
    if gold is None:
        raise ValueError("gold is None: the correct option carries no number, grade it another way")
    numeric_distractors = [d for d in distractors if d is not None]
    if extracted is None:
        return NumericGrade(False, math.inf, None, "no number extracted from the response")

    rel_error = relative_error(extracted, gold)
    x, g = aligned_values(extracted, gold)
    gold_distance = abs(x - g)
    closest: tuple[float, float, Number] | None = None  # (distance, rel error, distractor)
    for distractor in numeric_distractors:
        d, _ = aligned_values(distractor, gold)
        distance = abs(x - d)
        rel = distance / abs(d) if d != 0 else (0.0 if distance == 0 else math.inf)
        if closest is None or distance < closest[0]:
            closest = (distance, rel, distractor)
    closest_rel = closest[1] if closest else None

    _, half_gap = acceptance_window(gold, numeric_distractors, rel_tol)
    eps = WINDOW_EPSILON * max(abs(g), abs(x), 1e-12)
    rounds_to_gold = step is not None and gold_distance < (step / 100 if gold.unit == PERCENT else step) / 2 - eps
    if gold_distance > rel_tol * abs(g) + eps and not rel_error <= rel_tol + REL_TOL_SLACK and not rounds_to_gold:
        reason = f"{extracted} is {_pct(rel_error)} from gold {gold} (tolerance {_pct(rel_tol)})"
        return NumericGrade(False, rel_error, closest_rel, reason)
    if closest and closest[0] < gold_distance - eps:
        reason = (
            f"{extracted} is within {_pct(rel_tol)} of gold {gold} ({_pct(rel_error)}) but closer to "
            f"distractor {closest[2]} ({_pct(closest[1])})"
        )
        return NumericGrade(False, rel_error, closest_rel, reason)
    if half_gap is not None and gold_distance >= half_gap - eps:
        where = "on the edge of" if abs(gold_distance - half_gap) <= eps else "outside"
        reason = (
            f"{extracted} is within {_pct(rel_tol)} of gold {gold} ({_pct(rel_error)}) but {where} the "
            f"window of half the gold's gap to the nearest other option "
            f"(±{half_gap * (100 if gold.unit == PERCENT else 1):.6g})"
        )
        return NumericGrade(False, rel_error, closest_rel, reason)
    return NumericGrade(True, rel_error, closest_rel, f"{extracted} is {_pct(rel_error)} from gold {gold}")


def _pct(fraction: float) -> str:
    return "an infinite distance" if math.isinf(fraction) else f"{fraction:.2%}"
