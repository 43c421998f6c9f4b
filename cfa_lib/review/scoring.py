"""A filled review file scored against the run it samples: agreement, the judge corrected, validity.

Every label is joined to its item by `item_id`, so the toolkit's verdict and the path that decided it
come from the run, never from the sheet. A "cannot_tell" is counted and left out of every figure; an
empty verdict is an item not reviewed yet. With several reviewers, toolkit-vs-person agreement pools
their labels, the corrections use one label per item (the reviewers' common verdict; an item on which
they disagree is left out and counted), and their agreement with each other is the ceiling.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import combinations
from pathlib import Path

import pandas as pd

from cfa_lib.experiments.loading import LoadedRun
from cfa_lib.perturbation.review import ReviewRow, reviewed_rate
from cfa_lib.review.agreement import Agreement, agreement, confusion
from cfa_lib.review.correction import Correction, Stratum, stratified_theta
from cfa_lib.review.items import CANNOT_TELL, VERDICTS, ReviewItem, review_items
from cfa_lib.review.spreadsheet import Label, read_labels

# The run's judge-based accuracies, per kind of item: name -> which verdicts count as correct.
ACCURACIES: dict[str, dict[str, frozenset[str]]] = {
    "open": {"open-answer accuracy": frozenset({"correct"})},
    "tier": {"strict accuracy (A)": frozenset({"A"}), "lenient accuracy (A or B)": frozenset({"A", "B"})},
    "item": {},
}


@dataclass(frozen=True)
class CorrectedAccuracy:
    """One accuracy of the run: as the toolkit reports it, and with its judged part corrected."""

    name: str
    n: int  # counted items of the run
    judged: int  # of which the judge decided
    raw: float
    corrected: float | None
    ci: tuple[float, float] | None
    judge: Correction


@dataclass(frozen=True)
class ReviewScore:
    """Everything a review file says about its run."""

    experiment: str
    model: str
    review_path: Path
    run_items: int
    sampled: int  # distinct items in the review file
    labels: int  # verdicts given (cannot_tell included)
    unlabelled: int
    cannot_tell: int
    reviewers: tuple[str, ...]
    labels_per_reviewer: dict[str, int]
    overall: Agreement
    by_path: dict[str, Agreement]
    by_verdict: dict[str, Agreement]
    confusion: pd.DataFrame
    accuracies: list[CorrectedAccuracy] = field(default_factory=list)
    validity: dict | None = None  # counterfactual items: the reviewed validity rate (Wilson)
    ceiling: Agreement | None = None  # reviewers with each other
    disagreeing_items: int = 0  # items the reviewers labelled differently (left out of the corrections)
    reviewer_kinds: tuple[str, ...] = ()  # who made the labels: person, model

    @property
    def by_a_person(self) -> bool:
        """Every label was made by a person: only then is this a human check, and its corrections a person's."""
        return bool(self.reviewer_kinds) and set(self.reviewer_kinds) == {"person"}


def _compare(pairs: Sequence[tuple[ReviewItem, Label]], cannot_tell: int) -> Agreement:
    return agreement([i.verdict for i, _ in pairs], [lab.verdict for _, lab in pairs], cannot_tell)


def _grouped(pairs: Sequence[tuple[ReviewItem, Label]], labels: Sequence[tuple[ReviewItem, Label]],
             key: Callable[[ReviewItem], str], chance: bool = True) -> dict[str, Agreement]:
    """Agreement per group; `chance=False` for groups of one toolkit verdict, where kappa and pi mean nothing."""
    groups: dict[str, list] = defaultdict(list)
    unsure: Counter[str] = Counter()
    for item, lab in labels:
        if lab.verdict == CANNOT_TELL:
            unsure[key(item)] += 1
    for item, lab in pairs:
        groups[key(item)].append((item, lab))
    out = {name: _compare(groups.get(name, []), unsure[name]) for name in sorted(set(groups) | set(unsure))}
    return out if chance else {k: replace(v, kappa=None, kappa_ci=None, pi=None, pi_ci=None) for k, v in out.items()}


