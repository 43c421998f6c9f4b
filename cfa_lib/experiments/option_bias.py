"""Option bias (experiment A5): the same question with and without its answer choices.

Format A is graded against the answer key by the letter the response commits to. Format B is graded
against the correct option: numerically when the option carries a number (with the rule that a value
closer to a distractor is wrong), otherwise by an LLM judge. Failed model or judge calls are excluded
from the paired analysis and reported, never counted as wrong answers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Any

from pydantic import BaseModel

from cfa_lib import prompts
from cfa_lib.answerability import classify, is_open_answerable
from cfa_lib.answers import Number, parse_reply
from cfa_lib.answers.commitment import has_refusal
from cfa_lib.data import Question
from cfa_lib.experiments import variants as answer_variants
from cfa_lib.experiments.contract import FORMAT_A, FORMAT_B, Context, Experiment, Graded, Key, Sample
from cfa_lib.experiments.judging import (
    CALIBRATION_QUESTIONS,
    calibration_items,
    calibration_step,
    majority,
    run_calibration,
)
from cfa_lib.experiments.option_bias_summary import OptionBiasSummary, Pair, summarize
from cfa_lib.experiments.outcome import Outcome, grade_letter, outcome_of, read_open_answer
from cfa_lib.experiments.page import Page, code, md
from cfa_lib.experiments.study_files import (
    EXCLUSION_OF_CODE,
    FILE_CODES,
    NO_ANSWER,
    letter_error,
    letter_from_file,
    response_status,
    verdict_code,
)
from cfa_lib.key_audit import VERDICTS, AuditRecord
from cfa_lib.models import Ask, Completion, Request, Steps
from cfa_lib.params import Parameters, check_count, checked_by
from cfa_lib.results import ResultRow


class JudgeVerdict(BaseModel):
    """The open-answer judge's reply (experiment card A5)."""

    correct: bool
    reasoning: str


@dataclass
class Row(ResultRow):
    """One question of an option-bias run: both formats, the open verdict, the pairing."""

    question_id: str
    correct_with_options: bool | None
    correct_without_options: bool | None
    judge_verdict: str
    correct_answer: str | None = None
    correct_text: str | None = None
    answer_with: str | None = None
    no_answer_with: bool = False
    error_with: str | None = None
    answer_without: str | None = None
    judge_reasoning: str | None = None
    option_biased: bool | None = None
    response_with: str | None = None
    response_without: str | None = None
    thinking_with: str | None = None
    thinking_without: str | None = None
    open_answerable: bool | None = None  # None in the study's files: the shipped classification decides
    open_status: str | None = None  # answered | no_answer | truncated | failed (Format B)
    answer_source: str | None = None  # final_line | heuristic: which path read Format B's answer
    variants: dict[str, dict[str, Any]] | None = None  # answer-format variants asked (experiments.variants)

    @property
    def answerable(self) -> bool:
        known = self.open_answerable if self.open_answerable is not None else is_open_answerable(self.question_id)
        return bool(known)

    @property
    def with_options(self) -> Outcome:
        """Format A's outcome, as the file records it."""
        return letter_from_file(self.answer_with, self.correct_with_options, self.error_with, self.no_answer_with)

    @property
    def without_options(self) -> Outcome:
        """Format B's outcome, as the file records it (ours or the study's verdicts)."""
        code = self.judge_verdict
        if self.correct_without_options is None:
            return Outcome.exclude(EXCLUSION_OF_CODE.get(code, "failed"), self.judge_reasoning,
                                   source=self.answer_source)
        if code == NO_ANSWER:
            return Outcome("no_answer", reason=self.judge_reasoning, source=self.answer_source)
        status = "correct" if self.correct_without_options else "incorrect"
        return Outcome(status, self.answer_without, self.judge_reasoning, self.answer_source,
                       judged=not code.startswith("NUMERICAL_"))

    @property
    def pair(self) -> Pair:
        """The question as the summary reads it (`option_bias_summary`)."""
        return Pair(self.with_options, self.without_options, self.judge_verdict, self.answerable, self.open_status)

    def to_dict(self) -> dict[str, Any]:
        """The documented order of the study's files (question, Format A, Format B, pairing, texts)."""
        order = ("question_id", "correct_answer", "correct_text", "answer_with", "correct_with_options",
                 "no_answer_with", "error_with", "judge_verdict", "answer_without", "judge_reasoning",
                 "correct_without_options", "option_biased", "response_with", "response_without",
                 "thinking_with", "thinking_without", "open_answerable", "open_status", "answer_source")
        row = super().to_dict()
        if row.get("variants") is None:
            row.pop("variants", None)  # files without variants keep their shape
        return {**{k: row.pop(k) for k in order}, **row}


