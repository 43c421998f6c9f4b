"""Every table: the paper's tables from collected runs, and each experiment notebook's tables of one run.

The paper's tables take plain summary dicts (label → summary), like the figures; each row is a name, a
getter and a formatter, so the same rows give the shown table (text) and the CSV (raw values). The
notebook tables take one loaded run (`{"metadata", "summary", "results", "recomputed_summary"}`).
Model text is shown as data (a DataFrame, escaped when rendered as HTML), never as markup.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from cfa_lib import perturbation
from cfa_lib.data import Question, questions_by_id
from cfa_lib.experiments import counterfactual
from cfa_lib.experiments.common import display_path
from cfa_lib.report import shaping
from cfa_lib.report.format import (
    DASH,
    ci,
    count,
    count_pct,
    decimal,
    excerpt,
    p_cell,
    pct,
    pct_ci,
    pp,
    significant,
)
from cfa_lib.report.runs import Run, experiment_showing, resolve, summaries

Summary = Mapping[str, Any]
Row = tuple[str, Callable[[Summary], Any], Callable[[Any], str]]


# The runs behind the report ----------------------------------------------------------------------------

def runs_overview(runs: Mapping[str, Sequence[Run]]) -> pd.DataFrame:
    """Which file stands behind each label: the first table a reader should see."""
    rows = [
        {
            "experiment": name,
            "label": run.label,
            "dataset": run.metadata.get("dataset"),
            "questions": run.summary.get("n_questions", run.metadata.get("n_questions")),
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
            for rule, n in (run.data.get("regrade_changes") or {}).items()]
    return pd.DataFrame(rows, columns=["experiment", "run", "rule", "rows changed"]).set_index(
        ["experiment", "run", "rule"])


# The paper's tables: one column per run ----------------------------------------------------------------

def _field(key: str) -> Callable[[Summary], Any]:
    return lambda s: s.get(key)


def _count_rate(count_key: str, rate_key: str) -> Callable[[Summary], Any]:
    return lambda s: None if s.get(count_key) is None else (s.get(count_key), s.get(rate_key))


def _rate_and_ci(name: str, key: str, ci_name: str = "  95% CI") -> list[Row]:
    """A rate and, on the next row, its 95% interval."""
    return [(name, _field(key), pct), (ci_name, _field(f"{key}_ci"), ci)]


def _mc(key: str) -> Callable[[Summary], Any]:
    return lambda s: (s.get("mcnemar_test") or {}).get(key)


def _answerable(key: str) -> Callable[[Summary], Any]:
    """A key of the summary over the open-answerable questions (the like-with-like headline)."""
    def get(s: Summary) -> Any:
        sub = s.get("answerable") or {}
        return (sub.get("mcnemar_test") or {}).get("p_value") if key == "mcnemar_p" else sub.get(key)
    return get


def _judge(s: Summary) -> Any:
    """Who judged the answers numbers could not decide, and whether that judge passed calibration."""
    if s.get("self_judged") is None and s.get("judge_calibration") is None:
        return None
    calibration = s.get("judge_calibration") or {}
    who = "self-judged" if s.get("self_judged") else "another model"
    if not calibration.get("n"):
        return f"{who}; not calibrated (no judged question)"
    verdict = "passed" if calibration["passed"] else "UNCALIBRATED"
    return (f"{who}; sensitivity {calibration['sensitivity']:.2f}, specificity {calibration['specificity']:.2f} "
            f"(n = {calibration['n']}): {verdict}")


def _text(value: Any) -> str:
    return DASH if value is None else str(value)


OPTION_BIAS_ROWS: list[Row] = [
    ("open-answerable questions paired", _answerable("n_paired"), count),
    ("  option bias on them (pp)", _answerable("option_bias"), pp),
    ("  95% CI (pp) ", _answerable("option_bias_ci"), ci),
    ("  McNemar p on them", _answerable("mcnemar_p"), p_cell),
    ("judge", _judge, _text),
    ("all questions paired", lambda s: s.get("n_paired", s.get("n_questions")), count),
    ("excluded (failed, cut short, no verdict)", _field("n_excluded"), count),
    *_rate_and_ci("accuracy with options", "accuracy_with_options"),
    *_rate_and_ci("accuracy without options", "accuracy_without_options", "  95% CI "),
    ("option bias (pp)", _field("option_bias"), pp),
    ("  95% CI (pp)", _field("option_bias_ci"), ci),
    ("biased questions", _count_rate("n_biased_questions", "bias_rate"), count_pct),
    ("McNemar b (right only with options)", _mc("b"), count),
    ("McNemar c (right only without)", _mc("c"), count),
    ("McNemar chi2 (continuity-corrected)", _mc("chi2"), decimal),
    ("McNemar p", _mc("p_value"), p_cell),
    ("exact binomial p", _mc("p_exact"), p_cell),
]


def _level(key: str) -> Callable[[Summary], Any]:
    def get(s: Summary) -> Any:
        n = (s.get("level_distribution") or {}).get(key)
        return None if n is None else (n, (s.get("level_rates") or {}).get(key))
    return get


def _strict_lenient_gap(s: Summary) -> Any:
    if s.get("lenient_accuracy") is None or s.get("strict_accuracy") is None:
        return None
    return s["lenient_accuracy"] - s["strict_accuracy"]


THREE_TIER_ROWS: list[Row] = [
    ("answers graded", lambda s: s.get("n_graded", s.get("n_questions")), count),
    ("excluded (failed, cut short, no ground)", _field("n_excluded"), count),
    *((f"Level {label}", _level(level), count_pct) for level, label in shaping.LEVEL_LABELS.items()),
    *_rate_and_ci("strict accuracy (A)", "strict_accuracy"),
    *_rate_and_ci("lenient accuracy (A + B)", "lenient_accuracy", "  95% CI "),
    ("strict − lenient gap (pp)", _strict_lenient_gap, pp),
    ("no answer (refusal, hedge; counted as C)", _field("no_answer"), count),
    ("open-answerable answers graded", _answerable("n_graded"), count),
    ("  strict accuracy on them", _answerable("strict_accuracy"), pct),
    ("  lenient accuracy on them", _answerable("lenient_accuracy"), pct),
    ("judge", _judge, _text),
]


def _counterfactual_rows(summaries_: Mapping[str, Summary]) -> list[Row]:
    levels = sorted({str(k) for s in summaries_.values() for k in (s.get("perturbation_levels") or {})})
    rows = _rate_and_ci("accuracy on original questions", "accuracy_original")
    for level in levels:
        def field(key: str, level: str = level) -> Callable[[Summary], Any]:
            return lambda s: ((s.get("perturbation_levels") or {}).get(level) or {}).get(key)
        name = f"level {level} ({shaping.PERTURBATION_NAMES.get(level, '')})"
        rows += [
            (f"{name}: valid perturbations", field("n_valid"), count),
            (f"{name}: original accuracy on them", field("accuracy_original_on_valid"), pct),
            (f"{name}: perturbed accuracy", field("accuracy"), pct),
            (f"{name}: 95% CI", field("accuracy_ci"), ci),
            (f"{name}: memorization gap (pp)", field("memorization_gap"), pp),
        ]
    rows += [("robust accuracy", _field("robust_accuracy"), pct),
             ("memorization suspects", _field("memorization_suspect"), pct)]
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
    return _table(_counterfactual_rows(summaries_), summaries_, numeric)


def error_category_table(summaries_: Mapping[str, Summary], numeric: bool = False) -> pd.DataFrame:
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
    by_label = summaries(runs.get(experiment_showing(name), []))
    shown, numeric = build(by_label), build(by_label, numeric=True)
    if tables_dir is not None and not numeric.empty:
        write_table(numeric, name, tables_dir)
    return shown


def biased_examples(runs: Sequence[Run], per_run: int = 2, length: int = 300) -> pd.DataFrame:
    """A few option-biased questions per run, with what the model said without the choices."""
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


# Notebook 01: option bias of one run -------------------------------------------------------------------

def _questions(data: dict[str, Any]) -> dict[str, Question]:
    return questions_by_id(data["metadata"].get("dataset", "easy"))


def option_bias_summary(data: dict[str, Any]) -> pd.DataFrame:
    """The run's summary on the open-answerable questions (the headline) and on all questions (labels of
    its own: this is not Table P1a), with who judged and how the judge's calibration went."""
    full = data["recomputed_summary"]

    def column(s: Summary) -> dict[str, Any]:
        mc = s["mcnemar_test"]
        paired = bool(s["n_paired"])
        return {
            "questions paired": s["n_paired"],
            "excluded (failed, cut short, no verdict)": s["n_excluded"],
            "accuracy with options": pct(s["accuracy_with_options"]) if paired else DASH,
            "accuracy without options": pct(s["accuracy_without_options"]) if paired else DASH,
            "option bias (pp)": pp(s["option_bias"]) if paired else DASH,
            "  95% CI (pp)": ci(s["option_bias_ci"]) if paired else DASH,
            "biased questions": count_pct((s["n_biased_questions"], s["bias_rate"])) if paired else DASH,
            "McNemar b, c": f"{mc['b']}, {mc['c']}",
            "McNemar chi2 (p)": f"{decimal(mc['chi2'])} ({significant(mc['p_value'])})",
            "exact p": significant(mc["p_exact"]),
        }

    columns = {"open-answerable": column(full["answerable"])} if full.get("answerable") else {}
    columns["all questions"] = column(full)
    table = pd.DataFrame(columns)
    judge = _text(_judge(full))
    table.loc["judge"] = [judge] * len(columns)
    return table


