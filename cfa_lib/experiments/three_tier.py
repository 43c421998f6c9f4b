"""Three-tier grading of open answers (experiment A1) with error attribution.

Numbers decide what numbers can: within tolerance (and not closer to a distractor) is A; the wrong
sign or a factor of 2 or more is C without asking anyone. Only the band in between, and answers in
words, go to the judge, whose reasoning is recorded. Every C gets an error category from a fixed set.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal

from pydantic import BaseModel

from cfa_lib import prompts, stats
from cfa_lib.answerability import is_open_answerable
from cfa_lib.answers import (
    Number,
    aligned_values,
    gold_number_from_option,
    grade_number,
    numeric_key,
    open_key,
    parse_reply,
    relative_error,
)
from cfa_lib.data import Question, dataset_of, questions_by_id
from cfa_lib.experiments.contract import OPEN, Context, Experiment, Graded, Key, Sample, tally
from cfa_lib.experiments.judging import (
    CALIBRATION_QUESTIONS,
    JudgeAgreement,
    calibration_items,
    calibration_step,
    majority,
    run_calibration,
)
from cfa_lib.experiments.outcome import Outcome, outcome_of, read_open_answer
from cfa_lib.experiments.page import Page, code, md
from cfa_lib.experiments.settings import Settings
from cfa_lib.experiments.study_files import EXCLUSION_OF_CODE, FILE_CODES, LEVEL_NAMES, LEVEL_STATUS, file_code
from cfa_lib.experiments.three_tier_summary import ThreeTierSummary, Tiered, summarize
from cfa_lib.gold import GoldAnswer, from_option, gold_answers, gold_step, text_only
from cfa_lib.key_audit import AuditRecord
from cfa_lib.models import Ask, Completion, Request, Steps
from cfa_lib.params import Parameters, check_count, check_optional_model, checked_by
from cfa_lib.results import ResultRow

ERROR_CATEGORIES = ("conceptual_error", "formula_error", "assumption_error", "arithmetic_error",
                    "reading_error", "incomplete_reasoning")


class TierVerdict(BaseModel):
    level: Literal["A", "B", "C"]
    reasoning: str


class ErrorAttribution(BaseModel):
    error_category: Literal[ERROR_CATEGORIES]  # type: ignore[valid-type]
    explanation: str
    could_be_fixed_with_tools: bool


@dataclass
class Row(ResultRow):
    """One open answer of a three-tier run: its gold answer, level and (for a C) error attribution."""

    level: str | None
    evaluation: dict[str, Any]
    question_id: str | None = None
    correct_answer_letter: str | None = None
    gold_answer: dict[str, Any] | None = None
    model_response: str | None = None
    thinking: str | None = None
    error_attribution: dict[str, Any] | None = None
    excluded: str | None = None

    @property
    def outcome(self) -> Outcome:
        """The answer's outcome as the file records it: its level, or why it is excluded."""
        why, source = self.evaluation.get("reasoning"), self.evaluation.get("answer_source")
        if self.level not in LEVEL_STATUS:
            return Outcome.exclude(EXCLUSION_OF_CODE.get(self.excluded or "", "judge_failed"), why, source=source)
        no_answer = self.evaluation.get("verdict") == "no_answer"
        return Outcome("no_answer" if no_answer else LEVEL_STATUS[self.level], self.evaluation.get("student_value"),
                       why, source, judged=not self.evaluation.get("auto_graded"))

    @property
    def gold_shown(self) -> str | None:
        """The gold answer as a reader sees it: its number and unit, or its text when it has no number."""
        gold = self.gold_answer or {}
        if gold.get("numerical") is None:
            return gold.get("text")
        return f"{gold['numerical']:g} {gold.get('unit') or ''}"

    @property
    def reasoning(self) -> str | None:
        """Why the answer got its level: the grader's sentence or the judge's reasoning."""
        return self.evaluation.get("reasoning")

    @property
    def tiered(self) -> Tiered:
        """The answer as the summary reads it (`three_tier_summary`)."""
        return Tiered(self.outcome, self.level, bool(self.evaluation.get("auto_graded")),
                      (self.error_attribution or {}).get("error_category"),
                      bool(is_open_answerable(self.question_id or "")))

    def to_dict(self) -> dict[str, Any]:
        """The documented order of the study's files."""
        order = ("question_id", "correct_answer_letter", "level", "gold_answer", "model_response", "thinking",
                 "evaluation", "error_attribution", "excluded")
        row = super().to_dict()
        return {**{k: row.pop(k) for k in order}, **row}


