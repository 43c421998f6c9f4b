"""The judge: who judges (never the subject when another model is available), a panel's majority, and the
calibration every judge passes before its verdicts are used.

Calibration needs no human: the answer key says what a judge must say. The correct option's text given as
the answer must be judged correct; each distractor's text must be judged incorrect; so must the same texts
paraphrased by code. From those items come the judge's sensitivity q1 and specificity q0 (Wilson
intervals) and the judge-corrected accuracy θ = (p + q0 − 1) / (q0 + q1 − 1) of Lee et al.
(arXiv 2511.21140), with a parametric bootstrap interval.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Self

import numpy as np

from cfa_lib import stats
from cfa_lib.data import Question
from cfa_lib.models import Ask, ChatClient, Completion, ModelSpec, Request, RunOptions, Steps, complete_keyed

MIN_SENSITIVITY = 0.8  # a judge below either bound fails calibration: its results are labelled uncalibrated
MIN_SPECIFICITY = 0.8
CALIBRATION_QUESTIONS = 10  # questions sampled per run; each gives one correct and two or more wrong items


def default_judges(model: ModelSpec) -> list[str]:
    """A judge from another model: gpt-4o judges gpt-4o-mini and gpt-4o-mini judges any other OpenAI model;
    offline, the only model at hand is the subject itself, and the run says it is self-judged. A model the models
    file lists with a `judge` is judged by that one."""
    if (entry := model.listing) is not None and entry.judge:
        return [entry.judge]
    if model.backend == "openai":
        return ["gpt-4o" if model.model == "gpt-4o-mini" else "gpt-4o-mini"]
    return [model.name]


def majority(verdicts: Sequence[Any]) -> tuple[Any, str]:
    """The panel's verdict (PoLL, Verga et al. 2024): the most frequent verdict of the judges that answered
    (True/False, or a level); a tie at the top, or no judge answering, decides nothing (None) and says why."""
    answered = Counter(v for v in verdicts if v is not None)
    if not answered:
        return None, "no judge answered"
    ranked = answered.most_common()
    counts = ", ".join(f"{value}: {n}" for value, n in ranked)
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None, f"tie between the judges ({counts})"
    return ranked[0][0], f"{ranked[0][1]} of {sum(answered.values())} judges ({counts})"


def ask_panel(judges: Mapping[str, ChatClient], requests: Mapping[Any, Request], options: RunOptions | None = None
              ) -> dict[Any, dict[str, Completion]]:
    """Every judge of the panel answers every request: `{key: {judge name: completion}}` (`options`: the run's
    engine settings)."""
    replies: dict[Any, dict[str, Completion]] = {key: {} for key in requests}
    for name, client in judges.items():
        for key, completion in complete_keyed(client, requests, desc=f"Judge {name}", options=options).items():
            replies[key][name] = completion
    return replies


# Calibration ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CalibrationItem:
    question: Question
    answer: str  # the text shown to the judge as the student's answer
    truly_correct: bool
    kind: str  # "key", "distractor", "key paraphrased", "distractor paraphrased"


_WRITTEN_UNITS = {"%": " percent", "$": "USD ", "€": "EUR ", "£": "GBP ", "¥": "JPY "}


def paraphrase(text: str) -> str | None:
    """The same answer written differently by code: units spelled out, thousands separators dropped, a
    trailing period removed. None when nothing would change (the item would repeat itself)."""
    out = text.strip().rstrip(".")
    out = re.sub(r"(?<=\d),(?=\d{3}\b)", "", out)
    out = re.sub(r"(\d(?:[\d.]*))\s?%", r"\1 percent", out)
    out = re.sub(r"([$€£¥])\s?(\d[\d.]*)", lambda m: f"{_WRITTEN_UNITS[m.group(1)]}{m.group(2)}", out)
    if out == text.strip() or out == text.strip().rstrip("."):
        out = f"The answer is {out[0].lower()}{out[1:]}." if out else out
    return out if out and out != text else None


def calibration_items(questions: Sequence[Question], sample: int = CALIBRATION_QUESTIONS, seed: int = 0
                      ) -> list[CalibrationItem]:
    """Items whose truth the answer key gives: the key and every distractor, as written and paraphrased."""
    chosen = random.Random(seed).sample(list(questions), min(sample, len(questions)))
    items = []
    for q in sorted(chosen, key=lambda q: q.index):
        for letter, text in q.choices.items():
            correct = letter == q.answer
            items.append(CalibrationItem(q, text, correct, "key" if correct else "distractor"))
            reworded = paraphrase(text)
            if reworded is not None:
                items.append(CalibrationItem(q, reworded, correct,
                                             "key paraphrased" if correct else "distractor paraphrased"))
    return items


@dataclass(frozen=True)
class JudgeCalibration:
    """How the judge (or panel) did on items whose truth the key gives, and the run's judge-corrected accuracy."""

    n: int  # items with a verdict
    n_failed: int
    n_positive: int
    n_negative: int
    sensitivity: float | None  # q1: truly correct items judged correct
    sensitivity_ci: list[float] | None
    specificity: float | None  # q0: truly wrong items judged wrong
    specificity_ci: list[float] | None
    thresholds: dict[str, float]
    passed: bool
    n_judged: int
    judged_accuracy: float | None  # p: the run's own judged verdicts
    corrected_accuracy: float | None  # θ = (p + q0 − 1) / (q0 + q1 − 1)
    corrected_accuracy_ci: list[float] | None
    by_kind: dict[str, dict[str, int]] | None = None  # key, distractor, paraphrased: items and agreements
    judges: list[str] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        return cls(**{f.name: data.get(f.name) for f in fields(cls)})


