"""The paper's tables: built from the original study's runs they reproduce those runs' own summaries,
our runs are told apart from imported ones, and model text stays text."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from cfa_lib.experiments.counterfactual import COUNTERFACTUAL
from cfa_lib.experiments.counterfactual_summary import summarize as summarize_counterfactual
from cfa_lib.experiments.loading import load_run
from cfa_lib.experiments.option_bias import OPTION_BIAS
from cfa_lib.paths import REFERENCE_DIR
from cfa_lib.report import notebook_tables, paper_tables
from cfa_lib.report import runs as report_runs
from cfa_lib.results import ResultsFileError
from cfa_lib.stats import wilson_interval


def file_summary(name: str) -> dict:
    return json.loads((REFERENCE_DIR / name).read_text(encoding="utf-8"))["summary"]


@pytest.fixture(scope="module")
def reference_option_bias(tmp_path_factory):
    return report_runs.collect_runs("option_bias", tmp_path_factory.mktemp("no_results"), include_reference=True)


def test_reference_runs_are_labelled_as_imported(reference_option_bias):
    assert [r.label for r in reference_option_bias] == [
        "gpt-4o-mini (reference, as published)", "gpt-4o-mini (reference, re-graded)",
        "gpt-5-mini (reference, as published)", "gpt-5-mini (reference, re-graded)"]
    assert {r.source for r in reference_option_bias} == {
        "imported from the original study (taiwanfifi/CFA_essay)"}


def test_p1_option_bias_table_reproduces_the_reference_runs_own_summaries(reference_option_bias):
    table = paper_tables.option_bias_table(report_runs.summaries(reference_option_bias), numeric=True)
    for label, name in (("gpt-4o-mini (reference, as published)", "A5_option_bias_gpt-4o-mini.json"),
                        ("gpt-5-mini (reference, as published)", "A5_option_bias_gpt-5-mini.json")):
        own, column = file_summary(name), table[label]
        assert column["accuracy with options"] == pytest.approx(own["accuracy_with_options"], abs=5e-5)
        assert column["accuracy without options"] == pytest.approx(own["accuracy_without_options"], abs=5e-5)
        assert column["option bias (pp)"] == pytest.approx(own["option_bias"], abs=1e-4)
        assert column["biased questions"][0] == own["n_biased_questions"]
        assert column["McNemar b (right only with options)"] == own["mcnemar_test"]["b"]
        assert column["McNemar c (right only without)"] == own["mcnemar_test"]["c"]
        assert column["McNemar chi2 (continuity-corrected)"] == pytest.approx(own["mcnemar_test"]["chi2"], abs=1e-4)
        assert column["McNemar p"] == pytest.approx(own["mcnemar_test"]["p_value"], abs=5e-4)


def test_p1_option_bias_table_prints_the_papers_numbers(reference_option_bias):
    table = paper_tables.option_bias_table(report_runs.summaries(reference_option_bias))
    mini = table["gpt-4o-mini (reference, as published)"]
    assert (mini["accuracy with options"], mini["accuracy without options"]) == ("82.6%", "80.6%")
    assert mini["option bias (pp)"] == "+1.9"
    assert mini["biased questions"] == "147 (14.2%)"
    assert (mini["McNemar b (right only with options)"], mini["McNemar c (right only without)"]) == ("147", "127")
    assert (mini["McNemar chi2 (continuity-corrected)"], mini["McNemar p"]) == ("1.318", "0.251")
    five = table["gpt-5-mini (reference, as published)"]
    assert (five["accuracy with options"], five["accuracy without options"], five["McNemar p"]) == (
        "92.8%", "86.3%", "< 0.001")


def test_p1_three_tier_table_reproduces_the_reference_levels(tmp_path):
    runs = report_runs.collect_runs("three_tier", tmp_path, include_reference=True)
    table = paper_tables.three_tier_table(report_runs.summaries(runs))
    mini = table["gpt-4o-mini (reference, as published)"]
    assert (mini["Level A exact"], mini["Level B directional"], mini["Level C incorrect"]) == (
        "253 (24.5%)", "222 (21.5%)", "557 (54.0%)")
    assert (mini["strict accuracy (A)"], mini["lenient accuracy (A + B)"]) == ("24.5%", "46.0%")
    assert table["gpt-5-mini (reference, as published)"]["lenient accuracy (A + B)"] == "64.1%"
    # re-graded, on the audited keys: 18 answers judged against a corrected key or of a set-aside question leave
    assert table["gpt-4o-mini (reference, re-graded)"]["Level A exact"] == "241 (24.7%)"
    numeric = paper_tables.three_tier_table(report_runs.summaries(runs), numeric=True)
    own = file_summary("A1_open_ended_gpt-5-mini.json")
    assert numeric["gpt-5-mini (reference, as published)"]["strict accuracy (A)"] == pytest.approx(
        own["strict_accuracy"], abs=5e-5)


def test_error_category_table_gives_counts_and_shares_of_level_c(tmp_path):
    runs = report_runs.collect_runs("three_tier", tmp_path, include_reference=True)
    table = paper_tables.error_category_table(report_runs.summaries(runs))
    assert table.loc["Conceptual error", "gpt-4o-mini (reference, as published)"] == "383 (68.8%)"
    assert table.loc["Formula error", "gpt-5-mini (reference, as published)"] == "0"
    assert table.index[-1] == "Unknown"


def counterfactual_rows(*cells: tuple[bool, bool | None]) -> list:
    """Counterfactual rows of (original correct, level-1 perturbation correct; None: no valid perturbation)."""
    return [COUNTERFACTUAL.Row(original={"correct": original, "answer": "A"}, correct_answer="A",
                               perturbations=[{"level": 1, "valid": perturbed is not None, "correct": perturbed}])
            for original, perturbed in cells]


def test_counterfactual_table_has_one_block_per_level():
    """Six valid perturbations of originals half right: one stays right, so the gap is 3/6 − 1/6."""
    rows = counterfactual_rows((True, True), (True, False), (True, False), (False, False), (False, False),
                               (False, False), (True, None), (False, None))
    table = paper_tables.counterfactual_table({"local": summarize_counterfactual(rows, [1])})
    assert table.loc["level 1 (one number changed): valid perturbations", "local"] == "6"
    assert table.loc["level 1 (one number changed): memorization gap (pp)", "local"] == "6 pairs: too few (needs 20)"
    assert table.loc["level 1 (one number changed): perturbed accuracy", "local"] == "16.7%"
    assert table.loc["robust accuracy", "local"] == "16.7%"  # of the six tested questions
    assert table.loc["accuracy on original questions", "local"] == "50.0%"


def our_run(results_dir, model: str, dataset: str, stamp: str, rows: int = 40) -> None:
    """One of our results files, made from the reference rows so its numbers are known."""
    data = json.loads((REFERENCE_DIR / "A5_option_bias_gpt-4o-mini.json").read_text(encoding="utf-8"))
    data["metadata"].update(experiment="option_bias", model=model, dataset=dataset, timestamp=stamp)
    data["results"] = data["results"][:rows]
    path = results_dir / "option_bias" / f"{stamp}_{model}_{dataset}" / "results.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_our_latest_runs_come_first_and_are_labelled_by_dataset_when_datasets_differ(tmp_path):
    our_run(tmp_path, "local", "easy", "20260101T000000Z", rows=20)
    our_run(tmp_path, "local", "easy", "20260102T000000Z", rows=40)  # the newer run of the same pair wins
    our_run(tmp_path, "local", "challenge", "20260101T000000Z", rows=10)
    runs = report_runs.collect_runs("option_bias", tmp_path, include_reference=True)
    labels = [r.label for r in runs]
    assert labels == ["local · challenge", "local · easy", "gpt-4o-mini · easy (reference, as published)",
                      "gpt-4o-mini · easy (reference, re-graded)", "gpt-5-mini · easy (reference, as published)",
                      "gpt-5-mini · easy (reference, re-graded)"]
    assert runs[1].source == "this toolkit" and runs[1].summary.n_paired == 40


def test_tables_are_written_as_csv_with_raw_values(tmp_path, reference_option_bias):
    shown = paper_tables.table("table_p1_option_bias", {"option_bias": reference_option_bias}, tmp_path / "tables")
    assert shown.loc["accuracy with options", "gpt-4o-mini (reference, as published)"] == "82.6%"
    csv = pd.read_csv(tmp_path / "tables" / "table_p1_option_bias.csv", index_col=0)
    assert float(csv.loc["McNemar b (right only with options)", "gpt-4o-mini (reference, as published)"]) == 147
    assert float(csv.loc["accuracy with options", "gpt-4o-mini (reference, as published)"]) == pytest.approx(852 / 1032)


def test_model_text_is_escaped_when_an_example_table_is_rendered(tmp_path):
    our_run(tmp_path, "local", "easy", "20260101T000000Z")
    path = next(tmp_path.glob("option_bias/*/results.json"))
    data = json.loads(path.read_text(encoding="utf-8"))
    biased = next(r for r in data["results"] if r["option_biased"])
    biased["answer_without"] = "<script>alert('x')</script> 8.15%"
    path.write_text(json.dumps(data), encoding="utf-8")
    runs = report_runs.collect_runs("option_bias", tmp_path, include_reference=False)
    html = paper_tables.biased_examples({"option_bias": runs})._repr_html_()
    assert "&lt;script&gt;alert(" in html
    assert "<script>" not in html


def test_no_runs_at_all_fails_early_naming_the_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        report_runs.collect_all(tmp_path, include_reference=False)


def test_a_file_of_another_experiment_is_refused_with_its_path(tmp_path):
    wrong = tmp_path / "wrong.json"
    shutil.copy(REFERENCE_DIR / "A1_open_ended_gpt-4o-mini.json", wrong)
    with pytest.raises(ResultsFileError, match="wrong.json"):
        load_run(OPTION_BIAS, wrong)


def test_model_labels_are_short_enough_for_a_legend():
    label = report_runs.model_label("local:/opt/models/qwen2.5-0.5b-instruct-q4.gguf")
    assert label == "local:qwen2.5-0.5b-instruct-q4.gguf"
    assert [report_runs.model_label(m) for m in ("local", "qwen3:32b", "ollama/llama3.1:8b", "gpt-4o-mini")] == [
        "local", "qwen3:32b", "ollama/llama3.1:8b", "gpt-4o-mini"]


def test_notebook_tables_of_one_loaded_run(reference_option_bias, tmp_path):
    run = reference_option_bias[0].loaded
    summary = notebook_tables.option_bias_summary(run)["all questions"]
    # re-graded: three refusals that the study's judge called correct are not (b 147 -> 150, keys="original");
    # on the audited keys 19 questions leave the pairs and letters are re-graded against 13 corrected keys
    assert (summary["accuracy with options"], summary["option bias (pp)"]) == ("83.7%", "+3.0")
    assert summary["McNemar b, c"] == "147, 117"
    assert int(notebook_tables.option_bias_contingency(run).to_numpy().sum()) == 1013  # 1032 less 19 set aside
    three_tier = report_runs.collect_runs("three_tier", tmp_path, include_reference=True)[0].loaded
    assert list(notebook_tables.three_tier_levels(three_tier)["questions"]) == [241, 208, 526]  # audited keys
    assert notebook_tables.three_tier_accuracy(three_tier)["value"]["strict accuracy"].startswith("24.7% [")
    counterfactual = report_runs.collect_runs("counterfactual", tmp_path, include_reference=True)[0].loaded
    coverage = notebook_tables.counterfactual_coverage(counterfactual)
    assert list(coverage.index) == ["level 1"] and coverage["share valid"].iloc[0].endswith("%")


def test_regrade_changes_count_what_the_toolkit_changed_in_each_imported_run(tmp_path):
    table = paper_tables.regrade_changes(report_runs.collect_all(tmp_path))
    assert table.loc[("option_bias", "gpt-5-mini", "refusal judged correct: not correct"), "rows changed"] == 56
    assert table.loc[("counterfactual", "gpt-4o-mini", "no recorded change"), "rows changed"] == 216


def test_top_level_load_results_reads_any_file_by_its_experiment():
    from cfa_lib import load_results

    run = load_results(REFERENCE_DIR / "A1_open_ended_gpt-5-mini.json")
    assert run.experiment == "three_tier"
    assert run.as_published.level_distribution == {"exact": 431, "directional": 230, "incorrect": 371}
    assert run.summary.n_graded == 975  # 993 on the dataset's keys; 16 judged against a corrected or set-aside key
    assert load_results(REFERENCE_DIR / "A1_open_ended_gpt-5-mini.json", keys="original").summary.n_graded == 993


def test_counterfactual_reach_splits_the_study_perturbations_by_the_census(tmp_path):
    """gpt-4o-mini's imported run: 702 level-1 perturbations called valid, 261 of which changed nothing;
    of the other 441, 256 fell on questions with no number and 66 on numbers that decide nothing."""
    table = paper_tables.counterfactual_reach(report_runs.collect_all(tmp_path, include_reference=True))
    study = table["gpt-4o-mini, original study"]
    assert study["level-1 perturbations called valid"] == 702
    assert study["of which changed nothing"] == 261
    assert [study[f"of which unchecked, on a question {kind}"] for kind in
            ("with no number", "whose numbers decide nothing", "with a computation")] == [256, 66, 119]
    assert study["new answer computed and verified by code"] == 0
    assert study["gap on the computational ones, pp (new answers unverified)"] == "+35.6 [23.7, 47.5]"  # audited
    ours = table["this toolkit, verified templates (seed 0)"]
    # issue #20: at least 80 Easy level-1 items stay valid at seed 0 (88 with the accounted templates)
    assert ours["new answer computed and verified by code"] == ours["level-1 perturbations called valid"] >= 80


def test_the_blind_review_table_gives_each_round_with_its_wilson_interval():
    """Round 0 of datasets/templates/review.jsonl: 142 of 160 items of the a625d2e templates valid."""
    table = notebook_tables.template_review()
    assert table.loc["round 0"].tolist() == [160, 18, "88.8% [82.9%, 92.8%]", "not asked", "not asked"]
    # round 5 (#32) also asked the memorizer's two questions: 10 and 17 of 160 items flagged
    assert table.loc["round 5"].tolist() == [160, 3, "98.1% [94.6%, 99.4%]", "6.2% [3.4%, 11.1%]",
                                             "10.6% [6.7%, 16.4%]"]
    # round 6 asked whether remembering the original's letter would do (62 of 160 kept it); round 7 followed the
    # rule that the key's letter moves: 12 flagged, 10 of them decisions that kept their key by design
    assert table.loc["round 6"].tolist() == [160, 0, "100.0% [97.7%, 100.0%]", "50.6% [43.0%, 58.3%]",
                                             "8.8% [5.3%, 14.2%]"]
    assert table.loc["round 7"].tolist() == [160, 1, "99.4% [96.5%, 99.9%]", "7.5% [4.3%, 12.7%]",
                                             "3.8% [1.7%, 7.9%]"]
    assert table.loc["round 8"].tolist() == [160, 4, "97.5% [93.7%, 99.0%]", "6.9% [3.9%, 11.9%]",
                                             "8.1% [4.8%, 13.4%]"]
    assert list(table.index) == [f"round {n}" for n in range(len(table))]
    low, high = wilson_interval(142, 160)
    assert (round(100 * low, 1), round(100 * high, 1)) == (82.9, 92.8)
