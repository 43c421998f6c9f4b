"""The labelling widget's state machine, driven from Python: label, save at once, resume, reveal after."""

from __future__ import annotations

import pytest

from cfa_lib.experiments.registry import load_results
from cfa_lib.review.spreadsheet import read_rows
from cfa_lib.review.widget import ReviewSession, ReviewWidget
from tests.review_cases import option_bias_file


@pytest.fixture
def run_and_path(tmp_path):
    results = option_bias_file(tmp_path, ours=True)
    return load_results(results), tmp_path / "review.csv"


def test_label_saves_at_once_and_reveals_only_after(run_and_path):
    run, path = run_and_path
    session = ReviewSession(run, path, "ada", n=10, seed=1)
    assert path.exists() and session.progress == (0, 10)
    shown = session.shown()
    assert "verdict" not in shown and "path" not in shown and session.revealed is None
    first = session.current
    revealed = session.label("incorrect", note="no final line")
    assert revealed.toolkit == first.verdict and revealed.path == "judge" and revealed.yours == "incorrect"
    saved = {row["item_id"]: row for _, row in read_rows(path)}
    assert (saved[first.item_id]["verdict"], saved[first.item_id]["reviewer"]) == ("incorrect", "ada")
    assert saved[first.item_id]["note"] == "no final line"
    with pytest.raises(ValueError, match="labelled already"):
        session.label("correct")
    second = session.next()
    assert second.item_id != first.item_id and session.revealed is None
    with pytest.raises(ValueError, match="accepted values are correct, incorrect, cannot_tell"):
        session.label("maybe")


def test_a_new_session_resumes_where_the_reviewer_stopped(run_and_path):
    run, path = run_and_path
    session = ReviewSession(run, path, "ada", n=10)
    session.label("correct")
    session.next()
    session.label("cannot_tell")
    resumed = ReviewSession(run, path, "ada")
    assert resumed.progress == (2, 10)
    assert resumed.current.item_id == session.mine[2]["item_id"]


def test_a_second_reviewer_gets_rows_of_their_own(run_and_path):
    run, path = run_and_path
    ada = ReviewSession(run, path, "ada", n=10)
    ada.label("correct")
    bo = ReviewSession(run, path, "bo")
    assert bo.progress == (0, 10) and bo.current.item_id == ada.mine[0]["item_id"]
    bo.label("incorrect")
    rows = [row for _, row in read_rows(path)]
    assert len(rows) == 20 and {r["reviewer"] for r in rows} == {"ada", "bo"}


def test_every_item_labelled_ends_the_session(run_and_path):
    run, path = run_and_path
    session = ReviewSession(run, path, "ada", n=10)
    while not session.done:
        session.label("correct")
        session.next()
    assert session.progress == (10, 10) and session.current is None
    with pytest.raises(ValueError, match="nothing to label"):
        session.label("correct")


def test_the_view_reveals_after_a_button(run_and_path):
    run, path = run_and_path
    view = ReviewWidget(ReviewSession(run, path, "ada", n=10))
    assert "toolkit" not in view.result.value and "Question" in view.body.value
    button = next(b for b in view.buttons.children if b.description == "1 correct")
    button.click()
    assert "the toolkit's" in view.result.value and not view.next_button.disabled
    assert "1 of 10 labelled" in view.header.value and all(b.disabled for b in view.buttons.children)
    view.next_button.click()
    assert "1 of 10 labelled" in view.header.value and view.result.value == ""


def test_the_view_takes_a_verdict_by_its_number(run_and_path):
    run, path = run_and_path
    view = ReviewWidget(ReviewSession(run, path, "ada", n=10))
    first = view.session.current.item_id
    view.keys.value = "3"  # the third allowed verdict: cannot_tell
    saved = {row["item_id"]: row["verdict"] for _, row in read_rows(path)}
    assert saved[first] == "cannot_tell" and "cannot_tell" in view.result.value
    view.keys.value = "2"  # answered already: ignored until the next item
    assert {row["item_id"]: row["verdict"] for _, row in read_rows(path)}[first] == "cannot_tell"
    view.keys.value = "n"
    assert view.session.current.item_id != first