def describe_mcnemar(data: dict[str, Any]) -> str:
    mc = data["recomputed_summary"]["mcnemar_test"]
    verdict = "significant" if mc["significant"] else "not significant"
    return (
        f"{mc['b']} {'question was' if mc['b'] == 1 else 'questions were'} right only with the options and "
        f"{mc['c']} only without them. "
        f"McNemar's test: chi2 = {decimal(mc['chi2'])}, p = {significant(mc['p_value'])} "
        f"(exact p = {significant(mc['p_exact'])}); the difference is {verdict} at the 5% level."
    )


def option_bias_contingency(data: dict[str, Any]) -> pd.DataFrame:
    c = data["recomputed_summary"]["contingency"]
    return pd.DataFrame(
        [[c["both_correct"], c["with_only"]], [c["without_only"], c["both_wrong"]]],
        index=pd.Index(["right with options", "wrong with options"], name=""),
        columns=["right without options", "wrong without options"],
    )


def option_biased_questions(data: dict[str, Any], length: int = 400) -> pd.DataFrame:
    """The option-biased questions with the question, the key and both answers side by side."""
    questions = _questions(data)
    rows = []
    for r in data["results"]:
        if not r.get("option_biased"):
            continue
        question = questions.get(r["question_id"])
        rows.append({
            "question": r["question_id"],
            "text": excerpt(question.open_text(), length) if question else "",
            "correct": f"{r['correct_answer']}: {question.correct_text if question else r.get('correct_text', '')}",
            "with options": r["answer_with"],
            "without options (extracted)": excerpt(r["answer_without"], 80),
            "verdict": r["judge_verdict"],
            "response without options (end)": excerpt(r.get("response_without"), length, from_end=True),
        })
    columns = ["question", "text", "correct", "with options", "without options (extracted)", "verdict",
               "response without options (end)"]
    return pd.DataFrame(rows, columns=columns)


