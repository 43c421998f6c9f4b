"""Answer-format variants: prompt construction on real questions, grading, and the paired statistics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cfa_lib import prompts
from cfa_lib.data import load_dataset
from cfa_lib.experiments import option_bias as ob
from cfa_lib.experiments import variants as v
from cfa_lib.experiments.loading import LoadedRun, load_run
from cfa_lib.models import Completion
from cfa_lib.params import ParameterError
from cfa_lib.report import figures, notebook_tables
from cfa_lib.report.runs import variants_by_model
from tests.test_notebooks import only_results, outputs_text, papermill, run_env  # noqa: F401

QUESTIONS = {q.id: q for q in load_dataset("easy", limit=4)}
EASY_0, EASY_3 = QUESTIONS["easy_0"], QUESTIONS["easy_3"]


def answer(text: str, **kw) -> Completion:
    return Completion(text=text, model="test", **kw)


# Prompt construction --------------------------------------------------------------------------------------

def test_shuffled_moves_every_option_and_the_key_follows_its_text() -> None:
    # easy_3: A $112,555. B $113,330. C $113,733 (key C)
    q = v.shuffled(EASY_3)
    assert q.choices == {"A": "$113,733", "B": "$112,555.", "C": "$113,330."}
    assert q.answer == "A" and q.correct_text == EASY_3.correct_text == "$113,733"
    assert v.shuffle_order(EASY_3) == {"A": "C", "B": "A", "C": "B"}
    assert all(q.choices[new] != EASY_3.choices[new] for new in q.choices)  # a derangement
    assert v.shuffled(EASY_3) == q and q.stem == EASY_3.stem and q.id == EASY_3.id  # seeded by the id
    messages = v.variant_requests([EASY_3], ["shuffled"])["easy_3", "shuffled"].messages
    assert messages == [{"role": "system", "content": prompts.MCQ_SYSTEM},
                        {"role": "user", "content": EASY_3.stem + "\n\nA: $113,733\nB: $112,555.\nC: $113,330."}]


def test_shuffled_orders_differ_between_questions() -> None:
    orders = {tuple(v.shuffle_order(q).values()) for q in load_dataset("easy", limit=30)}
    assert orders == {("C", "A", "B"), ("B", "C", "A")}  # both derangements of three options occur


def test_none_of_the_above_replaces_the_key_on_its_letter() -> None:
    q = v.none_of_the_above(EASY_0)  # key C "expected inflation."
    assert q.choices == {"A": "maturity.", "B": "liquidity.", "C": "None of the above."}
    assert q.answer == "C" and "expected inflation" not in q.mcq_text()
    first = v.none_of_the_above(QUESTIONS["easy_2"])  # key A "daily."
    assert first.choices["A"] == prompts.NONE_OF_THE_ABOVE and first.answer == "A"
    assert first.choices["B"] == "quarterly."


def test_options_only_hides_the_stem() -> None:
    messages = v.options_only(EASY_3)
    assert messages[0] == {"role": "system", "content": prompts.OPTIONS_ONLY_SYSTEM}
    assert messages[1]["content"] == "Which option is most likely correct?\n\nA: $112,555.\nB: $113,330.\nC: $113,733"
    assert "75,000" not in json.dumps(messages)


def test_reason_then_choose_continues_the_format_b_conversation() -> None:
    reply = "FV = 75,000 × 1.0175^24 = 113,733.21\nFINAL ANSWER: $113,733"
    requests = v.variant_requests([EASY_3], ["reason_then_choose"], {"easy_3": answer(reply)})
    messages = requests["easy_3", "reason_then_choose"].messages
    assert messages[:2] == prompts.open_messages(EASY_3)
    assert messages[2] == {"role": "assistant", "content": reply}
    assert messages[3]["role"] == "user" and "Now choose the option that matches your answer" in messages[3]["content"]
    assert "A: $112,555.\nB: $113,330.\nC: $113,733" in messages[3]["content"]
    # No complete Format B reply: no request, and the row says why (excluded, not wrong).
    cut = answer("FV = 75,000 × ", finish_reason="length")
    assert v.variant_requests([EASY_3], ["reason_then_choose"], {"easy_3": cut}) == {}
    row = v.grade_variant("reason_then_choose", EASY_3, None)
    assert row["status"] == "skipped" and row["correct"] is None


def test_variants_parameter_is_checked_like_the_others() -> None:
    assert v.check_variants([]) == [] and v.check_variants(None) == []
    assert v.check_variants('["shuffled", "options_only"]') == ["options_only", "shuffled"]
    assert v.check_variants("shuffled") == ["shuffled"]
    with pytest.raises(ParameterError, match=r"Parameter variants=\['shufled'\] is not valid: accepted values "
                                             r"are a list drawn from 'options_only', 'none_of_the_above', "
                                             r"'shuffled', 'reason_then_choose'"):
        ob.Options(variants=["shufled"])


# Grading ------------------------------------------------------------------------------------------------

def test_each_variant_is_graded_against_its_own_key() -> None:
    # shuffled easy_3: the key $113,733 is now A; answering C is the old position, now $113,330.
    right = v.grade_variant("shuffled", EASY_3, answer("ANSWER: A"), answer_with="C")
    assert right["correct"] is True and right["original_letter"] == "C" and right["same_option_as_mcq"] is True
    stuck = v.grade_variant("shuffled", EASY_3, answer("ANSWER: C"), answer_with="C")
    assert stuck["correct"] is False and stuck["original_letter"] == "B" and stuck["same_option_as_mcq"] is False
    nota = v.grade_variant("none_of_the_above", EASY_0, answer("None fits. ANSWER: C"))
    assert nota["correct"] is True and nota["key"] == "C"
    assert v.grade_variant("options_only", EASY_0, answer("ANSWER: B"))["correct"] is False
    cut = v.grade_variant("options_only", EASY_0, answer("Looking at the options,", finish_reason="length"))
    assert cut["status"] == "truncated" and cut["correct"] is None
    failed = v.grade_variant("options_only", EASY_0, answer("", error="timeout", error_kind="failed"))
    assert failed["status"] == "failed" and failed["correct"] is None
    none = v.grade_variant("options_only", EASY_0, answer("I cannot tell without the question."))
    assert none["status"] == "no_answer" and none["correct"] is False


# Statistics on a known table ---------------------------------------------------------------------------

def table_rows(both: int, mcq_only: int, variant_only: int, neither: int, excluded: int = 0) -> list[ob.Row]:
    """Option-bias rows whose options_only outcome against Format A is the given 2x2 table."""
    cells = [(True, True)] * both + [(True, False)] * mcq_only + [(False, True)] * variant_only + \
        [(False, False)] * neither + [(True, None)] * excluded
    return [ob.Row(question_id=f"q{i}", correct_with_options=mcq, correct_without_options=None, judge_verdict="x",
                   answer_with="A",
                   variants={"options_only": {"correct": var, "letter": "A", "key": "A", "n_options": 3,
                                              "status": "answered" if var is not None else "truncated"}})
            for i, (mcq, var) in enumerate(cells)]


def test_variant_summary_on_a_known_table() -> None:
    """b = 21 right only in Format A, c = 9 right only in the variant: McNemar chi2 4.0333, p 0.0446."""
    rows = table_rows(both=50, mcq_only=21, variant_only=9, neither=20, excluded=3)
    s = v.summarize_variants(rows, ["options_only"])["options_only"]
    assert {"n", "accuracy", "accuracy_ci", "difference_vs_mcq", "difference_ci", "mcnemar"} <= set(s.to_dict())
    assert s.n == 100 and s.accuracy == pytest.approx(0.59) and s.accuracy_mcq == pytest.approx(0.71)
    assert s.difference_vs_mcq == pytest.approx(-0.12)
    assert s.mcnemar.b == 21 and s.mcnemar.c == 9
    assert s.mcnemar.chi2 == pytest.approx(4.0333, abs=1e-4)
    assert s.mcnemar.p_value == pytest.approx(0.0446, abs=1e-4) and s.mcnemar.significant
    low, high = s.difference_ci
    assert low < -0.12 < high < 0
    assert s.accuracy_ci[0] < 0.59 < s.accuracy_ci[1]
    assert s.chance_level == pytest.approx(1 / 3) and s.status == {"answered": 100, "truncated": 3}


def test_shuffled_summary_counts_letters_and_consistency() -> None:
    rows = []
    for i, (letter, key, same) in enumerate([("A", "A", True), ("A", "B", False), ("A", "C", True), (None, "B", None)]):
        rows.append(ob.Row(question_id=f"q{i}", correct_with_options=True, correct_without_options=None,
                           judge_verdict="x", variants={"shuffled": {
                               "letter": letter, "key": key, "correct": None if letter is None else letter == key,
                               "status": "answered" if letter else "failed", "same_option_as_mcq": same,
                               "order": {"A": "C", "B": "A", "C": "B"}}}))
    s = v.summarize_variants(rows)["shuffled"]
    assert s.letter_distribution.to_dict() == {"n": 3, "answers": {"A": 3, "B": 0, "C": 0},
                                               "keys": {"A": 1, "B": 1, "C": 1}}
    assert s.consistency.to_dict() == {"n": 3, "same_option": 2, "share": pytest.approx(2 / 3)}
    assert s.n == 3 and s.accuracy == pytest.approx(1 / 3)


def loaded(rows: list[ob.Row], folder: Path) -> LoadedRun:
    """The rows written as one of our results files and read back, as a notebook gets them."""
    path = folder / "results.json"
    path.write_text(json.dumps({"metadata": {"experiment": "option_bias", "model": "local", "dataset": "easy"},
                                "summary": {}, "results": [r.to_dict() for r in rows]}), encoding="utf-8")
    return load_run(ob.OPTION_BIAS, path)


def test_rows_without_variants_keep_their_shape_and_report_none(tmp_path: Path) -> None:
    row = ob.Row(question_id="easy_0", correct_with_options=True, correct_without_options=True, judge_verdict="x")
    assert "variants" not in row.to_dict()
    run = loaded([row], tmp_path)
    assert v.summarize_variants(run.rows) == {} and notebook_tables.option_bias_variants(run).empty
    figures.variants_figure(variants_by_model(run))  # says there is nothing to draw


def test_variants_table_and_figure_from_rows(tmp_path: Path) -> None:
    run = loaded(table_rows(both=5, mcq_only=2, variant_only=1, neither=2), tmp_path)
    shown = notebook_tables.option_bias_variants(run)
    assert list(shown.index) == ["options only"] and shown.iloc[0]["note"] == "chance 33.3%"
    fig = figures.variants_figure(variants_by_model(run))
    assert any("chance" in t.get_text() for t in fig.axes[0].get_legend().get_texts())


# The notebook, end to end --------------------------------------------------------------------------------

@pytest.mark.slow
def test_option_bias_notebook_asks_every_variant(tmp_path: Path, run_env: dict[str, str]) -> None:  # noqa: F811
    out = tmp_path / "01v.ipynb"
    done = papermill("01_option_bias.ipynb", out, run_env, "model=local", "limit=4",
                     'variants=["options_only", "none_of_the_above", "shuffled", "reason_then_choose"]')
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(only_results(run_env, "option_bias").read_text())
    assert list(data["summary"]["variants"]) == list(v.VARIANTS)
    for name, s in data["summary"]["variants"].items():
        assert {"n", "accuracy", "accuracy_ci", "difference_vs_mcq", "difference_ci", "mcnemar"} <= set(s), name
        assert 0 <= s["n"] <= 4
        assert sum(s["status"].values()) == 4
    assert data["summary"]["variants"]["options_only"]["chance_level"] == pytest.approx(1 / 3)
    assert {"letter_distribution", "consistency"} <= set(data["summary"]["variants"]["shuffled"])
    assert all(set(r["variants"]) == set(v.VARIANTS) for r in data["results"])
    assert data["summary"]["usage"]["variants"]["n_calls"] >= 12
    text = outputs_text(out)
    assert "Traceback" not in text and "reason, then choose" in text and "image/png" in text
