"""Notebook parameters as papermill delivers them: `-p` turns numbers into numbers and the rest into text."""

from __future__ import annotations

import pytest

from cfa_lib import params


@pytest.mark.parametrize("given, levels", [
    ([1], [1]), ((3, 1, 3), [1, 3]), (2, [2]), ("[1, 2, 3]", [1, 2, 3]), ("1,2", [1, 2]), (" [2] ", [2]),
])
def test_perturbation_levels_in_every_form_a_user_passes(given, levels) -> None:
    assert params.check_levels(given) == levels


@pytest.mark.parametrize("bad", ["[4]", "one", "[]", "", [], [1.0], [True], True, None, "1;2"])
def test_bad_perturbation_levels_name_the_parameter(bad) -> None:
    with pytest.raises(params.ParameterError, match=r"^Parameter perturbation_levels=.* accepted values are"):
        params.check_levels(bad)


def test_limit_tolerance_and_counts() -> None:
    assert params.check_limit(None) is None and params.check_limit(5) == 5
    assert params.check_tolerance(0.02) == 0.02
    for check, bad in [(params.check_limit, 0), (params.check_limit, "ten"), (params.check_tolerance, 1),
                       (params.check_concurrency, 0)]:
        with pytest.raises(params.ParameterError):
            check(bad)
    with pytest.raises(params.ParameterError, match="agreement_sample=-1"):
        params.check_count(-1, "agreement_sample")


def test_options_are_checked_once_when_built_with_one_sentence_errors() -> None:
    from cfa_lib.experiments.counterfactual import COUNTERFACTUAL
    from cfa_lib.experiments.option_bias import OPTION_BIAS
    from cfa_lib.experiments.three_tier import THREE_TIER

    assert COUNTERFACTUAL.Options(perturbation_levels="[2, 1]").perturbation_levels == [1, 2]  # papermill's text
    assert OPTION_BIAS.Options(variants="shuffled").variants == ["shuffled"]
    with pytest.raises(params.ParameterError, match=r"^Parameter agreement_sample=-1 is not valid: accepted values"):
        THREE_TIER.Options(agreement_sample=-1)
    with pytest.raises(params.ParameterError, match=r"^Parameter varaints=\[\] is not valid: accepted parameters "
                                                    r"are calibration_sample, variants\.$"):
        OPTION_BIAS.Options(varaints=[])