VARIANT_LABELS = {"options_only": "options only (no stem)", "none_of_the_above": "none of the above",
                  "shuffled": "shuffled options", "reason_then_choose": "reason, then choose"}


def _variant_note(name: str, v: Mapping[str, Any]) -> str:
    if name == "options_only" and v.get("chance_level") is not None:
        return f"chance {pct(v['chance_level'])}"
    if name == "shuffled":
        dist, same = v.get("letter_distribution") or {}, v.get("consistency") or {}
        answers = "/".join(str(n) for n in (dist.get("answers") or {}).values())
        keys = "/".join(str(n) for n in (dist.get("keys") or {}).values())
        letters = "/".join(dist.get("answers") or {})
        return (f"same option in both orders {pct(same.get('share'))} (n={same.get('n', 0)}); "
                f"letters {letters}: answered {answers}, keys {keys}")
    return ""


def option_bias_variants(data: dict[str, Any]) -> pd.DataFrame:
    """One row per answer-format variant asked (recomputed from the rows), paired with Format A: accuracy
    with its Wilson interval, Format A on the same questions, the difference with its paired bootstrap
    interval, McNemar's test, and the chance level (options only) or consistency and letters (shuffled).
    Empty when the run asked no variant."""
    from cfa_lib.experiments.variants import recomputed

    rows = {}
    for name, v in recomputed(data).items():
        mc = v["mcnemar"]
        rows[VARIANT_LABELS.get(name, name)] = {
            "paired questions": v["n"],
            "accuracy [95% CI]": pct_ci(v["accuracy"], v["accuracy_ci"]),
            "Format A, same questions": pct(v.get("accuracy_mcq")),
            "difference vs Format A (pp)": pp(v["difference_vs_mcq"]),
            "95% CI (pp)": ci(v["difference_ci"]),
            "McNemar b, c": f"{mc['b']}, {mc['c']}",
            "exact p": significant(mc["p_exact"]),
            "note": _variant_note(name, v),
        }
    columns = ["paired questions", "accuracy [95% CI]", "Format A, same questions", "difference vs Format A (pp)",
               "95% CI (pp)", "McNemar b, c", "exact p", "note"]
    return pd.DataFrame.from_dict(rows, orient="index", columns=columns) if rows else pd.DataFrame(columns=columns)