# Grading by numbers -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class NumericTier:
    """What the numbers alone say: a level, or None when the judge must decide between B and C."""

    level: str | None
    reasoning: str


def numeric_tier(answer: Number, gold: GoldAnswer, distractors: Sequence[Number | None], tolerance: float
                 ) -> NumericTier:
    gold_number = Number(gold.numerical, gold.unit)
    grade = grade_number(answer, gold_number, distractors, rel_tol=tolerance)
    if grade.match:
        return NumericTier("A", grade.reason)
    student, expected = aligned_values(answer, gold_number)
    if expected == 0 or student == 0 or (student > 0) != (expected > 0):
        return NumericTier("C", f"wrong sign or zero: {answer.value:g} vs gold {gold.numerical:g}")
    ratio = student / expected
    if ratio >= 2 or ratio <= 0.5:
        return NumericTier("C", f"off by a factor of {max(ratio, 1 / ratio):.2f} (2 or more)")
    return NumericTier(None, f"{grade.reason}; within a factor of 2, so the judge decides B or C")


def first_pass(question: Question, gold: GoldAnswer, response: Completion, tolerance: float) -> Row:
    """A results row graded as far as numbers go: a level when they decide, else None for the judge.

    The answer is read by `grade_open_answer`: cut by the token limit is excluded (never C); a refusal, a
    hedge or nothing committed is C and counted as `no_answer`; words, or a key that is not a number, go
    to the judge.
    """
    graded = read_open_answer(response, question, tolerance)
    grade = None if isinstance(graded, Outcome) else graded
    answer = grade.value if grade is not None else None
    row = Row(
        question_id=question.id, correct_answer_letter=question.answer, level=None, gold_answer=gold.to_dict(),
        model_response=response.text, thinking=response.thinking,
        evaluation={"reasoning": None, "auto_graded": False, "student_value": answer.value if answer else None,
                    "student_unit": answer.unit if answer else None, "gold_value": gold.numerical,
                    "verdict": grade.verdict if grade else None,
                    "answer_source": grade.answer_source if grade else None},
    )
    outcome = graded if grade is None else (None if grade.verdict == "judge" else outcome_of(grade))
    if outcome is not None and outcome.excluded is not None:
        row.excluded, row.evaluation["reasoning"] = file_code(outcome), outcome.reason
    elif outcome is not None and outcome.status == "no_answer":
        row.level, row.evaluation["auto_graded"], row.evaluation["reasoning"] = "incorrect", True, outcome.reason
    elif outcome is not None and gold.numerical is not None and answer is not None:
        key = open_key(question)
        distractors = list(key.distractors.values()) if key else []
        tier = numeric_tier(answer, gold, distractors, tolerance)
        row.evaluation["reasoning"] = tier.reasoning
        if tier.level is not None:
            row.level = LEVEL_NAMES[tier.level]
            row.evaluation["auto_graded"] = True
    return row


# The judge --------------------------------------------------------------------------------------------

def tier_request(question: Question, gold: GoldAnswer, response: str) -> Request:
    gold_text = gold.text if gold.numerical is None else f"{gold.numerical:g} {gold.unit or ''} ({gold.text})"
    user = prompts.TIER_USER.format(question=question.open_text(), gold=gold_text,
                                    solution=gold.solution_summary or "not given", response=response)
    return Request(prompts.chat(prompts.TIER_SYSTEM, user), schema=TierVerdict)


def error_request(question: Question, gold: GoldAnswer, response: str) -> Request:
    user = prompts.ERROR_USER.format(question=question.open_text(), gold=gold.text, response=response)
    return Request(prompts.chat(prompts.ERROR_SYSTEM, user), schema=ErrorAttribution)


def level_said(completion: Completion | None) -> str | None:
    """The level (A, B or C) a judge's reply gives, or None when the reply is no verdict."""
    verdict = parse_reply(completion, TierVerdict, "judge")[0]
    return None if verdict is None else verdict.level


def judge_credits(completion: Completion | None) -> bool | None:
    """For calibration: did the judge give the answer any credit (A or B)? The key must get it, no distractor."""
    level = level_said(completion)
    return None if level is None else level != "C"


