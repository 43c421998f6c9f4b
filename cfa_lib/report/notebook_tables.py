"""The tables of each experiment notebook, from one loaded run (`LoadedRun`).

Summary tables read the run's recomputed summary; example tables read the file's rows as written. Model
text is shown as data (a DataFrame, escaped when rendered as HTML), never as markup.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import fields
from typing import Any

import pandas as pd

from cfa_lib import perturbation
from cfa_lib.data import Question, questions_by_id
from cfa_lib.experiments import counterfactual
from cfa_lib.experiments.contract import FORMAT_A, FORMAT_B
from cfa_lib.experiments.loading import LoadedRun
from cfa_lib.experiments.option_bias_summary import PairedSummary
from cfa_lib.experiments.variants import OptionsOnlySummary, ShuffledSummary, VariantSummary, summarize_variants
from cfa_lib.perturbation.review import rates_by_round, read_review, review_path
from cfa_lib.report import shaping
from cfa_lib.report.format import (
    DASH,
    MIN_PAIRS,
    TooFew,
    ci,
    count_pct,
    decimal,
    excerpt,
    if_testable,
    paired,
    pct,
    pct_ci,
    pp,
    significant,
    text,
)
from cfa_lib.report.items_frame import items_frame


def _questions(run: LoadedRun) -> dict[str, Question]:
    return questions_by_id(run.dataset)


# Any experiment: its summary's statistics ------------------------------------------------------------------

def _statistic(value: Any) -> str | None:
    """One statistic as a table cell; None for a part shown elsewhere (a list of bins: the figure)."""
    if value is None:
        return DASH
    if isinstance(value, bool | int):
        return str(value)
    if isinstance(value, float):
        return decimal(value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {v}" for k, v in value.items()) or "none"
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, float) for v in value):
        return f"[{decimal(value[0])}, {decimal(value[1])}]"
    return None


def summary_table(run: LoadedRun) -> pd.DataFrame:
    """The run's summary, one row per statistic in the order the experiment's summary declares them: the
    table of an experiment whose page declares no tables of its own."""
    summary = run.summary
    cells = {f.name.replace("_", " "): _statistic(getattr(summary, f.name)) for f in fields(summary)
             if f.name != "facts"}
    return pd.DataFrame({"value": {name: cell for name, cell in cells.items() if cell is not None}})


# Notebook 01: option bias of one run -------------------------------------------------------------------

def option_bias_summary(run: LoadedRun) -> pd.DataFrame:
    """The run's summary on the open-answerable questions (the headline) and on all questions (labels of
    its own: this is not Table P1a), with who judged and how the judge's calibration went."""
    full = run.summary

    def column(s: PairedSummary) -> dict[str, Any]:
        mc, n = s.mcnemar_test, s.n_paired
        chi2 = if_testable(mc.chi2, n, mc.b, mc.c)
        return {
            "questions paired": n,
            "excluded (failed, cut short, no verdict)": s.n_excluded,
            "accuracy with options": pct(s.accuracy_with_options) if n else DASH,
            "accuracy without options": pct(s.accuracy_without_options) if n else DASH,
            "option bias (pp)": pp(paired(s.option_bias, n)),
            "  95% CI (pp)": ci(paired(s.option_bias_ci, n)),
            "biased questions": count_pct((s.n_biased_questions, s.bias_rate)) if n else DASH,
            "McNemar b, c": f"{mc.b}, {mc.c}",
            "McNemar chi2 (p)": str(chi2) if isinstance(chi2, TooFew) else
            f"{decimal(mc.chi2)} ({significant(mc.p_value)})",
            "exact p": significant(if_testable(mc.p_exact, n, mc.b, mc.c)),
        }

    columns = {"open-answerable": column(full.answerable), "all questions": column(full)}
    table = pd.DataFrame(columns)
    table.loc["judge"] = [text(shaping.judge_line(full))] * len(columns)
    return table


