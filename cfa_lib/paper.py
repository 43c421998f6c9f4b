"""The paper's inputs: which runs are shown, under which label, and the tables built from them.

A figure or table must say where each number comes from, so every run carries a label that tells our
runs from the original study's ("gpt-4o-mini (reference)") and a source line. The tables take plain
summary dicts (label → summary), the same as the figures.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from cfa_lib import plots
from cfa_lib.experiments.common import excerpt, model_label
from cfa_lib.results import PROJECT_ROOT, latest_runs, load_results, reference_files

EXPERIMENTS = ("option_bias", "three_tier", "counterfactual")
REFERENCE_SOURCE = "imported from the original study (taiwanfifi/CFA_essay)"
OWN_SOURCE = "this toolkit"

Summary = Mapping[str, Any]


@dataclass(frozen=True)
class Run:
    """One results file as the paper shows it."""

    experiment: str
    label: str
    path: Path
    reference: bool
    data: dict[str, Any]

    @property
    def summary(self) -> dict[str, Any]:
        return self.data.get("recomputed_summary") or self.data["summary"]

    @property
    def metadata(self) -> dict[str, Any]:
        return self.data["metadata"]

    @property
    def source(self) -> str:
        return REFERENCE_SOURCE if self.reference else OWN_SOURCE


def resolve(path: str | Path) -> Path:
    """Relative paths are relative to the project root, so a notebook gives the same answer from any cwd."""
    path = Path(path)
    return path if path.is_absolute() else PROJECT_ROOT / path


def load_run(experiment: str, path: Path) -> dict[str, Any]:
    """The experiment module's `load` (summary recomputed from the rows); the file's own summary only
    while that module does not exist yet."""
    if experiment not in EXPERIMENTS:
        raise ValueError(f"experiment={experiment!r} is not valid: accepted values are "
                         f"{', '.join(EXPERIMENTS)}.")
    module_name = f"cfa_lib.experiments.{experiment}"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        data = load_results(path, experiment)
        data["recomputed_summary"] = {"n_questions": data["metadata"].get("n_questions"), **data["summary"]}
        return data
    return module.load(path)


def collect_runs(experiment: str, results_dir: str | Path = "results", include_reference: bool = True
                 ) -> list[Run]:
    """Our latest run per model and dataset, then (optionally) the original study's runs."""
    paths = [(p, False) for p in latest_runs(experiment, resolve(results_dir))]
    if include_reference:
        paths += [(p, True) for p in reference_files(experiment)]
    loaded = [(path, reference, load_run(experiment, path)) for path, reference in paths]
    datasets = {str(data["metadata"].get("dataset")) for _, _, data in loaded}
    runs = []
    for path, reference, data in loaded:
        meta = data["metadata"]
        label = model_label(str(meta.get("model", path.parent.name)))
        if len(datasets) > 1:
            label += f" · {meta.get('dataset')}"
        if reference:
            label += " (reference)"
        runs.append(Run(experiment, label, path, reference, data))
    return runs


def collect_all(results_dir: str | Path = "results", include_reference: bool = True) -> dict[str, list[Run]]:
    runs = {e: collect_runs(e, results_dir, include_reference) for e in EXPERIMENTS}
    if not any(runs.values()):
        raise FileNotFoundError(
            f"No results files under {resolve(results_dir)} and include_reference=False: run notebooks 01-03 "
            "(make notebooks) or set include_reference=True."
        )
    return runs


def summaries(runs: Sequence[Run]) -> dict[str, dict[str, Any]]:
    return {run.label: run.summary for run in runs}


def runs_overview(runs: Mapping[str, Sequence[Run]]) -> pd.DataFrame:
    """Which file stands behind each label: the first table a reader should see."""
    rows = [
        {
            "experiment": experiment,
            "label": run.label,
            "dataset": run.metadata.get("dataset"),
            "questions": run.summary.get("n_questions", run.metadata.get("n_questions")),
            "source": run.source,
            "file": _display_path(run.path),
        }
        for experiment, group in runs.items()
        for run in group
    ]
    return pd.DataFrame(rows, columns=["experiment", "label", "dataset", "questions", "source", "file"]
                        ).set_index(["experiment", "label"])


def _display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(PROJECT_ROOT))
    except ValueError:
        return path.name


# Tables ------------------------------------------------------------------------------------------------

Row = tuple[str, Callable[[Summary], Any], Callable[[Any], str]]


def _pct(value: Any) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _pp(value: Any) -> str:
    return "–" if value is None else f"{100 * value:+.1f}"