def capped_level(verdict: TierVerdict, numeric_band: bool) -> str:
    """The judge's level; a number already found outside the tolerance cannot be exact, so A becomes B."""
    return LEVEL_NAMES["B" if numeric_band and verdict.level == "A" else verdict.level]


def apply_verdict(row: Row, gold: GoldAnswer, judged: Mapping[str, Completion]) -> None:
    """The panel's level and reasoning into the row; no verdict (failed judges, a tie) excludes the row,
    never grades it C."""
    said = [level_said(c) for c in judged.values()]
    level, why = majority(said)
    if level is None:
        tie = any(s is not None for s in said)
        row.excluded = FILE_CODES["judge_tie" if tie else "judge_failed"]
        row.evaluation["reasoning"] = why if tie else row.evaluation["reasoning"]
        return
    verdict = next(v for c in judged.values() if (v := parse_reply(c, TierVerdict, "judge")[0]) and v.level == level)
    numeric_band = gold.numerical is not None and row.evaluation["student_value"] is not None
    row.level = capped_level(verdict, numeric_band)
    row.evaluation["reasoning"] = verdict.reasoning if len(judged) == 1 else f"{why}: {verdict.reasoning}"
    row.evaluation["judge_level"] = level


def attribution(completion: Completion) -> dict[str, Any]:
    """The error category of a Level C answer; a reply outside the fixed set (after the engine's one
    retry) is `unclassified`, so raw model text never lands in the category field."""
    parsed = parse_reply(completion, ErrorAttribution, "judge")[0]
    if parsed is not None:
        return parsed.model_dump()
    return {"error_category": "unclassified", "explanation": completion.error, "could_be_fixed_with_tools": None}


def judge_agreement(items: Sequence[tuple[Row, Mapping[str, Completion]]]) -> JudgeAgreement:
    """How often the judge (the panel's majority), asked blind, agrees with the numeric grader on
    auto-graded items."""
    pairs = []
    for row, judged in items:
        level = majority([level_said(c) for c in judged.values()])[0]
        if level is not None:
            pairs.append((row.level, LEVEL_NAMES[level]))
    if not pairs:
        return JudgeAgreement(0, None, None, None, len(items))
    numeric, judged = zip(*pairs, strict=True)
    return JudgeAgreement(n=len(pairs), percent_agreement=sum(a == b for a, b in pairs) / len(pairs),
                          cohen_kappa=stats.cohen_kappa(list(numeric), list(judged)),
                          cohen_kappa_ci=stats.cohen_kappa_ci(list(numeric), list(judged)),
                          judge_failed=len(items) - len(pairs))


# The experiment ---------------------------------------------------------------------------------------

class Options(Parameters):
    """Three-tier grading's own parameters."""

    gold_model: Annotated[str | None, checked_by(check_optional_model)] = None  # None: the panel's first judge
    agreement_sample: Annotated[int, checked_by(check_count)] = 50  # auto-graded answers the judge also grades
    agreement_seed: Annotated[int, checked_by(check_count)] = 0
    calibration_sample: Annotated[int, checked_by(check_count)] = CALIBRATION_QUESTIONS


def open_requests(questions: Sequence[Question]) -> dict[Key, Request]:
    """Format B of every question, keyed by question id (the same requests as option bias: shared cache)."""
    return {q.id: Request(prompts.open_messages(q)) for q in questions}


PAGE = Page(
    blurb="the open answers graded on three levels, the error categories of the incorrect ones and the judge's "
          "agreement with the numeric grading.",
    intro="""
# Three-tier grading of open answers

Multiple choice is both too lenient (the options leak the answer) and too strict (a defensible
different assumption is marked wrong). The open answers are graded on three levels: **A exact**
(within tolerance), **B directional** (right approach and magnitude, a different defensible assumption)
and **C incorrect**, and every C gets an error category. Numbers decide what numbers can; the judge
decides the band between the tolerance and a factor of 2, and answers in words.
""",
    parameters="""
judge_model = None       # None: gpt-4o-mini for OpenAI models, else the model itself
gold_model = None        # None: the judge model derives the gold answers that options do not carry
tolerance = 0.02         # relative tolerance of the numeric grading
""",
    imports=("from IPython.display import display",),
    sections=(
        md("## Level distribution"),
        code("display(notebook_tables.three_tier_levels(run))\nnotebook_tables.three_tier_accuracy(run)"),
        code("figures.three_tier_figure(by_model(run))"),
        md("## Why the C answers are wrong"),
        code("figures.error_categories_figure(by_model(run))"),
        md("## Worked examples, level by level"),
        code("notebook_tables.three_tier_examples(run)"),
    ),
)


