"""Never a statistic on too little: below `MIN_PAIRS` pairs the book prints the counts and what it needs,
never an interval of zero width, a test on no discordant pair, or a conclusion (issue: a referee's reading
of "+0.0, 95 % CI [0.0, 0.0]" and "McNemar chi2 0.000 ... not significant" on 4 pairs)."""

from __future__ import annotations

import json

from cfa_lib.experiments.loading import load_run
from cfa_lib.experiments.option_bias import OPTION_BIAS
from cfa_lib.paths import REFERENCE_DIR
from cfa_lib.report import notebook_tables, paper_tables
from cfa_lib.report.format import MIN_PAIRS, TooFew, ci, if_testable, p_cell, paired, pp


def small_run(tmp_path, rows: int):
    """An option-bias file of the study's first `rows` questions, loaded as our own run."""
    data = json.loads((REFERENCE_DIR / "A5_option_bias_gpt-4o-mini.json").read_text(encoding="utf-8"))
    data["metadata"].update(experiment="option_bias", model="local", timestamp="20260101T000000Z")
    data["results"] = data["results"][:rows]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return load_run(OPTION_BIAS, path)


def test_the_rule_in_one_place():
    assert MIN_PAIRS == 20
    assert pp(paired(0.0, 4)) == ci(paired((0.0, 0.0), 4)) == "4 pairs: too few (needs 20)"
    assert p_cell(if_testable(1.0, 40, 0, 0)) == "no discordant pair: nothing to test"
    assert pp(paired(0.0412, 704)) == "+4.1" and ci(paired((0.0043, 0.0795), 704)) == "[0.4, 8.0]"
    assert isinstance(if_testable(0.03, 19, 3, 1), TooFew) and if_testable(0.03, 20, 3, 1) == 0.03


def test_four_pairs_print_counts_not_a_bias_an_interval_or_a_conclusion(tmp_path):
    run = small_run(tmp_path, 4)
    assert run.summary.n_paired == 4
    table = notebook_tables.option_bias_summary(run)
    column = table["all questions"]
    assert column["questions paired"] == 4
    assert column["option bias (pp)"] == column["  95% CI (pp)"] == "4 pairs: too few (needs 20)"
    assert "[0.0, 0.0]" not in table.to_string() and "0.000" not in table.to_string()
    words = notebook_tables.describe_mcnemar(run)
    assert "no conclusion is drawn" in words and "not significant" not in words
    p1a = paper_tables.option_bias_table({"local": run.summary})
    assert p1a.loc["option bias (pp)", "local"] == "4 pairs: too few (needs 20)"
    assert p1a.loc["McNemar p", "local"] in ("4 pairs: too few (needs 20)", "no discordant pair: nothing to test")


def test_enough_pairs_print_the_statistics(tmp_path):
    run = small_run(tmp_path, 40)
    column = notebook_tables.option_bias_summary(run)["all questions"]
    assert column["questions paired"] == 40
    assert column["option bias (pp)"].startswith(("+", "-")) and column["  95% CI (pp)"].startswith("[")
    assert "at the 5% level" in notebook_tables.describe_mcnemar(run)