def option_biased(with_options: bool | None, without_options: bool | None) -> bool | None:
    """Right with the options, wrong without them; None unless both formats were graded."""
    if with_options is None or without_options is None:
        return None
    return with_options and not without_options


# Requests and grading ---------------------------------------------------------------------------------

def format_requests(questions: Sequence[Question]) -> dict[Key, Request]:
    """Format A and Format B of every question, keyed by (question id, format), sent as one batch."""
    return {
        **{(q.id, "A"): Request(prompts.mcq_messages(q)) for q in questions},
        **{(q.id, "B"): Request(prompts.open_messages(q)) for q in questions},
    }


def judge_request(question: Question, response: str) -> Request:
    """The answer-matching request: the question, the correct option's text (no letter: the student saw
    none) and the response; the judge says whether the final answer matches."""
    user = prompts.JUDGE_USER.format(question=question.open_text(), gold=question.correct_text, response=response)
    return Request(prompts.chat(prompts.JUDGE_SYSTEM, user), schema=JudgeVerdict)


def needs_judge(question: Question, completion: Completion, tolerance: float) -> bool:
    graded = read_open_answer(completion, question, tolerance)
    return not isinstance(graded, Outcome) and graded.verdict == "judge"


def judge_says(completion: Completion | None) -> bool | None:
    verdict = parse_reply(completion, JudgeVerdict, "judge")[0]
    return None if verdict is None else verdict.correct


def panel_outcome(judged: Mapping[str, Completion] | None, source: str | None) -> Outcome:
    """The panel's verdict on an open answer; no verdict (every judge failed, or a tie) excludes it."""
    if not judged:
        return Outcome.exclude("judge_failed", "judge not called", source=source)
    says = {name: judge_says(c) for name, c in judged.items()}
    decision, why = majority(list(says.values()))
    if decision is None:
        answered = any(v is not None for v in says.values())
        failed = next((c.error for c in judged.values() if c.error), None)
        return Outcome.exclude("judge_tie" if answered else "judge_failed", why if answered else (failed or why),
                               source=source)
    first = next(parse_reply(c, JudgeVerdict, "judge")[0] for c in judged.values() if judge_says(c) is not None)
    reasoning = first.reasoning if len(judged) == 1 else f"{why}: {first.reasoning}"
    return Outcome("correct" if decision else "incorrect", reason=reasoning, source=source, judged=True)


def grade_format_b(question: Question, completion: Completion, judged: Mapping[str, Completion] | None,
                   tolerance: float) -> Outcome:
    """Format B's outcome: numbers where they decide, the judge where they cannot; a refusal or a hedge is no
    answer (not correct, counted apart), a response cut by the token limit is excluded."""
    graded = read_open_answer(completion, question, tolerance)
    if isinstance(graded, Outcome):
        return graded
    if graded.verdict == "judge":
        return panel_outcome(judged, graded.answer_source)
    return outcome_of(graded)


def format_b_fields(outcome: Outcome) -> dict[str, Any]:
    """Format B's fields of a row, from its outcome."""
    value = outcome.value.short() if isinstance(outcome.value, Number) else None
    return {"judge_verdict": verdict_code(outcome), "correct_without_options": outcome.correct,
            "answer_without": value, "judge_reasoning": outcome.reason, "open_status": response_status(outcome),
            "answer_source": outcome.source}