def describe_mcnemar(run: LoadedRun) -> str:
    """McNemar's test in words; on fewer than `MIN_PAIRS` pairs, or with no discordant pair, the counts and why
    no test is read, never a conclusion."""
    mc, n = run.summary.mcnemar_test, run.summary.n_paired
    counts = (f"{mc.b} {'question was' if mc.b == 1 else 'questions were'} right only with the options and "
              f"{mc.c} only without them")
    if mc.b + mc.c == 0:
        return f"Of {n} paired questions, {counts}: McNemar's test has nothing to test, and no conclusion is drawn."
    if n < MIN_PAIRS:
        return (f"Of {n} paired questions, {counts}. {n} pairs are too few for McNemar's test to say anything "
                f"(the book reads it from {MIN_PAIRS} pairs): no conclusion is drawn.")
    verdict = "significant" if mc.significant else "not significant"
    return (
        f"{mc.b} {'question was' if mc.b == 1 else 'questions were'} right only with the options and "
        f"{mc.c} only without them. "
        f"McNemar's test: chi2 = {decimal(mc.chi2)}, p = {significant(mc.p_value)} "
        f"(exact p = {significant(mc.p_exact)}); the difference is {verdict} at the 5% level."
    )


def option_bias_contingency(run: LoadedRun) -> pd.DataFrame:
    c = run.summary.contingency
    return pd.DataFrame(
        [[c.both_correct, c.with_only], [c.without_only, c.both_wrong]],
        index=pd.Index(["right with options", "wrong with options"], name=""),
        columns=["right without options", "wrong without options"],
    )


def option_bias_pairs(run: LoadedRun) -> pd.DataFrame:
    """The cells of `option_bias_contingency` as the sets of questions they count (both formats counted, the
    re-graded verdicts), so that each count can show its questions (`explorer.linked_questions`)."""
    frame = items_frame(run)
    correct = {condition: frame[frame["condition"] == condition].set_index("question_id")["correct"]
               for condition in (FORMAT_A, FORMAT_B)}
    both = pd.concat(correct, axis=1).dropna()
    with_options, without_options = both[FORMAT_A].astype(bool), both[FORMAT_B].astype(bool)

    def ids(mask: pd.Series) -> frozenset[str]:
        return frozenset(both.index[mask])

    return pd.DataFrame(
        [[ids(with_options & without_options), ids(with_options & ~without_options)],
         [ids(~with_options & without_options), ids(~with_options & ~without_options)]],
        index=pd.Index(["right with options", "wrong with options"], name=""),
        columns=["right without options", "wrong without options"],
    )


def option_biased_questions(run: LoadedRun, length: int = 400) -> pd.DataFrame:
    """The option-biased questions with the question, the key and both answers side by side."""
    questions = _questions(run)
    rows = []
    for r in run.rows:
        if not r.option_biased:
            continue
        question = questions.get(r.question_id)
        rows.append({
            "question": r.question_id,
            "text": excerpt(question.open_text(), length) if question else "",
            "correct": f"{r.correct_answer}: {question.correct_text if question else r.correct_text or ''}",
            "with options": r.answer_with,
            "without options (extracted)": excerpt(r.answer_without, 80),
            "verdict": r.judge_verdict,
            "response without options (end)": excerpt(r.response_without, length, from_end=True),
        })
    columns = ["question", "text", "correct", "with options", "without options (extracted)", "verdict",
               "response without options (end)"]
    return pd.DataFrame(rows, columns=columns).set_index("question")


def _variant_note(v: VariantSummary) -> str:
    if isinstance(v, OptionsOnlySummary) and v.chance_level is not None:
        return f"chance {pct(v.chance_level)}"
    if isinstance(v, ShuffledSummary):
        dist, same = v.letter_distribution, v.consistency
        answers = "/".join(str(n) for n in dist.answers.values())
        keys = "/".join(str(n) for n in dist.keys.values())
        return (f"same option in both orders {pct(same.share)} (n={same.n}); "
                f"letters {'/'.join(dist.answers)}: answered {answers}, keys {keys}")
    return ""


