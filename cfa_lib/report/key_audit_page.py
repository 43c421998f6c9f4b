"""The book's chapter on the answer keys (issue #35): the audit's method and census, its verdicts with worked
examples, and how each headline figure of the study's runs moves when they are graded against the audited keys
instead of the dataset's (the counts of items behind each change beside it)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from cfa_lib.data import DATASET_NAMES, questions_by_id
from cfa_lib.experiments.loading import LoadedRun
from cfa_lib.experiments.option_bias import OPTION_BIAS
from cfa_lib.experiments.registry import load_results
from cfa_lib.experiments.three_tier import THREE_TIER
from cfa_lib.key_audit.census import census
from cfa_lib.key_audit.records import VERDICTS, key_audit
from cfa_lib.key_audit.signals import SIGNALS
from cfa_lib.paths import REFERENCE_DIR
from cfa_lib.report.format import pct, pp


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell).replace("|", "\\|").replace("\n", " ") for cell in row) + " |"
              for row in rows]
    return "\n".join(lines)


def _precision(found: dict[str, int]) -> str:
    """A signal's precision: of its reviewed candidates, how many keys were wrong and how many set aside."""
    n = found["reviewed"]
    return f"{n}: {found['key_wrong']} / {found['set_aside']}" if n else "0"


def _headline(run: LoadedRun) -> list[tuple[str, str]]:
    """(figure, value) of a run's headline figures, by experiment."""
    s = run.summary
    if run.experiment == OPTION_BIAS.name:
        return [("accuracy with options", pct(s.accuracy_with_options)),
                ("accuracy without options", pct(s.accuracy_without_options)),
                ("option bias (pp)", pp(s.option_bias)), ("paired questions", str(s.n_paired)),
                ("option bias, open-answerable (pp)", pp(s.answerable.option_bias)),
                ("paired open-answerable questions", str(s.answerable.n_paired))]
    if run.experiment == THREE_TIER.name:
        rates = s.level_rates
        return [("Level A (exact)", pct(rates.get("exact"))), ("Level B (directional)", pct(rates.get("directional"))),
                ("Level C (incorrect)", pct(rates.get("incorrect"))), ("graded answers", str(s.n_graded))]
    level = s.perturbation_levels.get("1")
    return [("accuracy on the originals", pct(s.accuracy_original)),
            ("memorization gap, level 1 (pp)", pp(level.memorization_gap if level else None)),
            ("pairs, level 1", str(level.n_paired if level else 0))]


def moved_figures(files: Sequence[Path] | None = None) -> str:
    """The study's runs re-graded twice, against the dataset's keys and against the audited ones: each headline
    figure both ways, and what the audit changed (rows per change)."""
    rows = []
    for path in files if files is not None else sorted(REFERENCE_DIR.glob("*.json")):
        original, audited = load_results(path, keys="original"), load_results(path, keys="audited")
        label = f"{original.model}, {original.experiment.replace('_', ' ')}"
        changes = {k: v for k, v in audited.regrade_changes.items() if k not in original.regrade_changes}
        behind = "; ".join(f"{why}: {n}" for why, n in changes.items()) or "no item changed"
        for (figure, before), (_, after) in zip(_headline(original), _headline(audited), strict=True):
            rows.append((label, figure, before, after, behind))
            label, behind = "", ""
    return _table(["run", "figure", "dataset's keys", "audited keys", "items behind the change"], rows)


def _examples(dataset: str) -> list[tuple[str, ...]]:
    questions = questions_by_id(dataset)
    rows = []
    for record in key_audit(dataset).values():
        if record.verdict == "key_right":
            continue
        question = questions[record.question_id]
        stem = question.stem if len(question.stem) < 220 else question.stem[:217] + "..."
        change = f"{record.original} → {record.corrected}" if record.corrected else f"{record.original}: set aside"
        why = record.resolution or record.reviews[0].reason
        rows.append((record.question_id, stem, change, VERDICTS[record.verdict], why))
    return rows


def key_audit_page() -> str:
    """The generated part of the chapter: census, verdicts, every changed key with its reason, the moved figures."""
    parts = ["## What flagged a key\n", _table(["signal", "what it means"], list(SIGNALS.items())), ""]
    counts = [census(dataset) for dataset in DATASET_NAMES]
    header = ["", *(c["dataset"] for c in counts)]
    rows = [("questions", *(c["questions"] for c in counts)), ("candidates", *(c["candidates"] for c in counts))]
    rows += [(f"… flagged by {name}: key wrong / set aside", *(_precision(c["signal_precision"][name])
                                                                for c in counts)) for name in SIGNALS]
    rows += [("controls (unflagged, reviewed blind beside them)", *(c["controls"] for c in counts)),
             ("reviewed", *(c["reviewed"] for c in counts)),
             ("two reviews that agreed", *(c["reviews_agreed"] for c in counts))]
    rows += [(f"verdict: {text}", *(c["verdicts"][name] for c in counts)) for name, text in VERDICTS.items()]
    rows += [("controls' verdicts", *(", ".join(f"{k} {v}" for k, v in c["control_verdicts"].items()) or "–"
                                      for c in counts))]
    parts += ["## The census\n", _table(header, rows), ""]
    reviewers = sorted({r for c in counts for r in c["reviewers"]})
    parts += [f"Reviewers: {', '.join(reviewers) or 'none yet'}.", ""]
    examples = [row for dataset in DATASET_NAMES for row in _examples(dataset)]
    parts += ["## Every key the audit changes or sets aside\n",
              _table(["question", "stem", "key", "verdict", "why"], examples) if examples else "None.", ""]
    parts += ["## How the study's figures move\n",
              "Each of the study's runs re-graded by this toolkit's rules, once against the dataset's keys and once "
              "against the audited keys; a letter is re-graded against a corrected key, an open answer judged "
              "against the old key cannot be and is set aside, and every answer to a question the audit sets "
              "aside is excluded. The published figures themselves (the files' own verdicts) are unchanged.\n",
              moved_figures(), ""]
    return "\n".join(parts)
