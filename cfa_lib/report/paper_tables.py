"""The paper's tables, from collected runs: one column per run, and the tables that say which runs.

Each table row is a name, a getter of the summary and a formatter, so the same rows give the shown table
(text) and the CSV (raw values). Model text is shown as data (a DataFrame, escaped when rendered as
HTML), never as markup.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from cfa_lib import perturbation
from cfa_lib.experiments import counterfactual
from cfa_lib.experiments.counterfactual_summary import CounterfactualSummary, PerturbationLevel
from cfa_lib.experiments.option_bias import OPTION_BIAS
from cfa_lib.experiments.option_bias_summary import OptionBiasSummary
from cfa_lib.experiments.registry import experiment_showing
from cfa_lib.experiments.three_tier_summary import ThreeTierSummary
from cfa_lib.paths import display_path, resolve
from cfa_lib.perturbation.review import read_review, review_path, reviewed_rate
from cfa_lib.report import shaping
from cfa_lib.report.format import (
    DASH,
    ci,
    count,
    count_pct,
    decimal,
    excerpt,
    if_testable,
    p_cell,
    paired,
    pct,
    pp,
    text,
)
from cfa_lib.report.runs import Run, summaries

TableRow = tuple[str, Callable[[Any], Any], Callable[[Any], str]]  # name, getter of a summary, formatter


# The runs behind the report ----------------------------------------------------------------------------

def runs_overview(runs: Mapping[str, Sequence[Run]]) -> pd.DataFrame:
    """Which file stands behind each label: the first table a reader should see."""
    rows = [
        {
            "experiment": name,
            "label": run.label,
            "dataset": run.metadata.get("dataset"),
            "questions": run.summary.n_questions,
            "source": run.source,
            "file": display_path(run.path),
        }
        for name, group in runs.items()
        for run in group
    ]
    return pd.DataFrame(rows, columns=["experiment", "label", "dataset", "questions", "source", "file"]
                        ).set_index(["experiment", "label"])


def regrade_changes(runs: Mapping[str, Sequence[Run]]) -> pd.DataFrame:
    """How many rows of each imported file this toolkit's rules changed, and why."""
    rows = [{"experiment": experiment, "run": run.label.replace(" (reference, re-graded)", ""), "rule": rule,
             "rows changed": n}
            for experiment, group in runs.items() for run in group
            if run.reference and not run.as_published
            for rule, n in run.loaded.regrade_changes.items()]
    return pd.DataFrame(rows, columns=["experiment", "run", "rule", "rows changed"]).set_index(
        ["experiment", "run", "rule"])


# The paper's tables: one column per run ----------------------------------------------------------------

def _rate_and_ci(name: str, rate: Callable[[Any], Any], interval: Callable[[Any], Any], ci_name: str = "  95% CI"
                 ) -> list[TableRow]:
    """A rate and, on the next row, its 95% interval."""
    return [(name, rate, pct), (ci_name, interval, ci)]


def _test(s: Any, value: float | None) -> Any:
    """A statistic of McNemar's test of a paired summary, or why it is not read (`format.if_testable`)."""
    return if_testable(value, s.n_paired, s.mcnemar_test.b, s.mcnemar_test.c)


OPTION_BIAS_ROWS: list[TableRow] = [
    ("open-answerable questions paired", lambda s: s.answerable.n_paired, count),
    ("  option bias on them (pp)", lambda s: paired(s.answerable.option_bias, s.answerable.n_paired), pp),
    ("  95% CI (pp) ", lambda s: paired(s.answerable.option_bias_ci, s.answerable.n_paired), ci),
    ("  McNemar p on them", lambda s: _test(s.answerable, s.answerable.mcnemar_test.p_value), p_cell),
    ("judge", shaping.judge_line, text),
    ("all questions paired", lambda s: s.n_paired, count),
    ("excluded (failed, cut short, no verdict)", lambda s: s.n_excluded, count),
    *_rate_and_ci("accuracy with options", lambda s: s.accuracy_with_options, lambda s: s.accuracy_with_options_ci),
    *_rate_and_ci("accuracy without options", lambda s: s.accuracy_without_options,
                  lambda s: s.accuracy_without_options_ci, "  95% CI "),
    ("option bias (pp)", lambda s: paired(s.option_bias, s.n_paired), pp),
    ("  95% CI (pp)", lambda s: paired(s.option_bias_ci, s.n_paired), ci),
    ("biased questions", lambda s: (s.n_biased_questions, s.bias_rate), count_pct),
    ("McNemar b (right only with options)", lambda s: s.mcnemar_test.b, count),
    ("McNemar c (right only without)", lambda s: s.mcnemar_test.c, count),
    ("McNemar chi2 (continuity-corrected)", lambda s: _test(s, s.mcnemar_test.chi2), decimal),
    ("McNemar p", lambda s: _test(s, s.mcnemar_test.p_value), p_cell),
    ("exact binomial p", lambda s: _test(s, s.mcnemar_test.p_exact), p_cell),
]


