"""Issue #35: the signals that point at a key, the shipped audit's rules, and every figure on audited keys."""

from __future__ import annotations

import json

import pytest

from cfa_lib.data import load_dataset
from cfa_lib.experiments.registry import load_results
from cfa_lib.key_audit import apply_audit, key_audit
from cfa_lib.key_audit.census import census
from cfa_lib.key_audit.records import KeyAuditError, read_audit
from cfa_lib.key_audit.signals import candidates
from cfa_lib.paths import REFERENCE_DIR

GPT4O_MINI = REFERENCE_DIR / "A5_option_bias_gpt-4o-mini.json"


@pytest.fixture(scope="module")
def easy_candidates():
    return {c.question.id: c for c in candidates("easy")}


def test_signals_name_their_evidence(easy_candidates):
    # the study's two models give A in all four runs; the census's computation t = 2.802 > 2.756 contradicts C
    easy_108 = easy_candidates["easy_108"]
    assert easy_108.pointed == "A" and set(easy_108.signals) == {"models_agree", "computation"}
    assert "4 of their 4 recorded answers name A" in easy_108.signals["models_agree"]
    assert "Question 8" in easy_candidates["easy_131"].signals["missing_material"]
    assert len(easy_candidates) == 53 and list(easy_candidates)[:2] == ["easy_108", "easy_131"]  # strongest first
    challenge = {c.question.id: c for c in candidates("challenge")}
    assert "computation" in challenge["challenge_67"].signals  # the fee's argmin is C, not the key B


def _line(**fields):
    review = {"reviewer": "R", "kind": "model", "verdict": "key_wrong", "corrected": "A", "reason": "t > critical"}
    return json.dumps({"question_id": "easy_108", "verdict": "key_wrong", "corrected": "A",
                       "reviews": [review, {**review, "reviewer": "S"}], **fields})


@pytest.mark.parametrize(("line", "message"), [
    (_line(corrected="C"), "needs a corrected letter among A, B, not 'C'"),
    (_line(reviews=[{"reviewer": "R", "kind": "model", "verdict": "key_wrong", "corrected": "A", "reason": ""}]),
     "needs two independent reviews that agree, or a written resolution"),
    (_line(reviews=[{"reviewer": "R", "kind": "robot", "verdict": "key_right", "corrected": None, "reason": ""}]),
     "reviewer kind 'robot' is not person or model"),
    (_line(verdict="wrong"), "verdict 'wrong' is not one of key_right"),
])
def test_an_audit_line_that_breaks_a_rule_is_named(tmp_path, line, message):
    path = tmp_path / "easy.jsonl"
    path.write_text(_line(question_id="easy_1", verdict="key_right", corrected=None, reviews=[]) + "\n" + line + "\n")
    with pytest.raises(KeyAuditError, match=message) as error:
        read_audit(str(path), "easy")
    assert f"{path}:2" in str(error.value)


def test_two_agreeing_reviews_correct_a_key(tmp_path):
    path = tmp_path / "easy.jsonl"
    path.write_text(_line() + "\n")
    record = read_audit(str(path), "easy")["easy_108"]
    assert (record.original, record.verdict, record.key, record.by_model) == ("C", "key_wrong", "A", True)


def test_the_audit_regrades_a_study_run(tmp_path):
    """easy_108's key corrected to A (both reviews agree) and easy_131 set aside (it needs Question 8's data): on
    gpt-4o-mini's option-bias run, Format A's letter A becomes right, the judge's Format B verdict against C is set
    aside, and both formats of easy_131 are excluded; the original keys leave the run as it was."""
    from cfa_lib.experiments.option_bias import OPTION_BIAS

    review = {"reviewer": "R", "kind": "model", "verdict": "unclear", "corrected": None, "reason": "Question 8"}
    path = tmp_path / "easy.jsonl"
    path.write_text(_line() + "\n" + json.dumps({"question_id": "easy_131", "verdict": "unclear", "corrected": None,
                                                 "reviews": [review, {**review, "reviewer": "S"}]}) + "\n")
    run = load_results(GPT4O_MINI, keys="original")
    rows, changes = OPTION_BIAS.audit(run.regraded_rows, read_audit(str(path), "easy"))
    assert changes == {"key corrected by the audit: Format A re-graded, Format B set aside": 1,
                       "set aside by the key audit (unclear)": 1}
    by_id = {row.question_id: row for row in rows}
    easy_108, easy_131 = by_id["easy_108"], by_id["easy_131"]
    assert (easy_108.correct_answer, easy_108.correct_with_options) == ("A", True)
    assert (easy_108.without_options.excluded, easy_131.with_options.excluded) == ("key_corrected", "key_set_aside")
    summary = OPTION_BIAS.summarize(rows, run.metadata)
    assert (summary.n_paired, summary.contingency.both_wrong) == (1030, 51)  # 1032 - 2 pairs; both were wrong


def test_the_shipped_audit():
    """Every candidate and 20 controls reviewed twice, blind: 15 keys corrected (13 Easy, 2 Challenge), 6 Easy
    questions set aside; a run grades against the audited keys and leaves the set-aside questions out, listed."""
    easy, challenge = census("easy"), census("challenge")
    assert (easy["candidates"], challenge["candidates"], easy["controls"] + challenge["controls"]) == (53, 6, 20)
    assert easy["corrected"]["easy_108"] == "C -> A" and challenge["corrected"]["challenge_67"] == "B -> C"
    assert (len(easy["corrected"]), len(challenge["corrected"]), len(easy["set_aside"])) == (13, 2, 6)
    assert easy["set_aside"]["easy_131"] == "unclear" and easy["set_aside"]["easy_61"] == "several_right"
    assert all(v.kind == "model" for r in key_audit("easy").values() for v in r.reviews)  # no person yet
    questions, changes = apply_audit(load_dataset("easy"))
    assert len(questions) == 1032 - 6 and changes.corrected["easy_108"] == ("C", "A")
    assert {q.id: q.answer for q in questions}["easy_108"] == "A" and "easy_131" in changes.set_aside
    assert apply_audit(load_dataset("easy"), "original")[0] == load_dataset("easy")


def test_an_unknown_keys_value_is_named():
    with pytest.raises(ValueError, match="keys='dataset' is not valid: accepted values are 'audited' and 'original'"):
        load_results(GPT4O_MINI, keys="dataset")