def _ci(value: Any) -> str:
    return "–" if value is None else f"[{100 * value[0]:.1f}, {100 * value[1]:.1f}]"


def _int(value: Any) -> str:
    return "–" if value is None else str(int(value))


def _float3(value: Any) -> str:
    return "–" if value is None else f"{value:.3f}"


def _p(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def _count_rate(count_key: str, rate_key: str) -> Callable[[Summary], Any]:
    return lambda s: None if s.get(count_key) is None else (s.get(count_key), s.get(rate_key))


def _fmt_count_rate(value: Any) -> str:
    return "–" if value is None else f"{int(value[0])} ({_pct(value[1])})"


def _mc(key: str) -> Callable[[Summary], Any]:
    return lambda s: (s.get("mcnemar_test") or {}).get(key)


OPTION_BIAS_ROWS: list[Row] = [
    ("questions paired", lambda s: s.get("n_paired", s.get("n_questions")), _int),
    ("excluded (failed calls)", lambda s: s.get("n_excluded"), _int),
    ("accuracy with options", lambda s: s.get("accuracy_with_options"), _pct),
    ("  95% CI", lambda s: s.get("accuracy_with_options_ci"), _ci),
    ("accuracy without options", lambda s: s.get("accuracy_without_options"), _pct),
    ("  95% CI ", lambda s: s.get("accuracy_without_options_ci"), _ci),
    ("option bias (pp)", lambda s: s.get("option_bias"), _pp),
    ("  95% CI (pp)", lambda s: s.get("option_bias_ci"), _ci),
    ("biased questions", _count_rate("n_biased_questions", "bias_rate"), _fmt_count_rate),
    ("McNemar b (right only with options)", _mc("b"), _int),
    ("McNemar c (right only without)", _mc("c"), _int),
    ("McNemar chi2 (continuity-corrected)", _mc("chi2"), _float3),
    ("McNemar p", _mc("p_value"), _p),
    ("exact binomial p", _mc("p_exact"), _p),
]


def _level(key: str) -> Callable[[Summary], Any]:
    def get(s: Summary) -> Any:
        count = (s.get("level_distribution") or {}).get(key)
        return None if count is None else (count, (s.get("level_rates") or {}).get(key))
    return get


THREE_TIER_ROWS: list[Row] = [
    ("answers graded", lambda s: s.get("n_graded", s.get("n_questions")), _int),
    ("excluded (failed calls)", lambda s: s.get("n_excluded"), _int),
    ("Level A exact", _level("exact"), _fmt_count_rate),
    ("Level B directional", _level("directional"), _fmt_count_rate),
    ("Level C incorrect", _level("incorrect"), _fmt_count_rate),
    ("strict accuracy (A)", lambda s: s.get("strict_accuracy"), _pct),
    ("  95% CI", lambda s: s.get("strict_accuracy_ci"), _ci),
    ("lenient accuracy (A + B)", lambda s: s.get("lenient_accuracy"), _pct),
    ("  95% CI ", lambda s: s.get("lenient_accuracy_ci"), _ci),
    ("strict − lenient gap (pp)",
     lambda s: None if s.get("lenient_accuracy") is None or s.get("strict_accuracy") is None
     else s["lenient_accuracy"] - s["strict_accuracy"], _pp),
]


def _rows_for_levels(summaries_: Mapping[str, Summary]) -> list[Row]:
    levels = sorted({str(k) for s in summaries_.values() for k in (s.get("perturbation_levels") or {})})
    rows: list[Row] = [("accuracy on original questions", lambda s: s.get("accuracy_original"), _pct),
                       ("  95% CI", lambda s: s.get("accuracy_original_ci"), _ci)]
    for level in levels:
        def field(key: str, level: str = level) -> Callable[[Summary], Any]:
            return lambda s: ((s.get("perturbation_levels") or {}).get(level) or {}).get(key)
        name = f"level {level} ({plots.PERTURBATION_NAMES.get(level, '')})"
        rows += [
            (f"{name}: valid perturbations", field("n_valid"), _int),
            (f"{name}: original accuracy on them", field("accuracy_original_on_valid"), _pct),
            (f"{name}: perturbed accuracy", field("accuracy"), _pct),
            (f"{name}: 95% CI", field("accuracy_ci"), _ci),
            (f"{name}: memorization gap (pp)", field("memorization_gap"), _pp),
        ]
    rows += [("robust accuracy", lambda s: s.get("robust_accuracy"), _pct),
             ("memorization suspects", lambda s: s.get("memorization_suspect"), _pct)]
    return rows


def _table(rows: Sequence[Row], summaries_: Mapping[str, Summary], numeric: bool) -> pd.DataFrame:
    data = {
        label: [get(s) if numeric else fmt(get(s)) for _, get, fmt in rows]
        for label, s in summaries_.items()
    }
    return pd.DataFrame(data, index=pd.Index([name for name, _, _ in rows], name=""), dtype=object)


def option_bias_table(summaries_: Mapping[str, Summary], numeric: bool = False) -> pd.DataFrame:
    """Table P1a: one column per model. `numeric=True` gives the raw values (fractions, counts) for CSV."""
    return _table(OPTION_BIAS_ROWS, summaries_, numeric)


def three_tier_table(summaries_: Mapping[str, Summary], numeric: bool = False) -> pd.DataFrame:
    """Table P1b: level counts and rates, strict and lenient accuracy, one column per model."""
    return _table(THREE_TIER_ROWS, summaries_, numeric)


def counterfactual_table(summaries_: Mapping[str, Summary], numeric: bool = False) -> pd.DataFrame:
    return _table(_rows_for_levels(summaries_), summaries_, numeric)


def error_category_table(summaries_: Mapping[str, Summary]) -> pd.DataFrame:
    """Counts (share of categorised Level C answers) per category and model."""
    shares = plots.error_category_shares(summaries_)
    if shares.empty:
        return pd.DataFrame()
    order = plots.category_order(shares)
    cells = shares.assign(cell=[f"{int(c)} ({s:.1f}%)" for c, s in zip(shares["count"], shares["share"],
                                                                      strict=True)])
    table = cells.pivot(index="category", columns="model", values="cell").reindex(order).fillna("0")
    table = table[list(dict.fromkeys(shares["model"]))]
    table.index = pd.Index([plots.pretty_category(c) for c in table.index], name="")
    table.columns.name = None
    return table


TABLES = {
    "table_p1_option_bias": ("option_bias", option_bias_table),
    "table_p1_three_tier": ("three_tier", three_tier_table),
    "table_counterfactual": ("counterfactual", counterfactual_table),
}


def write_table(table: pd.DataFrame, name: str, directory: str | Path) -> Path:
    directory = resolve(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.csv"
    table.to_csv(path)
    return path


def table(name: str, runs: Mapping[str, Sequence[Run]], tables_dir: str | Path | None = None) -> pd.DataFrame:
    """A paper table for display (formatted strings); its raw values are written to `tables_dir/name.csv`."""
    if name == "table_error_categories":
        by_label = summaries(runs.get("three_tier", []))
        shown, numeric = error_category_table(by_label), plots.error_category_shares(by_label)
    else:
        experiment, build = TABLES[name]
        by_label = summaries(runs.get(experiment, []))
        shown, numeric = build(by_label), build(by_label, numeric=True)
    if tables_dir is not None and not numeric.empty:
        write_table(numeric, name, tables_dir)
    return shown


def figure(name: str, runs: Mapping[str, Sequence[Run]], figures_dir: str | Path | None = None
           ) -> Figure | None:
    """Draw one of the paper's figures, save it as PDF and PNG, and return it (None when there is no run)."""
    experiment, draw = plots.FIGURES[name]
    group = runs.get(experiment, [])
    if not group:
        print(f"{name}: no {experiment} runs found, so no figure (run its notebook or include the "
              "reference runs).")
        return None
    fig = draw(summaries(group))  # already closed in pyplot by plots: shown once, as the cell's value
    if figures_dir is not None:
        plots.save_figure(fig, name, resolve(figures_dir))
    return fig


def biased_examples(runs: Sequence[Run], per_run: int = 2, length: int = 300) -> pd.DataFrame:
    """A few option-biased questions per run, with what the model said without the choices.

    Model text is shown as data (a DataFrame, escaped when rendered as HTML), never as markup.
    """
    rows = []
    for run in runs:
        biased = [r for r in run.data["results"] if r.get("option_biased")][:per_run]
        for r in biased:
            text = r.get("response_without") or r.get("answer_without") or "(empty response)"
            rows.append({
                "model": run.label,
                "question": r.get("question_id"),
                "correct": r.get("correct_answer"),
                "answer with options": r.get("answer_with"),
                "verdict without options": r.get("judge_verdict"),
                "response without options (excerpt)": excerpt(text, length),
            })
    return pd.DataFrame(rows)