def _level(level: str) -> Callable[[ThreeTierSummary], Any]:
    return lambda s: (s.level_distribution[level], s.level_rates[level])


def _strict_lenient_gap(s: ThreeTierSummary) -> float | None:
    if s.lenient_accuracy is None or s.strict_accuracy is None:
        return None
    return s.lenient_accuracy - s.strict_accuracy


THREE_TIER_ROWS: list[TableRow] = [
    ("answers graded", lambda s: s.n_graded, count),
    ("excluded (failed, cut short, no ground)", lambda s: s.n_excluded, count),
    *((f"Level {label}", _level(level), count_pct) for level, label in shaping.LEVEL_LABELS.items()),
    *_rate_and_ci("strict accuracy (A)", lambda s: s.strict_accuracy, lambda s: s.strict_accuracy_ci),
    *_rate_and_ci("lenient accuracy (A + B)", lambda s: s.lenient_accuracy, lambda s: s.lenient_accuracy_ci,
                  "  95% CI "),
    ("strict − lenient gap (pp)", _strict_lenient_gap, pp),
    ("no answer (refusal, hedge; counted as C)", lambda s: s.no_answer, count),
    ("open-answerable answers graded", lambda s: s.answerable.n_graded, count),
    ("  strict accuracy on them", lambda s: s.answerable.strict_accuracy, pct),
    ("  lenient accuracy on them", lambda s: s.answerable.lenient_accuracy, pct),
    ("judge", shaping.judge_line, text),
]


def _at_level(level: str, read: Callable[[PerturbationLevel], Any]) -> Callable[[CounterfactualSummary], Any]:
    """A value of one perturbation level, or None for a run without that level."""
    return lambda s: None if (at := s.perturbation_levels.get(level)) is None else read(at)


def _counterfactual_rows(summaries_: Mapping[str, CounterfactualSummary]) -> list[TableRow]:
    levels = sorted({str(k) for s in summaries_.values() for k in s.perturbation_levels})
    rows = _rate_and_ci("accuracy on original questions", lambda s: s.accuracy_original,
                        lambda s: s.accuracy_original_ci)
    for level in levels:
        name = f"level {level} ({shaping.PERTURBATION_NAMES.get(level, '')})"
        rows += [
            (f"{name}: valid perturbations", _at_level(level, lambda lv: lv.n_valid), count),
            (f"{name}: original accuracy on them", _at_level(level, lambda lv: lv.accuracy_original_on_valid), pct),
            (f"{name}: perturbed accuracy", _at_level(level, lambda lv: lv.accuracy), pct),
            (f"{name}: 95% CI", _at_level(level, lambda lv: lv.accuracy_ci), ci),
            (f"{name}: memorization gap (pp)", _at_level(level, lambda lv: paired(lv.memorization_gap, lv.n_paired)),
             pp),
            (f"{name}: separating items (flipped, or the key moved beyond the window)",
             _at_level(level, lambda lv: lv.separating.n_valid), count),
            (f"{name}: perturbed accuracy on them", _at_level(level, lambda lv: lv.separating.accuracy), pct),
            (f"{name}: memorization gap on them (pp)",
             _at_level(level, lambda lv: paired(lv.separating.memorization_gap, lv.separating.n_paired)), pp),
        ]
    rows += [("robust accuracy", lambda s: s.robust_accuracy, pct),
             ("robust accuracy on separating items", lambda s: s.robust_accuracy_separating, pct),
             ("questions with a separating item answered", lambda s: s.n_tested_separating, count),
             ("memorization suspects", lambda s: s.memorization_suspect, pct)]
    return rows


def _table(rows: Sequence[TableRow], summaries_: Mapping[str, Any], numeric: bool) -> pd.DataFrame:
    data = {
        label: [get(s) if numeric else fmt(get(s)) for _, get, fmt in rows]
        for label, s in summaries_.items()
    }
    return pd.DataFrame(data, index=pd.Index([name for name, _, _ in rows], name=""), dtype=object)


def option_bias_table(summaries_: Mapping[str, OptionBiasSummary], numeric: bool = False) -> pd.DataFrame:
    """Table P1a: one column per model. `numeric=True` gives the raw values (fractions, counts) for CSV."""
    return _table(OPTION_BIAS_ROWS, summaries_, numeric)


def three_tier_table(summaries_: Mapping[str, ThreeTierSummary], numeric: bool = False) -> pd.DataFrame:
    """Table P1b: level counts and rates, strict and lenient accuracy, one column per model."""
    return _table(THREE_TIER_ROWS, summaries_, numeric)


def counterfactual_table(summaries_: Mapping[str, CounterfactualSummary], numeric: bool = False) -> pd.DataFrame:
    return _table(_counterfactual_rows(summaries_), summaries_, numeric)


