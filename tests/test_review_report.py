"""The notebooks' Human check: tables and figure from a scored review, the how-to sentence without one."""

from __future__ import annotations

import pytest

from cfa_lib.experiments.registry import load_results
from cfa_lib.report import human_check
from cfa_lib.review.__main__ import main
from cfa_lib.review.files import beside, review_file
from cfa_lib.review.scoring import score_review
from cfa_lib.review.spreadsheet import read_rows, write_review
from tests.review_cases import option_bias_file


@pytest.fixture
def reviewed(tmp_path):
    results = option_bias_file(tmp_path)
    path = beside(results)
    main(["export", str(results), "--out", str(path)])
    rows = [row for _, row in read_rows(path)]
    for row in rows:
        number = int(row["item_id"].split("|")[0].split("_")[1])
        row["reviewer"] = "ada"
        row["verdict"] = "cannot_tell" if number == 9 else ("correct" if number < 4 else "incorrect")
    write_review(rows, path)
    run = load_results(results)
    return run, [human_check.Reviewed("test-model", run, score_review(run, path))]


def test_the_review_beside_the_results_is_found(reviewed):
    run, _ = reviewed
    assert review_file(run.path) == run.path.with_name("A5_option_bias_test.review.csv")


def test_tables_carry_the_scored_values(reviewed):
    run, scored = reviewed
    table = human_check.agreement_table(scored)
    # nine compared (easy_9 cannot tell): toolkit correct on 0-5, person on 0-3 -> 7 of 9 agree
    assert table.loc["test-model", "compared"] == "9" and table.loc["test-model", "cannot tell"] == "1"
    assert table.loc["test-model", "agreement (95% CI)"].startswith("77.8%")
    corrected = human_check.correction_table(scored).loc[("test-model", "open-answer accuracy")]
    assert corrected["as graded"] == "60.0%"
    # the judge's 6 "correct": 4 truly; its 3 reviewed "incorrect": none -> theta = .6 * 4/6 = 40.0%
    assert corrected["corrected (95% CI)"].startswith("40.0%")
    assert "ada" in human_check.describe(run, scored) and "1 were \"cannot tell\"" in human_check.describe(run, scored)
    assert human_check.figure(scored).axes[0].get_ylabel() == "Agreement with the person (%)"


def test_a_run_without_review_says_how_to_make_one(tmp_path):
    run = load_results(option_bias_file(tmp_path))
    text = human_check.describe(run, [])
    assert "python -m cfa_lib.review export" in text and "A5_option_bias_test.review.csv" in text


def test_a_human_check_means_a_person_and_a_models_labels_say_so(tmp_path):
    from cfa_lib.experiments.option_bias import OPTION_BIAS

    shipped = human_check.reviewed_runs(None, OPTION_BIAS)
    assert len(shipped) == 2 and not any(r.score.by_a_person for r in shipped)
    assert all(r.label.endswith(", labels by a model") for r in shipped)  # in every table's and the figure's rows
    assert "a model acting as a careful CFA grader, not a person" in human_check.describe(None, shipped)
    results = option_bias_file(tmp_path)
    path = beside(results)
    main(["export", str(results), "--out", str(path)])
    rows = [row for _, row in read_rows(path)]
    rows[0].update(reviewer="ada", verdict="correct")  # reviewer_kind left empty: a person
    write_review(rows, path)
    ours = human_check.reviewed_runs(load_results(results), OPTION_BIAS)[0]
    assert ours.score.by_a_person and ours.label == "test-model" and ours.score.reviewer_kinds == ("person",)


def test_an_unknown_reviewer_kind_is_named_by_its_row(tmp_path):
    from cfa_lib.review.spreadsheet import ReviewFileError

    results = option_bias_file(tmp_path)
    path = beside(results)
    main(["export", str(results), "--out", str(path)])
    rows = [row for _, row in read_rows(path)]
    rows[1].update(reviewer="bot", reviewer_kind="robot", verdict="correct")
    write_review(rows, path)
    with pytest.raises(ReviewFileError, match=r"row 3: reviewer_kind 'robot' is not one of person, model"):
        score_review(load_results(results), path)