def option_bias_variants(run: LoadedRun) -> pd.DataFrame:
    """One row per answer-format variant asked (recomputed from the rows), paired with Format A: accuracy
    with its Wilson interval, Format A on the same questions, the difference with its paired bootstrap
    interval, McNemar's test, and the chance level (options only) or consistency and letters (shuffled).
    Empty when the run asked no variant."""
    rows = {}
    for name, v in summarize_variants(run.rows).items():
        rows[shaping.VARIANT_LABELS[name]] = {
            "paired questions": v.n,
            "accuracy [95% CI]": pct_ci(v.accuracy, v.accuracy_ci),
            "Format A, same questions": pct(v.accuracy_mcq),
            "difference vs Format A (pp)": pp(paired(v.difference_vs_mcq, v.n)),
            "95% CI (pp)": ci(paired(v.difference_ci, v.n)),
            "McNemar b, c": f"{v.mcnemar.b}, {v.mcnemar.c}",
            "exact p": significant(if_testable(v.mcnemar.p_exact, v.n, v.mcnemar.b, v.mcnemar.c)),
            "note": _variant_note(v),
        }
    columns = ["paired questions", "accuracy [95% CI]", "Format A, same questions", "difference vs Format A (pp)",
               "95% CI (pp)", "McNemar b, c", "exact p", "note"]
    return pd.DataFrame.from_dict(rows, orient="index", columns=columns) if rows else pd.DataFrame(columns=columns)


# Notebook 02: three-tier grading of one run ------------------------------------------------------------

def three_tier_levels(run: LoadedRun) -> pd.DataFrame:
    s = run.summary
    table = pd.DataFrame({"questions": s.level_distribution, "share": s.level_rates})
    table.index = list(shaping.LEVEL_LABELS.values())
    return table


def three_tier_accuracy(run: LoadedRun) -> pd.DataFrame:
    s = run.summary
    rows = {"strict accuracy": pct_ci(s.strict_accuracy, s.strict_accuracy_ci),
            "lenient accuracy": pct_ci(s.lenient_accuracy, s.lenient_accuracy_ci)}
    agreement = s.judge_agreement
    if agreement is not None and agreement.n:
        interval = agreement.cohen_kappa_ci
        within = "" if not interval else f" [{decimal(interval[0], 2)}, {decimal(interval[1], 2)}]"
        rows["judge vs numeric grader"] = (f"{pct(agreement.percent_agreement, 0)} agreement, kappa "
                                           f"{decimal(agreement.cohen_kappa, 2)}{within} (n={agreement.n})")
    rows["judge"] = text(shaping.judge_line(s))
    rows["no answer (refusal, hedge; counted as C)"] = str(s.no_answer)
    return pd.DataFrame({"value": rows})


def three_tier_examples(run: LoadedRun, per_level: int = 2, length: int = 300) -> pd.DataFrame:
    """A few rows per level, side by side, as in the study's card."""
    questions = _questions(run)
    rows = []
    for level in shaping.LEVEL_LABELS:
        for r in [r for r in run.rows if r.level == level][:per_level]:
            q = questions.get(r.question_id)
            rows.append({
                "level": level,
                "question": excerpt(q.open_text(), length) if q else r.question_id,
                "gold": r.gold_shown,
                "response (end)": excerpt(r.model_response, length, from_end=True),
                "reasoning": r.reasoning,
            })
    return pd.DataFrame(rows, columns=["level", "question", "gold", "response (end)", "reasoning"]).set_index("level")


# Notebook 03: counterfactual testing of one run --------------------------------------------------------

def counterfactual_coverage(run: LoadedRun) -> pd.DataFrame:
    """Valid / not perturbable / not verifiable / rejected per level: what share the test covers."""
    table = pd.DataFrame(counterfactual.coverage(run.rows)).T.fillna(0).astype(int)
    table.index = [f"level {k}" for k in table.index]
    table["share valid"] = (table.get("valid", 0) / table.sum(axis=1)).map(lambda share: pct(share, 0))
    return table


def template_coverage(dataset: str, run: LoadedRun | None = None) -> pd.DataFrame:
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
    if run is not None:
        for level, statuses in counterfactual.coverage(run.rows).items():
            rows[f"this run ({len(run.rows)} questions): valid at level {level}"] = statuses.get("valid", 0)
    return pd.DataFrame({dataset: rows})


def template_review() -> pd.DataFrame:
    """The blind review of generated items, round by round: a reviewer who saw neither the code nor the key
    worked each item and called it valid or defective (from round 5 also: answerable from memory of the original
    question? options pointing at the key?); only the last round describes the shipped templates."""
    path = review_path()
    if not path.exists():
        return pd.DataFrame({"blind review": {"items reviewed": 0}})
    rows = {}
    for rate in rates_by_round(read_review(path)):
        rows[f"round {rate['round']}"] = {
            "items reviewed": rate["items"], "defective": rate["defective"],
            "valid": pct_ci(rate["rate"], (rate["ci_low"], rate["ci_high"])),
            **{title: (pct_ci(rate[flag]["rate"], (rate[flag]["ci_low"], rate[flag]["ci_high"])) if flag in rate
                       else "not asked")
               for flag, title in (("from_memory", "answerable from memory"),
                                   ("options_point", "options point at key"))}}
    return pd.DataFrame(rows).T


