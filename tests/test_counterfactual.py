"""Counterfactual metrics: paired on the same questions, and the original study's formulas reproduced."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from cfa_lib.experiments import counterfactual as cf
from cfa_lib.experiments.counterfactual_summary import summarize
from cfa_lib.experiments.loading import load_run
from cfa_lib.paths import REFERENCE_DIR
from cfa_lib.report import notebook_tables


def row(original: bool | None, *perturbed: bool | None, level: int = 1) -> dict:
    return {"original": {"correct": original, "answer": "A"},
            "perturbations": [{"level": level, "valid": p is not None, "correct": p} for p in perturbed]}


def test_metrics_on_a_hand_made_run() -> None:
    rows = [row(True, True), row(True, False), row(False, False), row(True, None), row(False, True)]
    s = summarize([cf.Row.from_dict(row) for row in rows], [1])
    level = s.perturbation_levels["1"]
    assert level.n_valid == 4 and level.n_paired == 4
    assert level.accuracy_original_on_valid == 0.5 and level.accuracy == 0.5
    assert level.memorization_gap == 0.0 and level.consistency_score == 1.0
    assert (level.mcnemar_test.b, level.mcnemar_test.c) == (1, 1)
    assert s.accuracy_original == 0.6 and s.n_tested == 4
    assert s.robust_accuracy == 0.25  # right on the original and on every valid perturbation
    assert s.memorization_suspect == 0.25
    # The study's formulas: all originals minus the perturbed; untested questions counted as robust.
    assert level.memorization_gap_as_published == pytest.approx(0.1)
    assert s.as_published.robust_accuracy == 0.4


@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-5-mini"])
def test_reference_runs_recompute_their_own_summary(model: str) -> None:
    path = REFERENCE_DIR / f"I1_counterfactual_{model}.json"
    mine, theirs = load_run(cf.COUNTERFACTUAL, path).as_published, json.loads(path.read_text())["summary"]
    level, their_level = mine.perturbation_levels["1"], theirs["perturbation_levels"]["1"]
    assert round(mine.accuracy_original, 4) == theirs["accuracy_original"]
    assert level.n_valid == their_level["n_valid"]
    assert round(level.accuracy, 4) == their_level["accuracy"]
    assert round(level.memorization_gap_as_published, 4) == their_level["memorization_gap"]
    assert round(mine.as_published.robust_accuracy, 4) == theirs["robust_accuracy"]
    assert round(mine.as_published.memorization_suspect, 4) == theirs["memorization_suspect"]
    # On the same questions the gap is smaller for gpt-4o-mini: 17.1 pp, not the published 18.6 pp.
    if model == "gpt-4o-mini":
        assert round(level.memorization_gap, 3) == 0.171


@pytest.mark.parametrize("model, unchanged, said, valid, gap", [
    ("gpt-4o-mini", 216, 45, 441, 0.249), ("gpt-5-mini", 193, 34, 411, 0.482)])
def test_reference_runs_regraded_drop_perturbations_that_changed_nothing(model, unchanged, said, valid, gap) -> None:
    """A third of the study's "valid" level-1 perturbations recorded no change (easy_0: changes_made [])."""
    run = load_run(cf.COUNTERFACTUAL, REFERENCE_DIR / f"I1_counterfactual_{model}.json", keys="original")
    assert run.regrade_changes == {"no recorded change": unchanged, "the change list says nothing changed": said}
    level = run.summary.perturbation_levels["1"]
    assert level.n_valid == valid and round(level.memorization_gap, 3) == gap


def test_a_change_list_that_names_a_change_keeps_the_perturbation() -> None:
    assert cf.unchanged_reason({"valid": True, "changes_made": []}) == "no recorded change"
    assert cf.unchanged_reason({"valid": True, "changes_made": ["No numerical values were changed."]})
    assert cf.unchanged_reason({"valid": True, "changes_made": ["Changed the rate from 4.00% to 5.00%"]}) is None
    assert cf.unchanged_reason({"valid": True, "changed": ["r"]}) is None


def test_the_summary_reports_the_separating_items_beside_all_valid_ones() -> None:
    """Before, the summary had no separating items: easy_234's decisions (its key cannot flip) counted in the gap
    as much as easy_10's flipped ones. Here a model that answers every original right and keeps the original's
    key: right on the items that keep it, wrong on the flipped ones; on separating items the gap is 100 pp."""
    from cfa_lib.data import questions_by_id
    from cfa_lib.perturbation import load_templates, template_perturbations

    questions, templates = questions_by_id("easy"), load_templates("easy")
    rows = []
    for question_id in ("easy_234", "easy_10"):
        question = questions[question_id]
        records = [r for seed in range(2) for r in template_perturbations([question], templates, (1,), seed)]
        perturbations = [{**r.to_dict(), "valid": r.valid, "model_answer": question.answer,
                          "correct": r.correct_letter == question.answer}
                         for r in records]
        rows.append(cf.Row.from_dict({"question_id": question_id, "correct_answer": question.answer,
                                      "original": {"correct": True, "answer": question.answer},
                                      "perturbations": perturbations}))
    assert [p["separating"] for p in rows[0].perturbations] == [False, False]  # easy_234 never flips
    assert sorted(p["separating"] for p in rows[1].perturbations) == [False, True]  # easy_10: one flip of two
    s = summarize(rows, [1])
    level = s.perturbation_levels["1"]
    assert (level.n_paired, level.memorization_gap) == (4, 0.25)
    assert (level.separating.n_valid, level.separating.n_paired, level.separating.memorization_gap) == (1, 1, 1.0)
    assert (s.robust_accuracy, s.n_tested_separating, s.robust_accuracy_separating) == (0.5, 1, 0.0)
    assert "separating items (paired)" in notebook_tables.counterfactual_accuracy(
        SimpleNamespace(summary=s)).columns