def grade_question(question: Question, with_options: Completion, without_options: Completion,
                   judged: Mapping[str, Completion] | None, tolerance: float) -> Row:
    """The results row of one question, from its two formats' completions and the judge's (if asked)."""
    letter = grade_letter(with_options, question)
    open_ = format_b_fields(grade_format_b(question, without_options, judged, tolerance))
    return Row(question_id=question.id, correct_answer=question.answer, correct_text=question.correct_text,
               answer_with=letter.value, correct_with_options=letter.correct,
               no_answer_with=letter.status == "no_answer", error_with=letter_error(letter), **open_,
               option_biased=option_biased(letter.correct, open_["correct_without_options"]),
               response_with=with_options.text, response_without=without_options.text,
               thinking_with=with_options.thinking, thinking_without=without_options.thinking,
               open_answerable=classify(question).open_answerable)


def set_aside_uncalibrated(row: Row) -> Row:
    """A verdict of a judge that failed calibration is no finding: the row is excluded, the verdict kept
    in the reasoning for the reader."""
    outcome = row.without_options
    if not outcome.judged or outcome.excluded is not None:
        return row
    aside = Outcome.exclude("judge_uncalibrated", f"{row.judge_verdict} by a judge that failed calibration: "
                                                  f"{row.judge_reasoning}", source=outcome.source)
    return replace(row, **format_b_fields(aside), option_biased=None)


# The experiment ---------------------------------------------------------------------------------------

class Options(Parameters):
    """Option bias's own parameters."""

    calibration_sample: Annotated[int, checked_by(check_count)] = CALIBRATION_QUESTIONS
    variants: Annotated[list[str], checked_by(answer_variants.check_variants)] = []


PAGE = Page(
    blurb="the same questions with and without their choices, the 2×2 table of paired outcomes, McNemar's test "
          "and the option-biased questions side by side.",
    intro="""
# Option bias: do the answer choices help the model?

Every question is asked twice of the same model: **Format A** with its choices (A/B/C) and **Format B**
with the choices removed. A question is *option-biased* when the model is right with the choices and
wrong without them. Option bias = accuracy with options − accuracy without, tested with McNemar's test
on the paired outcomes. Format B answers are graded against the correct option: by number when the
option carries one (±tolerance, and never closer to a distractor than to the gold), otherwise by an
LLM judge. Failed model or judge calls are excluded from the pairs and reported, never counted wrong.
""",
    parameters="""
judge_model = None       # None: gpt-4o-mini for OpenAI models, else the model itself
tolerance = 0.02         # relative tolerance of the numeric grading
variants = []            # any of "options_only", "none_of_the_above", "shuffled", "reason_then_choose"
""",
    imports=("from IPython.display import Markdown, display",
             "from cfa_lib.report.runs import by_model, variants_by_model"),
    run_note=("The cost estimate comes first; completions are cached, so a rerun is free and an "
              "interrupted run resumes where it stopped."),
    sections=(
        md("## Summary"),
        code("notebook_tables.option_bias_summary(run)"),
        md("## The paired outcomes and McNemar's test"),
        code("display(explorer.linked_questions(notebook_tables.option_bias_pairs(run)))\n"
             "Markdown(notebook_tables.describe_mcnemar(run))"),
        code("figures.option_bias_figure(by_model(run))"),
        md("## The option-biased questions\n\nRight with the choices, wrong without them: the extracted open "
           "answer and the end of the response show why."),
        code("notebook_tables.option_biased_questions(run)"),
        md("""
## Where the inflation comes from

Two formats show *that* the options raise the score, not *how*. The variants ask the same questions in
other forms, each paired with Format A on the same questions (McNemar's test, and a paired bootstrap
interval of the difference); they are asked only when the parameter `variants` names them.

* **Options only**: the choices without the question. Accuracy above chance (the dashed line: one over
  the number of options) can only come from the answer set itself, such as an option that sounds like
  the textbook. It cannot say whether the model leans on those cues when it does see the question.
* **None of the above**: the correct option's text is replaced by "None of the above." on the same
  letter, which stays the key. A model that found the answer by recognising the familiar option, or by
  eliminating the others towards a known text, loses here. It cannot tell those two apart, and a model may
  avoid the unusual option for its own sake, so a drop is an upper bound on the options' help.
* **Shuffled**: the same options in another order (every option moves, seeded by the question), the key
  following its text. A drop in accuracy, answers piling on one letter against the keys' letters, or a
  different option chosen after the reorder show position bias and unstable choices; this variant says
  nothing about what the model knows.
* **Reason, then choose**: the open conversation continued: Format B's own answer stays in the
  conversation, then the choices come with "Now choose the option that matches your answer". Near
  Format A, the reasoning already held the answer (or the choices confirm a near miss); near Format B, the
  choices were doing the work. It cannot tell recall from computation, and a choice may still be
  corrected by the options.
"""),
        code("display(notebook_tables.option_bias_variants(run))\nfigures.variants_figure(variants_by_model(run))"),
    ),
)


