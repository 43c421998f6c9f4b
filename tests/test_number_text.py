"""Finding and replacing numbers as written in a question."""

from __future__ import annotations

import pytest

from cfa_lib.perturbation.number_text import substitute_values
from tests.perturb_cases import EASY_11


def test_substitution_needs_unique_spans():
    assert substitute_values("at 7% for 7 years, 17%", ["7%", "7 years"], ["8.5%", "9 years"]) == (
        "at 8.5% for 9 years, 17%"
    )
    with pytest.raises(ValueError, match="span '10-year' occurs 2 times"):
        substitute_values(EASY_11.stem, ["10-year"], ["12-year"])


def test_number_words_are_read_and_written_back_as_words():
    from cfa_lib.perturbation.number_text import find_number_words, word_number

    five = word_number("five stocks", 5)
    assert five is not None and five.word and five.number == 5
    assert five.write(7) == "seven stocks" and five.write(12) == "twelve stocks"
    assert word_number("Five stocks", 5).write(3) == "Three stocks"  # capitalisation kept
    assert not five.writable(21) and not five.writable(2.5)
    with pytest.raises(ValueError, match="cannot be written as a number word"):
        five.write(21)
    # a word that is not the value, two words, digits, or a compound are not a number word span
    assert word_number("five-year", 10) is None
    assert word_number("two of four", 2) is None
    assert word_number("5 stocks", 5) is None
    assert find_number_words("twenty-five stocks, someone, often") == []


def test_word_counts_draw_whole_plural_counts_up_to_twenty():
    import numpy as np

    from cfa_lib.perturbation.number_text import word_number
    from cfa_lib.perturbation.types import ExtractedParameter, ParameterInfo
    from cfa_lib.perturbation.values import draw_number

    def drawn(span, value):
        spec = ExtractedParameter(name="n", value=value, kind="count", span=span, description="", derived_from="")
        info = ParameterInfo(spec, word_number(span, value), 1.0, 1)
        return {draw_number(info, np.random.default_rng(seed)) for seed in range(40)}

    assert drawn("two stocks", 2) == {3.0, None}  # never "one stocks"
    assert drawn("eighteen stocks", 18) - {None} <= set(map(float, range(11, 21)))  # never past "twenty"