def consensus(labels: Sequence[tuple[ReviewItem, Label]]) -> tuple[dict[str, str], int]:
    """One verdict per item: the reviewers' common one; items where they differ, and their count."""
    by_item: dict[str, set[str]] = defaultdict(set)
    for item, lab in labels:
        if lab.verdict != CANNOT_TELL:
            by_item[item.item_id].add(lab.verdict)
    agreed = {item_id: next(iter(v)) for item_id, v in by_item.items() if len(v) == 1}
    return agreed, sum(len(v) > 1 for v in by_item.values())


def corrected_accuracy(name: str, positive: frozenset[str], run_items: Sequence[ReviewItem],
                       person: Mapping[str, str], confidence: float = 0.95) -> CorrectedAccuracy:
    """The run's accuracy with the judge's part corrected stratum by stratum; the rules' part kept."""
    judged = [i for i in run_items if i.path == "judge"]
    strata: dict[tuple[str, str], list[ReviewItem]] = defaultdict(list)
    for item in judged:
        strata[item.stratum].append(item)
    correction = stratified_theta([
        Stratum(f"{path}/{status}", group[0].verdict in positive, len(group),
                tuple(person[i.item_id] in positive for i in group if i.item_id in person))
        for (path, status), group in sorted(strata.items())], confidence) if judged else None
    n = len(run_items)
    ruled_correct = sum(i.verdict in positive for i in run_items if i.path != "judge")
    raw = sum(i.verdict in positive for i in run_items) / n
    if correction is None:  # nothing judged: the rules decided everything
        empty = Correction(0, 0, 0.0, None, None, None, None)
        return CorrectedAccuracy(name, n, 0, raw, None, None, empty)
    if correction.theta is None or correction.ci is None:
        return CorrectedAccuracy(name, n, len(judged), raw, None, None, correction)
    share = len(judged) / n
    corrected = (ruled_correct + len(judged) * correction.theta) / n
    low, high = correction.ci
    rest = ruled_correct / n
    return CorrectedAccuracy(name, n, len(judged), raw, corrected, (rest + share * low, rest + share * high),
                             correction)


def validity(labels: Sequence[tuple[ReviewItem, Label]], person: Mapping[str, str]) -> dict | None:
    """Of the items the run held valid and the person could judge, the share the person calls valid."""
    rows = [ReviewRow(i.question_id, i.question_id.rpartition("_")[0], int(i.part.lstrip("L") or 0),
                      -1 if i.seed is None else i.seed, 1, None, person[i.item_id], "")
            for i in {item.item_id: item for item, _ in labels}.values()
            if i.kind == "item" and i.verdict == "valid" and i.item_id in person]
    return reviewed_rate(rows) if rows else None


def ceiling(labels: Sequence[tuple[ReviewItem, Label]]) -> Agreement | None:
    """The reviewers' agreement with each other (pairs of reviewers pooled), or None with one reviewer."""
    by_reviewer: dict[str, dict[str, str]] = defaultdict(dict)
    for item, lab in labels:
        by_reviewer[lab.reviewer][item.item_id] = lab.verdict
    if len(by_reviewer) < 2:
        return None
    a, b, unsure = [], [], 0
    for first, second in combinations(sorted(by_reviewer), 2):
        for item_id in sorted(set(by_reviewer[first]) & set(by_reviewer[second])):
            x, y = by_reviewer[first][item_id], by_reviewer[second][item_id]
            if CANNOT_TELL in (x, y):
                unsure += 1
            else:
                a.append(x)
                b.append(y)
    return agreement(a, b, unsure)