class OptionBias(Experiment[Options, Row, OptionBiasSummary]):
    name, card_id, title, notebook = "option_bias", "A5", "Option bias", "01_option_bias.ipynb"
    file_names, reference_prefix = frozenset({"option_bias", "A5_option_bias"}), "A5_"
    tables, figures = ("table_p1_option_bias",), ("fig1_option_bias",)
    page = PAGE
    reviewed = (FORMAT_B, "open")
    prompt_groups = (("MCQ_", "Format A: the question with its choices"),
                     ("OPEN_", "Format B: the question without its choices"),
                     ("JUDGE_", "Judge of open answers (option bias)"))
    review_shows = ("the question without its options, the correct option and the whole response",
                    "the question without its options, the correct option and the response as the study stored it "
                    "(cut to a few hundred characters)")
    Options, Row = Options, Row

    def requests(self, questions: Sequence[Question], options: Options) -> dict[Key, Request]:
        return format_requests(questions)

    def estimated_steps(self, run: Context[Options]) -> list[Ask]:
        """Both formats, the variants asked (reason_then_choose without Format B's reply, not known yet), and at
        most every open answer to the judge panel (the key's text standing in) with its calibration."""
        questions, options = run.questions, run.options
        answerable = [q for q in questions if classify(q).open_answerable] or list(questions)
        return [*super().estimated_steps(run),
                *([Ask(answer_variants.variant_requests(questions, options.variants), "Variants",
                       counted_as="variants")] if options.variants else []),
                Ask({q.id: judge_request(q, q.correct_text) for q in questions}, "Judges", panel=True,
                    counted_as="judge"),
                calibration_step(calibration_items(answerable, options.calibration_sample), judge_request)]

    def grade(self, run: Context[Options], answers: Mapping[Key, Completion]) -> Steps[Graded[Row]]:
        """Judge what numbers cannot decide, ask the answer-format variants (if any), calibrate the judge on the
        key and set its verdicts aside if it fails."""
        questions, tolerance, names = run.questions, run.settings.tolerance, run.options.variants
        to_judge = {q.id: judge_request(q, open_.text) for q in questions
                    if (open_ := answers[q.id, "B"]).ok and open_.text.strip() and needs_judge(q, open_, tolerance)}
        judged = yield Ask(to_judge, "Judges", panel=True, counted_as="judge")
        rows = [grade_question(q, answers[q.id, "A"], answers[q.id, "B"], judged.get(q.id), tolerance)
                for q in questions]
        if names:
            variant_answers = yield Ask(answer_variants.variant_requests(
                questions, names, {q.id: answers[q.id, "B"] for q in questions}), "Variants", counted_as="variants")
            answer_variants.attach(rows, questions, names, variant_answers)
        by_id = {q.id: q for q in questions}
        decided = [r.correct_without_options for r in rows
                   if r.without_options.judged and r.without_options.excluded is None]
        judged_questions = [by_id[qid] for qid in to_judge]
        calibration = (yield from run_calibration(
            run.settings.judges, [q for q in judged_questions if classify(q).open_answerable] or judged_questions,
            judge_request, judge_says, decided, sample=run.options.calibration_sample)) if to_judge else None
        if calibration is not None and not calibration.passed:
            rows = [set_aside_uncalibrated(row) for row in rows]
        facts: dict[str, Any] = {"judge_calibration": calibration}
        if names:
            facts["variants"] = answer_variants.summarize_variants(rows, names)
        return Graded(rows, facts)

    def summarize(self, rows: Sequence[Row], metadata: Mapping[str, Any]) -> OptionBiasSummary:
        return summarize([row.pair for row in rows])

    def samples(self, rows: Sequence[Row]) -> Iterator[Sample]:
        for row in rows:
            yield Sample(row.question_id, FORMAT_A, row.answerable, row.with_options, response=row.response_with)
            yield Sample(row.question_id, FORMAT_B, row.answerable, row.without_options,
                         response=row.response_without if row.response_without is not None else row.answer_without,
                         response_whole=row.response_without is not None)

    def regrade(self, rows: Sequence[Row]) -> tuple[list[Row], dict[str, int]]:
        """This toolkit's rules on rows whose verdicts another grader wrote (the original study's files).

        Only what the stored (cut-short) text still shows is re-read: a refusal ("Please paste the options")
        is not a correct answer; an empty open answer and a missing letter are not answers at all and are
        excluded (the study's budget ran out), never counted as right or wrong. Our own rows are already
        graded by these rules and pass through unchanged.
        """
        changes: Counter[str] = Counter()
        out = []
        for row in rows:
            if row.open_status is not None:  # graded by this toolkit
                out.append(row)
                continue
            update: dict[str, Any] = {}
            text = row.answer_without or ""
            if row.answer_with is None and row.correct_with_options is False:
                update.update(correct_with_options=None,
                              error_with=f"{FILE_CODES['not_recorded']}: no letter in the file")
                changes["no letter recorded with options: excluded, not wrong"] += 1
            if not text.strip() and row.correct_without_options is not None:
                update.update(correct_without_options=None, judge_verdict=FILE_CODES["empty_response"])
                changes["empty open answer: excluded, not judged"] += 1
            elif has_refusal(text) and row.correct_without_options is not None and \
                    row.judge_verdict not in (NO_ANSWER, "NUMERICAL_MATCH"):
                if row.correct_without_options:
                    changes["refusal judged correct: not correct"] += 1
                update.update(correct_without_options=False, judge_verdict=NO_ANSWER)
            if update:
                row = replace(row, **update)
                row = replace(row, option_biased=option_biased(row.correct_with_options, row.correct_without_options))
            out.append(row)
        return out, dict(changes)

    def audit(self, rows: Sequence[Row], records: Mapping[str, AuditRecord]) -> tuple[list[Row], dict[str, int]]:
        """Format A's letter against the corrected key; Format B, judged or matched against the old key, excluded
        (`key_corrected`); both formats of a question the audit sets aside excluded (`key_set_aside`)."""
        changes: Counter[str] = Counter()
        out = []
        for row in rows:
            record = records.get(row.question_id)
            if record is None or record.key == row.correct_answer:
                out.append(row)
                continue
            if record.key is None:
                code = FILE_CODES["key_set_aside"]
                why = f"{code}: the key audit finds {VERDICTS[record.verdict]}"
                row = replace(row, correct_with_options=None, error_with=why, correct_without_options=None,
                              judge_verdict=code, judge_reasoning=why)
                changes[f"set aside by the key audit ({record.verdict})"] += 1
            else:
                counted = row.correct_with_options is not None and not row.no_answer_with
                with_options = row.answer_with == record.key if counted else row.correct_with_options
                row = replace(row, correct_answer=record.key, correct_with_options=with_options)
                if row.correct_without_options is not None and row.judge_verdict != NO_ANSWER:
                    code = FILE_CODES["key_corrected"]
                    row = replace(row, correct_without_options=None, judge_verdict=code,
                                  judge_reasoning=f"{code}: graded against {record.original}, which the key audit "
                                                  f"corrects to {record.key}")
                changes["key corrected by the audit: Format A re-graded, Format B set aside"] += 1
            out.append(replace(row, option_biased=option_biased(row.correct_with_options, row.correct_without_options)))
        return out, dict(changes)


OPTION_BIAS = OptionBias()
