"""cfa_lib.answers.key: tolerance plus the closer-to-a-distractor rule, on real CFA-Easy option sets."""

from __future__ import annotations

import math

import pytest

from cfa_lib.answers import Number, NumericKey, extract_number, gold_number_from_option, grade_number, numeric_key
from cfa_lib.data import load_dataset


@pytest.fixture(scope="module")
def easy():
    return load_dataset("easy")


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ("$113,733", Number(113733, "$")),
        ("$113,330.", Number(113330, "$")),
        ("8.0% compounded semiannually.", Number(8.0, "%")),
        ("7.5% compounded continuously.", Number(7.5, "%")),
        ("€10.17 million.", Number(10_170_000, "€")),
        ("–$420,000.", Number(-420_000, "$")),
        ("+$0.41 million.", Number(410_000, "$")),
        ("₤120,000.", Number(120_000, "£")),
        ("-0.05%.", Number(-0.05, "%")),
        ("75 bps.", Number(0.75, "%")),
        ("1101 contracts.", Number(1101, None)),
        ("Buy 199 Euro index futures.", Number(199, None)),
        ("other comprehensive income of €3.3 million.", Number(3_300_000, "€")),
        # not numeric answers
        ("less than the lump sum.", None),
        ("€1,000 and €2,000", None),
        ("$23.17 and $36.83.", None),
        ("less than 2.85%.", None),
        ("above $305 per share.", None),
        ("(1 – Recovery rate).", None),
        ("1/(1 + Recovery rate)", None),
        ("Statement 1.", None),
        ("The initial margin required is typically at least 10% of the futures price.", None),
        ("recognize a loss on the extinguishment of debt of $50,000.", None),
        ("", None),
    ],
)
def test_gold_number_from_option(option, expected):
    assert gold_number_from_option(option) == expected


def _key(question) -> NumericKey:
    key = numeric_key(question.choices, question.answer)
    assert key is not None, question.id
    return key


def test_easy_3_key(easy):
    key = _key(easy[3])
    assert key.gold == Number(113733, "$")
    assert key.distractors == {"A": Number(112555, "$"), "B": Number(113330, "$")}


@pytest.mark.parametrize(
    ("answer", "match", "reason_part"),
    [
        (Number(113733, "$"), True, "0.00% from gold"),
        (Number(113700, "$"), True, "from gold"),
        (Number(113300, "$"), False, "closer to distractor $113,330"),  # within 2 % of gold, yet B
        (Number(112560, "$"), False, "closer to distractor $112,555"),
        (Number(120000, "$"), False, "tolerance 2.00%"),
        (Number(113733, "€"), True, "from gold"),  # the currency symbol is not graded
    ],
)
def test_easy_3_distractor_rule(easy, answer, match, reason_part):
    key = _key(easy[3])
    grade = grade_number(answer, key.gold, list(key.distractors.values()))
    assert grade.match is match and reason_part in grade.reason


def test_easy_3_values(easy):
    key = _key(easy[3])
    grade = grade_number(Number(113300, "$"), key.gold, list(key.distractors.values()))
    assert grade.rel_error == pytest.approx(433 / 113733)
    assert grade.closest_distractor_rel_error == pytest.approx(30 / 113330)
    assert grade.to_dict()["match"] is False


def test_easy_9_worked_example(easy):
    """The card's open-ended answer 8.15 % against gold 8.0 % (options 7.5 %, 7.7 %).

    The card called 8.15 % "inside the default 2 %"; the acceptance window (issue, item 7) is
    8.0 % ± min(2 % × 8.0, half the gap to 7.7 %) = ± 0.15, and 8.15 % sits exactly on its edge, which is
    not correct. 8.148 % (the annual-compounding rate) is inside."""
    key = _key(easy[9])
    distractors = list(key.distractors.values())
    assert key.gold == Number(8.0, "%") and distractors == [Number(7.5, "%"), Number(7.7, "%")]
    answer = extract_number("The stated annual interest rate is approximately 8.15%.")
    at_2pct = grade_number(answer, key.gold, distractors)
    assert not at_2pct.match and at_2pct.rel_error == pytest.approx(0.01875) and "on the edge" in at_2pct.reason
    assert at_2pct.closest_distractor_rel_error == pytest.approx(0.45 / 7.7)
    assert grade_number(Number(8.148, "%"), key.gold, distractors).match
    assert not grade_number(Number(8.148, "%"), key.gold, distractors, rel_tol=0.01).match
    # the same answer written as a fraction, or as percentage points without '%'
    assert grade_number(Number(0.08148), key.gold, distractors).match
    assert grade_number(Number(8.148), key.gold, distractors).match
    assert not grade_number(Number(0.0815), key.gold, distractors).match  # the edge, as a fraction
    # 7.8 % is within 2.5 % of gold but closer to B's 7.7 %
    assert not grade_number(Number(7.8, "%"), key.gold, distractors, rel_tol=0.03).match


