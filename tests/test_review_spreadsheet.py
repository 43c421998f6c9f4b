"""The spreadsheet round trip: a blind export, a filled file scored into known figures, bad lines named."""

from __future__ import annotations

import csv

import pytest

from cfa_lib.experiments.registry import load_results
from cfa_lib.review.__main__ import main
from cfa_lib.review.items import review_items
from cfa_lib.review.scoring import score_review
from cfa_lib.review.spreadsheet import COLUMNS, ReviewFileError, read_rows, write_review
from tests.review_cases import LONG, option_bias_file


def test_export_hides_the_verdict_and_keeps_the_whole_response(tmp_path, capsys):
    results = option_bias_file(tmp_path, ours=True)
    out = tmp_path / "review.csv"
    assert main(["export", str(results), "--n", "60", "--out", str(out)]) == 0
    assert "10 of 10 items" in capsys.readouterr().out
    rows = [row for _, row in read_rows(out)]
    assert tuple(rows[0]) == COLUMNS
    assert all(row["verdict"] == "" and row["reviewer"] == "" for row in rows)
    text = out.read_text(encoding="utf-8-sig")
    assert "JUDGE_CORRECT" not in text and "judge" not in text.lower().replace("judge_", "")
    assert not {"path", "toolkit_verdict", "status", "judge_verdict"} & set(rows[0])
    response = next(row["response"] for row in rows if row["item_id"] == "easy_3|B")
    assert response == f"3. {LONG}" and len(response) > 800  # whole, not cut
    assert {row["response_stored"] for row in rows} == {"whole"}
    from cfa_lib.data import questions_by_id

    question = questions_by_id("easy")["easy_3"]
    key = next(row["correct_option"] for row in rows if row["item_id"] == "easy_3|B")
    assert key == f"{question.answer}: {question.correct_text}"


def fill(path, verdicts: dict[str, str], reviewer: str = "ada") -> None:
    rows = [row for _, row in read_rows(path)]
    for row in rows:
        row["verdict"], row["reviewer"] = verdicts.get(row["item_id"], ""), reviewer
    write_review(rows, path)


def test_a_filled_file_scores_to_hand_computed_kappa_and_pi(tmp_path, capsys):
    results = option_bias_file(tmp_path)
    out = tmp_path / "review.csv"
    main(["export", str(results), "--out", str(out)])
    # Toolkit: easy_0..5 correct, easy_6..9 incorrect. Person: easy_0..3 correct, the rest incorrect,
    # plus easy_9 "cannot tell" on an eleventh row by nobody else: 8 of 10 agree -> kappa .6154, pi .6.
    person = {f"easy_{i}|B": "correct" if i < 4 else "incorrect" for i in range(10)}
    fill(out, person)
    score = score_review(load_results(results), out)
    assert (score.overall.n, score.overall.agree) == (10, 8)
    assert score.overall.kappa == pytest.approx(0.32 / 0.52)
    assert score.overall.pi == pytest.approx(0.6)
    assert score.confusion.loc["correct", "incorrect"] == 2
    # The judge decided all ten: p = .6; of its 6 "correct", 4 truly are; of its 4 "incorrect", none is.
    accuracy = score.accuracies[0]
    assert accuracy.raw == pytest.approx(0.6)
    assert accuracy.corrected == pytest.approx(0.6 * 4 / 6)
    assert accuracy.judge.q1 == pytest.approx(1.0) and accuracy.judge.q0 == pytest.approx(4 / 6)
    assert main(["score", str(results), str(out)]) == 0
    printed = capsys.readouterr().out
    assert "agreement 8/10" in printed and "Cohen's kappa 0.615" in printed and "Scott's pi 0.600" in printed


def test_cannot_tell_is_counted_and_excluded(tmp_path):
    results = option_bias_file(tmp_path)
    out = tmp_path / "review.csv"
    main(["export", str(results), "--out", str(out)])
    person = {f"easy_{i}|B": "correct" if i < 6 else "incorrect" for i in range(10)}
    person["easy_0|B"] = person["easy_9|B"] = "cannot_tell"
    fill(out, person)
    score = score_review(load_results(results), out)
    assert (score.overall.n, score.cannot_tell, score.overall.agree) == (8, 2, 8)


def test_a_malformed_row_is_named_by_the_row_a_spreadsheet_shows(tmp_path):
    results = option_bias_file(tmp_path)
    out = tmp_path / "review.csv"
    main(["export", str(results), "--out", str(out)])
    rows = [row for _, row in read_rows(out)]
    rows[0]["response"] = "first line\nsecond line"  # a quoted newline: still one row (row 2); the next is row 3
    rows[1]["verdict"] = "right"
    rows[2]["item_id"] = "easy_99|B"
    write_review(rows, out)
    with pytest.raises(ReviewFileError) as error:
        score_review(load_results(results), out)
    assert "row 3: verdict 'right'" in str(error.value)
    assert "row 4: item_id 'easy_99|B'" in str(error.value)
    assert "2 row(s)" in str(error.value)
    with out.open(encoding="utf-8-sig", newline="") as handle:
        assert len(list(csv.DictReader(handle))) == 10  # the file is left as it is


def test_two_reviewers_give_the_ceiling(tmp_path):
    results = option_bias_file(tmp_path)
    out = tmp_path / "review.csv"
    main(["export", str(results), "--out", str(out)])
    rows = [row for _, row in read_rows(out)]
    first = [dict(row, reviewer="ada", verdict="correct") for row in rows]
    second = [dict(row, reviewer="bo", verdict="correct" if i < 9 else "incorrect") for i, row in enumerate(rows)]
    write_review(first + second, out)
    score = score_review(load_results(results), out)
    assert score.reviewers == ("ada", "bo")
    assert (score.ceiling.n, score.ceiling.agree) == (10, 9)
    assert score.disagreeing_items == 1


def test_items_of_every_experiment_can_be_exported(tmp_path):
    from cfa_lib.paths import REFERENCE_DIR

    for name in ("A1_open_ended_gpt-5-mini.json", "I1_counterfactual_gpt-5-mini.json"):
        items = review_items(load_results(REFERENCE_DIR / name, keys="original"))
        assert items
    tier = {i.verdict for i in review_items(load_results(REFERENCE_DIR / "A1_open_ended_gpt-5-mini.json"))}
    assert tier == {"A", "B", "C"}