# Notebook 02: three-tier grading of one run ------------------------------------------------------------

def three_tier_levels(data: dict[str, Any]) -> pd.DataFrame:
    s = data["recomputed_summary"]
    table = pd.DataFrame({"questions": s["level_distribution"], "share": s["level_rates"]})
    table.index = list(shaping.LEVEL_LABELS.values())
    return table


def three_tier_accuracy(data: dict[str, Any]) -> pd.DataFrame:
    s = data["recomputed_summary"]
    rows = {f"{name} accuracy": pct_ci(s[f"{name}_accuracy"], s[f"{name}_accuracy_ci"])
            for name in ("strict", "lenient")}
    agreement = s.get("judge_agreement") or data["summary"].get("judge_agreement")
    if agreement and agreement.get("n"):
        interval = agreement.get("cohen_kappa_ci")
        within = "" if not interval else f" [{decimal(interval[0], 2)}, {decimal(interval[1], 2)}]"
        rows["judge vs numeric grader"] = (f"{pct(agreement['percent_agreement'], 0)} agreement, kappa "
                                           f"{decimal(agreement['cohen_kappa'], 2)}{within} (n={agreement['n']})")
    rows["judge"] = _text(_judge(s))
    if s.get("no_answer") is not None:
        rows["no answer (refusal, hedge; counted as C)"] = str(s["no_answer"])
    return pd.DataFrame({"value": rows})


def three_tier_examples(data: dict[str, Any], per_level: int = 2, length: int = 300) -> pd.DataFrame:
    """A few rows per level, side by side, as in the study's card."""
    questions = _questions(data)
    rows = []
    for level in shaping.LEVEL_LABELS:
        for r in [r for r in data["results"] if r.get("level") == level][:per_level]:
            q = questions.get(r["question_id"])
            gold = r["gold_answer"]
            rows.append({
                "level": level,
                "question": excerpt(q.open_text(), length) if q else r["question_id"],
                "gold": gold.get("text") if gold.get("numerical") is None else f"{gold['numerical']:g} "
                                                                              f"{gold.get('unit') or ''}",
                "response (end)": excerpt(r.get("model_response"), length, from_end=True),
                "reasoning": r["evaluation"].get("reasoning"),
            })
    return pd.DataFrame(rows)


# Notebook 03: counterfactual testing of one run --------------------------------------------------------