def calibrate(items: Sequence[CalibrationItem], verdicts: Sequence[bool | None],
              judged_correct: Sequence[bool], seed: int = 0) -> JudgeCalibration:
    """Sensitivity, specificity, whether the judge passes, and the judge-corrected accuracy of the run.

    `verdicts` are the judge's (or panel's) verdicts on `items` (None: no verdict, left out);
    `judged_correct` the run's own judged verdicts, whose rate p is corrected.
    """
    pairs = [(item.truly_correct, v) for item, v in zip(items, verdicts, strict=True) if v is not None]
    positives = [v for truth, v in pairs if truth]
    negatives = [not v for truth, v in pairs if not truth]
    n1, n0 = len(positives), len(negatives)
    q1 = sum(positives) / n1 if n1 else None
    q0 = sum(negatives) / n0 if n0 else None
    p = sum(judged_correct) / len(judged_correct) if judged_correct else None
    corrected, interval = None, None
    if q1 is not None and q0 is not None and p is not None and q0 + q1 - 1 > 0:
        corrected, interval = _corrected(p, q0, q1), _corrected_interval(p, len(judged_correct), q0, n0, q1, n1, seed)
    return JudgeCalibration(
        n=len(pairs), n_failed=len(items) - len(pairs), n_positive=n1, n_negative=n0,
        sensitivity=q1, sensitivity_ci=list(stats.wilson_interval(sum(positives), n1)) if n1 else None,
        specificity=q0, specificity_ci=list(stats.wilson_interval(sum(negatives), n0)) if n0 else None,
        thresholds={"sensitivity": MIN_SENSITIVITY, "specificity": MIN_SPECIFICITY},
        passed=q1 is not None and q0 is not None and q1 >= MIN_SENSITIVITY and q0 >= MIN_SPECIFICITY,
        n_judged=len(judged_correct), judged_accuracy=p, corrected_accuracy=corrected,
        corrected_accuracy_ci=interval)


def _corrected_interval(p: float, n: int, q0: float, n0: int, q1: float, n1: int, seed: int) -> list[float] | None:
    """A parametric bootstrap interval of θ: p, q0 and q1 drawn again from their binomials."""
    rng = np.random.default_rng(seed)
    draws = 2000
    ps = rng.binomial(n, p, draws) / n
    q0s = rng.binomial(n0, q0, draws) / n0
    q1s = rng.binomial(n1, q1, draws) / n1
    keep = q0s + q1s - 1 > 0
    thetas = [_corrected(a, b, c) for a, b, c in zip(ps[keep], q0s[keep], q1s[keep], strict=True)]
    return [float(np.quantile(thetas, 0.025)), float(np.quantile(thetas, 0.975))] if thetas else None


def _corrected(p: float, q0: float, q1: float) -> float:
    """θ = (p + q0 − 1) / (q0 + q1 − 1), clipped to [0, 1]."""
    return float(min(1.0, max(0.0, stats.lee_theta(p, q0, q1))))


def calibration_step(items: Sequence[CalibrationItem], request_for: Callable[[Question, str], Request]) -> Ask:
    """Every calibration item asked of every judge of the panel."""
    return Ask({i: request_for(item.question, item.answer) for i, item in enumerate(items)}, "Judge calibration",
               panel=True, counted_as="judge calibration")


def run_calibration(judges: Sequence[str], questions: Sequence[Question],
                    request_for: Callable[[Question, str], Request], verdict_of: Callable[[Completion], bool | None],
                    judged_correct: Sequence[bool], sample: int = CALIBRATION_QUESTIONS, seed: int = 0
                    ) -> Steps[JudgeCalibration]:
    """Calibrate the judge panel `judges` on key-derived items from `questions` (the run's judged questions):
    one declared step, every judge of the panel answering every item (`cfa_lib.models.steps`)."""
    items = calibration_items(questions, sample, seed)
    replies = yield calibration_step(items, request_for)
    verdicts = [majority([verdict_of(c) for c in replies[i].values()])[0] for i in range(len(items))]
    by_kind = {kind: {"n": sum(1 for it, v in zip(items, verdicts, strict=True)
                               if it.kind == kind and v is not None),
                      "agreed": sum(1 for it, v in zip(items, verdicts, strict=True)
                                    if it.kind == kind and v is not None and v == it.truly_correct)}
               for kind in sorted(Counter(it.kind for it in items))}
    return replace(calibrate(items, verdicts, judged_correct, seed), by_kind=by_kind, judges=list(judges))


@dataclass(frozen=True)
class JudgeAgreement:
    """How often the judge, asked blind, agrees with the numeric grader on answers numbers graded."""

    n: int
    percent_agreement: float | None
    cohen_kappa: float | None
    cohen_kappa_ci: list[float] | None
    judge_failed: int

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if not self.n:
            del data["cohen_kappa_ci"]  # the files' shape: no interval when nothing was compared
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        return cls(**{f.name: data.get(f.name) for f in fields(cls)})