def error_category_table(summaries_: Mapping[str, ThreeTierSummary], numeric: bool = False) -> pd.DataFrame:
    """Counts (share of categorised Level C answers) per category and model; `numeric=True`: the long
    table of counts and shares."""
    shares = shaping.error_category_shares(summaries_)
    if numeric or shares.empty:
        return shares if numeric else pd.DataFrame()
    cells = shares.assign(cell=[f"{int(c)} ({s:.1f}%)" for c, s in zip(shares["count"], shares["share"],
                                                                      strict=True)])
    table = cells.pivot(index="category", columns="model", values="cell").reindex(shaping.category_order(shares))
    table = table.fillna("0")[shaping.share_models(shares)]
    table.index = pd.Index([shaping.pretty_category(c) for c in table.index], name="")
    table.columns.name = None
    return table


# Each paper table by name; which experiment's runs it draws comes from the registry.
TABLES: dict[str, Callable[..., pd.DataFrame]] = {
    "table_p1_option_bias": option_bias_table,
    "table_p1_three_tier": three_tier_table,
    "table_counterfactual": counterfactual_table,
    "table_error_categories": error_category_table,
}


def write_table(table: pd.DataFrame, name: str, directory: str | Path) -> Path:
    directory = resolve(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.csv"
    table.to_csv(path)
    return path


def table(name: str, runs: Mapping[str, Sequence[Run]], tables_dir: str | Path | None = None) -> pd.DataFrame:
    """A paper table for display (formatted strings); its raw values are written to `tables_dir/name.csv`."""
    build = TABLES[name]
    by_label = summaries(runs.get(experiment_showing(name).name, []))
    shown, numeric = build(by_label), build(by_label, numeric=True)
    if tables_dir is not None and not numeric.empty:
        write_table(numeric, name, tables_dir)
    return shown


def biased_examples(runs: Mapping[str, Sequence[Run]], per_run: int = 2, length: int = 300) -> pd.DataFrame:
    """A few option-biased questions per option-bias run (`runs`: `collect_all`'s {experiment: runs}), with what
    the model said without the choices."""
    rows = []
    for run in runs.get(OPTION_BIAS.name, []):
        for r in [r for r in run.rows if r.option_biased][:per_run]:
            rows.append({
                "model": run.label,
                "question": r.question_id,
                "correct": r.correct_answer,
                "answer with options": r.answer_with,
                "verdict without options": r.judge_verdict,
                "response without options (excerpt)": excerpt(r.response_without or r.answer_without
                                                              or "(empty response)", length),
            })
    columns = ["model", "question", "correct", "answer with options", "verdict without options",
               "response without options (excerpt)"]
    return pd.DataFrame(rows, columns=columns).set_index(["model", "question"])


def _reviewed() -> str:
    """The last round of the blind review of generated items (both datasets), as "n of N, rate [CI]"."""
    path = review_path()
    if not path.exists():
        return "not reviewed"
    rate = reviewed_rate(read_review(path))
    return f"{rate['valid']} of {rate['items']}, {pct(rate['rate'])} {ci((rate['ci_low'], rate['ci_high']))}"


def counterfactual_reach(runs: Mapping[str, Sequence[Run]], dataset: str = "easy") -> pd.DataFrame:
    """The original study's level-1 perturbations beside this toolkit's: how many of the study's 'valid'
    ones changed nothing, on what kind of question the rest fell (the census), and how many new answers
    code computed."""
    classes = perturbation.question_classes(dataset)
    rest = "of which unchecked, on a question"
    rows = {}
    for run in runs.get(counterfactual.COUNTERFACTUAL.name, []):
        if not (run.reference and run.as_published and run.loaded.dataset == dataset):
            continue
        reach = counterfactual.study_reach(run.rows, run.loaded.regraded_rows, classes)
        gap = reach.on_computation
        rows[run.label.replace(" (reference, as published)", "") + ", original study"] = {
            "level-1 perturbations called valid": reach.called_valid,
            "of which changed nothing": reach.changed_nothing,
            f"{rest} with no number": reach.by_class.get(perturbation.NO_NUMBER, 0),
            f"{rest} whose numbers decide nothing": reach.by_class.get(perturbation.NOT_COMPUTATIONAL, 0),
            f"{rest} with a computation": sum(reach.by_class.get(kind, 0)
                                              for kind in (perturbation.TEMPLATED, perturbation.WITHOUT_TEMPLATE)),
            "new answer computed and verified by code": 0, "items valid in a blind review": "not reviewed",
            "valid at level 2": DASH, "valid at level 3": DASH,
            "gap on the computational ones, pp (new answers unverified)":
                f"{pp(gap.memorization_gap)} {ci(gap.memorization_gap_ci)}"}
    valid_now = perturbation.valid_per_level(dataset)
    rows["this toolkit, verified templates (seed 0)"] = {
        "level-1 perturbations called valid": valid_now[1], "of which changed nothing": 0,
        f"{rest} with no number": 0, f"{rest} whose numbers decide nothing": 0, f"{rest} with a computation": 0,
        "new answer computed and verified by code": valid_now[1],
        "items valid in a blind review": _reviewed(),
        **{f"valid at level {level}": n for level, n in valid_now.items() if level != 1},
        "gap on the computational ones, pp (new answers unverified)": DASH}
    return pd.DataFrame(rows)