def counterfactual_coverage(data: dict[str, Any]) -> pd.DataFrame:
    """Valid / not perturbable / not verifiable / rejected per level: what share the test covers."""
    coverage = data["summary"].get("coverage")
    if coverage is None:  # the original study recorded only valid or not
        coverage = {}
        for row in data["results"]:
            for p in row["perturbations"]:
                status = "valid" if p["valid"] else p.get("reason", "invalid")
                coverage.setdefault(str(p["level"]), {}).setdefault(status, 0)
                coverage[str(p["level"])][status] += 1
    table = pd.DataFrame(coverage).T.fillna(0).astype(int)
    table.index = [f"level {k}" for k in table.index]
    table["share valid"] = (table.get("valid", 0) / table.sum(axis=1)).map(lambda share: pct(share, 0))
    return table


def template_coverage(dataset: str, data: dict[str, Any] | None = None) -> pd.DataFrame:
    """How much of the whole dataset the counterfactual test reaches, and why the rest is left out; with a
    run, how many of its questions were perturbed validly at each level. Coverage counts the usable
    templates: verified, and giving a valid item at one of seeds 0-9."""
    census = perturbation.dataset_census(dataset, seeds=perturbation.SEEDS)
    n = census["questions"]
    usable = census["usability"]["usable"]
    rows: dict[str, Any] = {
        "questions": n,
        "no number in the question": census["no_number"],
        "numbers, but no computation decides the key": census["not_computational"],
        "computational": census["computational"],
        "computational, with a template verified against the key": census["verified"],
        "of which usable (a valid item at one of seeds 0-9)": usable,
    }
    for reason, n_questions in sorted(census["without_template"].items(), key=lambda item: -item[1]):
        rows[f"computational, no template: {reason}"] = n_questions
    if census["unreviewed"]:
        rows["not reviewed yet"] = len(census["unreviewed"])
    rows["share of the dataset covered"] = pct(usable / n, 1)
    rows["share of the computational questions covered"] = pct(usable / census["computational"], 1)
    if data is not None:
        asked = len(data["results"])
        for level, statuses in sorted((data["summary"].get("coverage") or {}).items()):
            rows[f"this run ({asked} questions): valid at level {level}"] = statuses.get("valid", 0)
    return pd.DataFrame({dataset: rows})


def counterfactual_reach(runs: Mapping[str, Sequence[Run]], dataset: str = "easy") -> pd.DataFrame:
    """The original study's level-1 perturbations beside this toolkit's: how many of the study's 'valid'
    ones changed nothing, on what kind of question the rest fell (the census), and how many new answers
    code computed."""
    classes = perturbation.question_classes(dataset)
    computational = {perturbation.TEMPLATED, perturbation.WITHOUT_TEMPLATE}
    rest = "of which unchecked, on a question"
    rows = {}
    for run in runs.get("counterfactual", []):
        if not (run.reference and run.as_published and run.metadata.get("dataset", dataset) == dataset):
            continue
        valid = [(row.get("question_id"), p) for row in run.data["results"] for p in row["perturbations"]
                 if p.get("valid") and str(p.get("level", 1)) == "1"]
        kept = [classes.get(str(question_id)) for question_id, p in valid if not counterfactual.unchanged_reason(p)]
        regraded, _ = counterfactual.regrade([counterfactual.Row.from_dict(row) for row in run.data["results"]])
        on_computation = counterfactual.summarize(
            [row for row in regraded if classes.get(row.question_id) in computational], [1])["perturbation_levels"]["1"]
        rows[run.label.replace(" (reference, as published)", "") + ", original study"] = {
            "level-1 perturbations called valid": len(valid),
            "of which changed nothing": len(valid) - len(kept),
            f"{rest} with no number": kept.count(perturbation.NO_NUMBER),
            f"{rest} whose numbers decide nothing": kept.count(perturbation.NOT_COMPUTATIONAL),
            f"{rest} with a computation": sum(kind in computational for kind in kept),
            "new answer computed and verified by code": 0, "valid at level 2": DASH, "valid at level 3": DASH,
            "gap on the computational ones, pp (new answers unverified)":
                f"{pp(on_computation['memorization_gap'])} {ci(on_computation['memorization_gap_ci'])}"}
    valid_now = perturbation.valid_per_level(dataset)
    rows["this toolkit, verified templates (seed 0)"] = {
        "level-1 perturbations called valid": valid_now[1], "of which changed nothing": 0,
        f"{rest} with no number": 0, f"{rest} whose numbers decide nothing": 0, f"{rest} with a computation": 0,
        "new answer computed and verified by code": valid_now[1],
        **{f"valid at level {level}": n for level, n in valid_now.items() if level != 1},
        "gap on the computational ones, pp (new answers unverified)": DASH}
    return pd.DataFrame(rows)