@pytest.mark.parametrize(
    ("index", "answer", "match"),
    [
        (4, Number(97532, "£"), True),  # £97,500 / £97,532 / £97,561: 0.03 % apart
        (4, Number(97550, "£"), False),  # nearer £97,561
        (341, Number(28.75, "%"), True),  # 28.39 % / 28.59 % / 28.79 %, gold C
        (341, Number(28.65, "%"), False),
        (640, Number(1.78, "%"), True),  # 1.73 % / 1.76 % / 1.78 %
        (640, Number(0.01765), False),  # written as a fraction: nearer B's 1.76 %
        (656, Number(38.2, "%"), True),  # 21.14 % / 38.21 % / 61.83 %
        (206, Number(-410_000, "$"), False),  # sign matters: gold +$0.41 million
        (206, Number(0.41e6, "$"), True),
    ],
)
def test_real_option_sets(easy, index, answer, match):
    key = _key(easy[index])
    assert grade_number(answer, key.gold, list(key.distractors.values())).match is match


def test_exactly_half_way_is_not_correct():
    """Issue item 7: a value on the window's edge, half the gold's gap to a distractor away, is not correct
    (it used to be)."""
    grade = grade_number(Number(101), Number(100), [Number(102)])
    assert not grade.match and "on the edge of the window" in grade.reason
    assert grade.closest_distractor_rel_error == pytest.approx(1 / 102)
    assert grade_number(Number(100.999), Number(100), [Number(102)]).match


@pytest.mark.parametrize(
    ("value", "gold", "distractors", "match"),
    [
        # half-gap 0.5 to 101 (tolerance 2): the edge is out even with float noise on top of it
        (Number(100.1 + 0.4), Number(100), [Number(101)], False),
        (Number(100.5 - 1e-12), Number(100), [Number(101)], False),
        (Number(100.49), Number(100), [Number(101)], True),
        (Number(99.5), Number(100), [Number(101)], False),
        # tolerance bound is inclusive: 2 % of 100 with a distractor far away
        (Number(102.0), Number(100.0), [Number(200.0)], True),
        (Number(102.0000001), Number(100.0), [Number(200.0)], True),  # within the relative epsilon
        (Number(102.001), Number(100.0), [Number(200.0)], False),
        # easy_566: par 100 is 1.3 % from 101.36 but beyond the 1.355 half-gap to 98.65
        (Number(100.0), Number(101.36), [Number(98.65), Number(106.43)], False),
        (Number(100.01), Number(101.36), [Number(98.65), Number(106.43)], True),
    ],
)
def test_acceptance_window(value, gold, distractors, match):
    assert grade_number(value, gold, distractors).match is match


def test_missing_extraction_and_non_numeric_distractors():
    grade = grade_number(None, Number(100, "$"), [None, Number(90, "$")])
    assert not grade.match and math.isinf(grade.rel_error) and "no number" in grade.reason
    assert grade.to_dict()["rel_error"] is None
    grade = grade_number(Number(100, "$"), Number(100, "$"), [None, None])
    assert grade.match and grade.closest_distractor_rel_error is None


def test_zero_gold():
    assert grade_number(Number(0.0), Number(0.0), [Number(1.0)]).match
    assert not grade_number(Number(0.001), Number(0.0), [Number(1.0)]).match


def test_bad_arguments():
    with pytest.raises(ValueError, match="rel_tol"):
        grade_number(Number(1), Number(1), [], rel_tol=-1)
    with pytest.raises(ValueError, match="gold is None"):
        grade_number(Number(1), None, [])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="answer='D'"):
        numeric_key({"A": "$1", "B": "$2", "C": "$3"}, "D")


@pytest.mark.parametrize(
    "index",
    [
        0,  # words only
        29,  # less than / equal to / greater than 2.85 %
        927,  # a 10% increase in total revenue / in average revenue: same number
        277,  # €3.3 million in OCI vs a gain of €3.3 million: same number
        193,  # two numbers per option
    ],
)
def test_questions_that_numbers_cannot_grade(easy, index):
    assert numeric_key(easy[index].choices, easy[index].answer) is None


def test_share_of_easy_questions_with_a_numeric_key(easy):
    """123 before label numbers were refused (issue item 8): easy_61 "Kurtosis of 3", easy_716 "180-day Libor"
    and easy_826 "equal to 1.0." (the distractors say less/greater than 1.0) are no longer numeric keys."""
    keys = [numeric_key(q.choices, q.answer) for q in easy]
    assert sum(k is not None for k in keys) == 120