class ThreeTier(Experiment[Options, Row, ThreeTierSummary]):
    name, card_id, title, notebook = "three_tier", "A1", "Three-tier grading", "02_three_tier.ipynb"
    file_names, reference_prefix = frozenset({"three_tier", "A1_open_ended"}), "A1_"
    tables, figures = ("table_p1_three_tier", "table_error_categories"), ("fig2_three_tier", "fig4_error_categories")
    page = PAGE
    reviewed = (OPEN, "tier")
    prompt_groups = (("GOLD_", "Gold answer for the open question (three-tier)"), ("TIER_", "Three-tier judge"),
                     ("ERROR_", "Error attribution of Level C answers"))
    review_shows = ("the question, the correct option and the whole response",
                    "the question, the correct option and the response as the study stored it (cut to a few hundred "
                    "characters)")
    Options, Row = Options, Row

    def helper_models(self, settings: Settings, options: Options) -> dict[str, str]:
        """The judges, and the gold model (default: the panel's first judge)."""
        return {**super().helper_models(settings, options), "gold": options.gold_model or settings.judges[0]}

    def requests(self, questions: Sequence[Question], options: Options) -> dict[Key, Request]:
        return open_requests(questions)

    def estimated_steps(self, run: Context[Options]) -> list[Ask]:
        """The open answers, the gold model's questions, and at most: every answer to the judge panel (the tier or
        the blind agreement sample, never both), the calibration items, and an error category for every answer;
        the key's text stands in for the answers, not known yet."""
        questions, options, judges = run.questions, run.options, run.settings.judges
        golds = {q.id: from_option(q) or text_only(q, "") for q in questions}
        tiers = {q.id: tier_request(q, golds[q.id], q.correct_text) for q in questions}
        return [*super().estimated_steps(run), gold_step(questions, options.gold_model or judges[0]),
                Ask(tiers, "Judges", panel=True, counted_as="judge"),
                calibration_step(calibration_items(questions, options.calibration_sample),
                                 lambda q, answer: tier_request(q, golds[q.id], answer)),
                Ask({q.id: error_request(q, golds[q.id], q.correct_text) for q in questions}, "Error attribution",
                    judges[0], counted_as="judge")]

    def grade(self, run: Context[Options], answers: Mapping[Key, Completion]) -> Steps[Graded[Row]]:
        """Gold answers, grading by numbers, the judge for the rest (and blind on a sample for agreement), the
        judge's calibration, and an error category for every C."""
        settings, options, questions = run.settings, run.options, run.questions
        gold_name = options.gold_model or settings.judges[0]
        golds = yield from gold_answers(questions, gold_name)
        by_id = {q.id: q for q in questions}

        rows = {q.id: first_pass(q, golds[q.id], answers[q.id], settings.tolerance) for q in questions}
        to_judge = [qid for qid, row in rows.items() if row.level is None and not row.excluded]
        auto = [qid for qid, row in rows.items() if row.evaluation["auto_graded"]]
        agreement_ids = random.Random(options.agreement_seed).sample(auto, min(options.agreement_sample, len(auto)))
        judged = yield Ask({
            **{(qid, "tier"): tier_request(by_id[qid], golds[qid], rows[qid].model_response) for qid in to_judge},
            **{(qid, "agreement"): tier_request(by_id[qid], golds[qid], rows[qid].model_response)
               for qid in agreement_ids},
        }, "Judges", panel=True, counted_as="judge")
        for qid in to_judge:
            apply_verdict(rows[qid], golds[qid], judged[qid, "tier"])
        agreement = judge_agreement([(rows[qid], judged[qid, "agreement"]) for qid in agreement_ids])

        credited = [r.level != "incorrect" for r in rows.values() if r.evaluation.get("judge_level")]
        calibration = (yield from run_calibration(
            settings.judges, [by_id[qid] for qid in to_judge], lambda q, answer: tier_request(q, golds[q.id], answer),
            judge_credits, credited, sample=options.calibration_sample)) if to_judge else None
        if calibration is not None and not calibration.passed:
            for row in rows.values():  # a judge that failed calibration decides nothing the book presents
                if row.evaluation.get("judge_level") and not row.evaluation.get("auto_graded"):
                    row.excluded, row.level = FILE_CODES["judge_uncalibrated"], None

        wrong = [qid for qid, row in rows.items() if row.level == "incorrect"]
        # the panel's first judge attributes errors (one category per C)
        attributions = yield Ask({qid: error_request(by_id[qid], golds[qid], rows[qid].model_response)
                                  for qid in wrong}, "Error attribution", settings.judges[0], counted_as="judge")
        for qid, completion in attributions.items():
            rows[qid].error_attribution = attribution(completion)
        facts = {"judge_agreement": agreement, "judge_calibration": calibration,
                 "gold_sources": tally([g.source for g in golds.values()])}
        return Graded(list(rows.values()), facts, {"gold_model": gold_name})

    def summarize(self, rows: Sequence[Row], metadata: Mapping[str, Any]) -> ThreeTierSummary:
        return summarize([row.tiered for row in rows])

    def samples(self, rows: Sequence[Row]) -> Iterator[Sample]:
        for row in rows:
            yield Sample(row.question_id, OPEN, row.tiered.answerable, row.outcome, tier=row.tiered.level,
                         response=row.model_response)

    def regrade(self, rows: Sequence[Row]) -> tuple[list[Row], dict[str, int]]:
        """This toolkit's gold rule on any file: a numeric gold is the key's number or none.

        A model gold that disagrees with the key's number is replaced by it and the stored answer is graded
        again by numbers; a model gold where the key has no number leaves the verdict without ground, so the
        row is excluded with the reason (its verdict would need the judge again, in words).
        """
        changes: Counter[str] = Counter()
        out = []
        for row in rows:
            regraded, why = regrade_row(row)
            if why:
                changes[why] += 1
            out.append(regraded)
        return out, dict(changes)

    def audit(self, rows: Sequence[Row], records: Mapping[str, AuditRecord]) -> tuple[list[Row], dict[str, int]]:
        """An answer graded against a key the audit corrects (`key_corrected`: its level was set against the old
        key's gold), or of a question it sets aside (`key_set_aside`), is excluded."""
        changes: Counter[str] = Counter()
        out = []
        for row in rows:
            record = records.get(row.question_id or "")
            if record is None or record.key == row.correct_answer_letter or row.level is None:
                out.append(row)
                continue
            why = "key_set_aside" if record.key is None else "key_corrected"
            out.append(replace(row, excluded=FILE_CODES[why], level=None))
            changes["answer to a question the audit sets aside: excluded" if record.key is None else
                    "answer levelled against a key the audit corrects: excluded"] += 1
        return out, dict(changes)