def counterfactual_flips(data: dict[str, Any]) -> pd.DataFrame:
    """Per level: where the perturbations came from, and the decision questions whose correct option
    changed (did the model follow the new key, or keep the option that was right before?)."""
    rows = {}
    for level, m in data["recomputed_summary"]["perturbation_levels"].items():
        flips = m.get("flips") or {}
        rows[f"level {level}"] = {
            "valid perturbations": m["n_valid"],
            "from a template": (m.get("by_source") or {}).get("template", 0),
            "from the generator": (m.get("by_source") or {}).get("generator", 0),
            "key flipped (answered)": flips.get("n", 0),
            "followed the new key": flips.get("followed_new_key", 0),
            "kept the old key": flips.get("stayed_with_old_key", 0),
        }
    return pd.DataFrame(rows).T


def counterfactual_reasons(data: dict[str, Any], top: int = 10) -> pd.DataFrame:
    """Why items were not valid, most frequent first: the coverage table's counts explained (one row per
    reason, with the levels it stopped and the items it stopped)."""
    levels: dict[tuple[str, str], set[str]] = {}
    items: Counter[tuple[str, str]] = Counter()
    for row in data["results"]:
        for p in row["perturbations"]:
            if not p["valid"]:
                key = (p.get("status", "invalid"), " ".join(str(p.get("reason") or "").split())[:160])
                levels.setdefault(key, set()).add(str(p["level"]))
                items[key] += 1
    rows = [{"status": status, "reason": reason, "levels": ", ".join(sorted(levels[(status, reason)])), "items": n}
            for (status, reason), n in items.most_common(top)]
    return pd.DataFrame(rows, columns=["status", "reason", "levels", "items"])


def counterfactual_accuracy(data: dict[str, Any]) -> pd.DataFrame:
    s = data["recomputed_summary"]
    rows = {}
    for level, m in s["perturbation_levels"].items():
        if not m["n_paired"]:
            rows[f"level {level}"] = {"paired questions": 0}
            continue
        rows[f"level {level}"] = {
            "paired questions": m["n_paired"],
            "original (same questions)": pct(m["accuracy_original_on_valid"]),
            "perturbed": pct_ci(m["accuracy"], m["accuracy_ci"]),
            "memorization gap (pp)": pp(m["memorization_gap"]),
            "consistency": decimal(m["consistency_score"], 2),
            "McNemar p (exact)": significant(m["mcnemar_test"]["p_exact"]),
        }
    return pd.DataFrame(rows).T


def counterfactual_suspects(data: dict[str, Any], length: int = 500) -> pd.DataFrame:
    """Right on the original, wrong on a perturbation: the two questions side by side."""
    questions = _questions(data) if data["results"] else {}
    rows = []
    for row in data["results"]:
        if not row["original"]["correct"]:
            continue
        for p in row["perturbations"]:
            if p["valid"] and p.get("correct") is False:
                original = questions.get(row["question_id"])
                rows.append({
                    "question": row["question_id"],
                    "level": p["level"],
                    "original": excerpt(original.mcq_text(), length) if original else "",
                    "perturbed": excerpt(" ".join([p.get("question") or "", *(
                        f"{k}: {v}" for k, v in (p.get("choices") or {}).items())]), length),
                    "answers (original → perturbed)": f"{row['original']['answer']} → {p.get('model_answer')} "
                                                      f"(key {row['correct_answer']} → {p.get('correct_letter')})",
                })
    return pd.DataFrame(rows, columns=["question", "level", "original", "perturbed", "answers (original → perturbed)"])
