"""Choices rebuilt around a new correct value: gaps, order, formats and letters."""

from __future__ import annotations

import re

import numpy as np
import pytest

from cfa_lib.data import Question
from cfa_lib.perturbation.choices import rebuild_choices
from cfa_lib.perturbation.number_text import find_numbers
from cfa_lib.perturbation.verify import option_numbers
from tests.perturb_cases import (
    EASY_0,
    EASY_3,
    EASY_9,
    EASY_569,
    only_number,
)


@pytest.mark.parametrize("seed", range(6))
def test_rebuilt_choices_keep_relative_gaps_order_and_formats(seed):
    options = {letter: find_numbers(text)[0] for letter, text in EASY_3.choices.items()}
    choices, letter = rebuild_choices(EASY_3, options, 90_127.0, np.random.default_rng(seed))
    assert choices[letter] == "$90,127."
    # every option as "$dd,ddd." (the last gets the '.' FinEval dropped), sorted like the original
    assert all(re.fullmatch(r"\$\d\d,\d{3}\.", text) for text in choices.values())
    numbers = [only_number(choices[k]) for k in "ABC"]
    assert numbers == sorted(numbers)
    # the same relative gaps |d - c| / c as in the original (112,555 and 113,330 against 113,733)
    # (to the key's grain, $1: a distractor that would end in 0 moves by $1, so the key is not the only odd one)
    gaps = sorted(abs(n - 90_127) / 90_127 for k, n in zip("ABC", numbers, strict=True) if k != letter)
    assert gaps == [pytest.approx(403 / 113_733, abs=2.5e-5), pytest.approx(1178 / 113_733, abs=2.5e-5)]


def test_rebuilt_choices_put_the_correct_option_at_every_letter_but_the_originals():
    """#32: the key kept EASY_3's letter C at 4 of these 12 seeds; a model remembering only "C" was right."""
    options = {letter: find_numbers(text)[0] for letter, text in EASY_3.choices.items()}
    letters = [rebuild_choices(EASY_3, options, 90_127.0, np.random.default_rng(s))[1] for s in range(12)]
    assert set(letters) == {"A", "B"} and 4 <= letters.count("A") <= 8


def test_rebuilt_percent_choices_keep_their_own_words():
    options = {letter: find_numbers(text)[0] for letter, text in EASY_9.choices.items()}
    for seed in range(6):
        choices, letter = rebuild_choices(EASY_9, options, 10.3, np.random.default_rng(seed))
        assert choices[letter] == "10.3% compounded semiannually."
        assert sorted(choices.values(), key=only_number) == list(choices.values())
        words = sorted(text.split("% ")[1] for text in choices.values())
        assert words == ["compounded continuously.", "compounded daily.", "compounded semiannually."]
        gaps = sorted(round(abs(only_number(t) - 10.3), 1) for k, t in choices.items() if k != letter)
        assert gaps == [0.4, 0.6]  # 8.0% vs 7.7% and 7.5%, scaled to 10.3%


def test_a_round_key_gets_round_distractors_that_do_not_merge():
    """easy_569's options lie 0.05 % apart (96.28, 96.33); for a key written "2.00" they would round onto it.
    Before #32 they grew a decimal ("2.000.", "2.001.", "1.933."): the key the only round option. Every option is
    at the key's grain (1), nudged to the nearest free place on its own side of the key: "1.00 / 2.00 / 3.00" with
    the key at B (the original's letter, the middle of an even set) is now "2.00 / 3.00 / 4.00" keyed A."""
    options = {letter: find_numbers(text)[0] for letter, text in EASY_569.choices.items()}
    choices, letter = rebuild_choices(EASY_569, options, 2.0, np.random.default_rng(0))
    assert (choices, letter) == ({"A": "2.00.", "B": "3.00.", "C": "4.00."}, "A")


def test_negative_options_keep_their_sign_character():
    question = Question(
        id="easy_76",
        dataset="easy",
        index=76,
        stem="The price of a stock at t = 0 is $208.25 and at t = 1 is $186.75. The continuously compounded "
        "rate of return for the stock from t = 0 to t = 1 is closest to:",
        choices={"A": "–10.90%.", "B": "–10.32%.", "C": "11.51%."},
        answer="A",
    )
    options = {letter: find_numbers(text)[0] for letter, text in question.choices.items()}
    assert options["A"].number == -10.90
    choices, letter = rebuild_choices(question, options, -20.37, np.random.default_rng(0))
    assert choices[letter] == "–20.37%."
    # the key was A, the lowest: "–10.32%" mirrors below it (#32: never the original's letter)
    assert (choices, letter) == ({"A": "–21.45%.", "B": "–20.37%.", "C": "21.51%."}, "B")


EASY_414 = Question(
    id="easy_414",
    dataset="easy",
    index=414,
    stem="Jim White has sold short 100 shares of Super Stores at a price of $42 per share. He has also "
    "simultaneously placed a “good-till-cancelled, stop 50, limit 55 buy” order. Excluding transaction costs, "
    "what is the maximum possible loss that White can have?",
    choices={"A": "$800.", "B": "$1,300.", "C": "Unlimited."},
    answer="B",
)


def test_an_option_without_a_number_keeps_its_letter_and_text():
    options = option_numbers(EASY_414)
    assert not options.problem and set(options.numbers) == {"A", "B"}
    letters = set()
    for seed in range(12):
        choices, letter = rebuild_choices(EASY_414, options.numbers, 2_100.0, np.random.default_rng(seed))
        letters.add(letter)
        assert choices["C"] == "Unlimited." and list(choices) == ["A", "B", "C"]
        assert choices[letter] == "$2,100."
        # the distractor keeps its gap ($800 is 38.5 % below $1,300: $1,292 or $2,908) at the key's grain
        # ($2,100: hundreds) and, beside "$1,300.", groups thousands
        other = ({"A", "B"} - {letter}).pop()
        assert choices[other] == "$2,900."
    assert letters == {"A"}  # never B, the original's letter (#32)


def test_a_key_without_a_number_or_no_numeric_distractor_is_refused():
    assert option_numbers(EASY_0).problem == "correct option C ('expected inflation.') carries no number"
    words = Question(id="easy_1", dataset="easy", index=1, stem="Loss?", answer="A",
                     choices={"A": "$800.", "B": "Unlimited.", "C": "None."})
    assert option_numbers(words).problem == "no distractor carries a number"
