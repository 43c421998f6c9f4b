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