def score_review(run: LoadedRun, path: Path | str, confidence: float = 0.95) -> ReviewScore:
    """Score a review file of `run` (every bad line named at once, see `spreadsheet.read_labels`)."""
    run_items = review_items(run)
    items = {item.item_id: item for item in run_items}
    all_labels = read_labels(path, items)
    labels = [(items[lab.item_id], lab) for lab in all_labels if lab.verdict]
    pairs = [(item, lab) for item, lab in labels if lab.verdict != CANNOT_TELL]
    unsure = len(labels) - len(pairs)
    kind = run_items[0].kind if run_items else "open"
    person, disagreeing = consensus(labels)
    accuracies = [corrected_accuracy(name, positive, run_items, person, confidence)
                  for name, positive in ACCURACIES[kind].items()]
    reviewers = tuple(sorted({lab.reviewer for _, lab in labels}))
    return ReviewScore(
        run.experiment, run.model, Path(path), len(run_items), len({lab.item_id for lab in all_labels}),
        len(labels), len(all_labels) - len(labels), unsure, reviewers,
        dict(Counter(lab.reviewer for _, lab in labels)), _compare(pairs, unsure),
        _grouped(pairs, labels, lambda i: i.path), _grouped(pairs, labels, lambda i: i.verdict, chance=False),
        confusion([i.verdict for i, _ in pairs], [lab.verdict for _, lab in pairs],
                  [v for v in VERDICTS[kind] if v != CANNOT_TELL]),
        accuracies, validity(labels, person) if kind == "item" else None, ceiling(labels), disagreeing,
        tuple(sorted({lab.kind for _, lab in labels})))


def _num(value: float | None, digits: int = 3) -> str:
    return "undefined" if value is None else f"{value:.{digits}f}"


def _interval(ci: tuple[float, float] | None, digits: int = 3) -> str:
    return "" if ci is None else f" [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def describe(score: ReviewScore) -> str:
    """The score as the command line prints it."""
    a = score.overall
    lines = [f"{score.experiment} ({score.model}): {score.labels} labels on {score.sampled} sampled items "
             f"of {score.run_items}; {score.cannot_tell} cannot tell (excluded), {score.unlabelled} not labelled yet; "
             f"reviewers: {', '.join(score.reviewers) or 'none'} ({' and '.join(score.reviewer_kinds) or 'none'})",
             f"agreement {a.agree}/{a.n} = {_num(a.rate)}{_interval(a.rate_ci)}; Cohen's kappa {_num(a.kappa)}"
             f"{_interval(a.kappa_ci)}; Scott's pi {_num(a.pi)}{_interval(a.pi_ci)}"]
    for title, groups in (("by path", score.by_path), ("by toolkit verdict", score.by_verdict)):
        for name, g in groups.items():
            lines.append(f"  {title} {name}: {g.agree}/{g.n} agree, kappa {_num(g.kappa)}, pi {_num(g.pi)}, "
                         f"{g.cannot_tell} cannot tell")
    lines.append("confusion (rows: toolkit, columns: person):\n" + score.confusion.to_string())
    for acc in score.accuracies:
        j = acc.judge
        lines.append(f"{acc.name}: {_num(acc.raw)} as graded; judged {acc.judged} of {acc.n}; judge sensitivity "
                     f"{_num(j.q1)}, specificity {_num(j.q0)}; corrected {_num(acc.corrected)}{_interval(acc.ci)}"
                     + (f" (no usable label in {', '.join(j.missing)})" if j.missing else ""))
    if score.validity:
        v = score.validity
        lines.append(f"reviewed validity of the run's valid items: {v['valid']}/{v['items']} = {v['rate']:.3f} "
                     f"[{v['ci_low']:.3f}, {v['ci_high']:.3f}] (Wilson)")
    if score.ceiling is not None:
        c = score.ceiling
        lines.append(f"reviewers with each other: {c.agree}/{c.n}, kappa {_num(c.kappa)}, pi {_num(c.pi)}")
    return "\n".join(lines)