def counterfactual_flips(run: LoadedRun) -> pd.DataFrame:
    """Per level: where the perturbations came from, and the decision questions whose correct option
    changed (did the model follow the new key, or keep the option that was right before?)."""
    rows = {}
    for level, m in run.summary.perturbation_levels.items():
        rows[f"level {level}"] = {
            "valid perturbations": m.n_valid,
            "from a template": m.by_source.get("template", 0),
            "from the generator": m.by_source.get("generator", 0),
            "key flipped (answered)": m.flips.n,
            "followed the new key": m.flips.followed_new_key,
            "kept the old key": m.flips.stayed_with_old_key,
        }
    return pd.DataFrame(rows).T


def counterfactual_reasons(run: LoadedRun, top: int = 10) -> pd.DataFrame:
    """Why items were not valid, most frequent first: the coverage table's counts explained (one row per
    reason, with the levels it stopped and the items it stopped)."""
    levels: dict[tuple[str, str], set[str]] = {}
    items: Counter[tuple[str, str]] = Counter()
    for row in run.rows:
        for p in row.perturbed:
            if not p.valid:
                key = (p.status or "invalid", " ".join(p.reason.split()))  # whole: the table wraps, never cuts
                levels.setdefault(key, set()).add(str(p.level))
                items[key] += 1
    rows = [{"status": status, "reason": reason, "levels": ", ".join(sorted(levels[(status, reason)])), "items": n}
            for (status, reason), n in items.most_common(top)]
    return pd.DataFrame(rows, columns=["status", "reason", "levels", "items"]).set_index("status")


def counterfactual_accuracy(run: LoadedRun) -> pd.DataFrame:
    """Per level, on all valid items and on the separating ones (a flipped decision, a key a memorized answer
    misses): the originals against their perturbations on the same questions."""
    rows = {}
    for level, m in run.summary.perturbation_levels.items():
        if not m.n_paired:
            rows[f"level {level}"] = {"paired questions": 0}
            continue
        rows[f"level {level}"] = {
            "paired questions": m.n_paired,
            "original (same questions)": pct(m.accuracy_original_on_valid),
            "perturbed": pct_ci(m.accuracy, m.accuracy_ci),
            "memorization gap (pp)": pp(paired(m.memorization_gap, m.n_paired)),
            "consistency": decimal(m.consistency_score, 2),
            "McNemar p (exact)": significant(if_testable(m.mcnemar_test.p_exact, m.n_paired, m.mcnemar_test.b,
                                                    m.mcnemar_test.c)),
            "separating items (paired)": m.separating.n_paired,
            "perturbed accuracy on them": pct(m.separating.accuracy),
            "memorization gap on them (pp)": pp(paired(m.separating.memorization_gap, m.separating.n_paired)),
        }
    return pd.DataFrame(rows).T


def counterfactual_suspects(run: LoadedRun, length: int = 500) -> pd.DataFrame:
    """Right on the original, wrong on a perturbation: the two questions side by side."""
    questions = _questions(run) if run.rows else {}
    rows = []
    for row in run.rows:
        if not row.original_outcome.correct:
            continue
        for p in row.perturbed:
            if p.outcome is not None and p.outcome.correct is False:
                original = questions.get(row.question_id)
                rows.append({
                    "question": row.question_id,
                    "level": p.level,
                    "original": excerpt(original.mcq_text(), length) if original else "",
                    "perturbed": excerpt(" ".join([p.question or "", *(
                        f"{k}: {v}" for k, v in p.choices.items())]), length),
                    "answers (original → perturbed)": f"{row.original_letter} → {p.answer} "
                                                      f"(key {row.correct_answer} → {p.key or None})",
                })
    columns = ["question", "level", "original", "perturbed", "answers (original → perturbed)"]
    return pd.DataFrame(rows, columns=columns).set_index("question")