GOLD_MATCH = 0.005  # a gold number within 0.5 % of the key's is the key's (rounding)


def regrade_row(row: Row, tolerance: float = 0.02) -> tuple[Row, str | None]:
    """One row under the gold rule, and which change it made (None: none)."""
    gold = (row.gold_answer or {}).get("numerical")
    dataset = dataset_of(row.question_id or "")
    question = questions_by_id(dataset).get(row.question_id or "") if dataset else None
    if gold is None or question is None or row.level is None:
        return row, None
    key = numeric_key(question.choices, question.answer)
    if key is not None and relative_error(Number(float(gold), (row.gold_answer or {}).get("unit")), key.gold) \
            <= GOLD_MATCH:
        return row, None
    not_grounded = replace(row, excluded=FILE_CODES["not_grounded"], level=None)
    if key is None:
        return not_grounded, "graded against a model's number where the key has none"
    student = row.evaluation.get("student_value")
    if not row.evaluation.get("auto_graded") or student is None:
        return not_grounded, "judged against a model's number that is not the key's"
    key_gold = GoldAnswer(key.gold.value, key.gold.unit, question.correct_text, None, None, "option")
    distractors = [gold_number_from_option(t) for t in question.distractors.values()]
    tier = numeric_tier(Number(float(student), row.evaluation.get("student_unit")), key_gold, distractors, tolerance)
    if tier.level is None:
        return not_grounded, "regraded against the key's number: needs the judge"
    level = LEVEL_NAMES[tier.level]
    regraded = replace(row, level=level, evaluation={
        **row.evaluation, "reasoning": f"re-graded against the key's number: {tier.reasoning}"})
    return regraded, ("regraded against the key's number: level changed" if level != row.level else
                      "regraded against the key's number: same level")


THREE_TIER = ThreeTier()
