"""Counterfactual testing (experiment I1): is a correct answer reasoning or memory?

The numbers of a question are changed and its new answer is computed by `cfa_lib.perturbation` from a
verified formula, never taken from a model. The subject answers the original and every valid
perturbation in the multiple-choice format of the option-bias experiment (same prompt, same
extraction), and the metrics compare the two on the same questions.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from cfa_lib import perturbation, prompts
from cfa_lib.answerability import is_open_answerable
from cfa_lib.data import Question
from cfa_lib.experiments.contract import ORIGINAL, PERTURBED, Context, Experiment, Graded, Key, Sample
from cfa_lib.experiments.counterfactual_summary import CounterfactualSummary, PerturbationLevel, summarize
from cfa_lib.experiments.outcome import Outcome, grade_letter
from cfa_lib.experiments.page import Page, code, md
from cfa_lib.experiments.study_files import FILE_CODES, letter_error, letter_from_file
from cfa_lib.key_audit import VERDICTS, AuditRecord
from cfa_lib.models import Ask, Completion, ModelSpec, Request, Steps, run_steps
from cfa_lib.params import Parameters, check_integer, check_levels, check_optional_model, checked_by
from cfa_lib.perturbation import PerturbationRecord
from cfa_lib.perturbation.types import STATUSES
from cfa_lib.results import ResultRow


@dataclass
class Row(ResultRow):
    """One question of a counterfactual run: the original answer and its perturbations (each a dict with
    the record of how it was built and checked, and the subject's answer when it was valid), read through
    `perturbed` (typed)."""

    original: dict[str, Any]
    perturbations: list[dict[str, Any]]
    question_id: str | None = None
    correct_answer: str | None = None

    @property
    def original_outcome(self) -> Outcome:
        return letter_from_file(self.original.get("answer"), self.original.get("correct"), self.original.get("error"))

    @property
    def original_letter(self) -> str | None:
        return self.original.get("answer")

    @property
    def perturbed(self) -> list[Perturbed]:
        return [Perturbed.of(entry) for entry in self.perturbations]

    def to_dict(self) -> dict[str, Any]:
        row = super().to_dict()
        return {"question_id": row.pop("question_id"), "correct_answer": row.pop("correct_answer"), **row}


def answer_fields(outcome: Outcome, completion: Completion, letter: str = "answer") -> dict[str, Any]:
    """A multiple-choice answer as the study's files record it: the letter (under `answer` for an original,
    `model_answer` for a perturbation), whether it is correct (None: excluded), the reply and the error."""
    return {letter: outcome.value, "correct": outcome.correct, "response": completion.text,
            "error": letter_error(outcome)}


def row_of(question: Question, records: Sequence[PerturbationRecord], answers: Mapping[str, Completion]) -> Row:
    """A question's row: its original answer and every perturbation attempt, answered when valid."""
    perturbations = []
    for record in records:
        entry: dict[str, Any] = {"valid": record.valid, **record.to_dict()}
        if record.valid:
            perturbed = record.as_question()
            reply = answers[perturbed.id]
            entry.update(answer_fields(grade_letter(reply, perturbed), reply, letter="model_answer"))
        perturbations.append(entry)
    original = answers[question.id]
    return Row(question_id=question.id, correct_answer=question.answer,
               original=answer_fields(grade_letter(original, question), original), perturbations=perturbations)


@dataclass(frozen=True)
class Perturbed:
    """One perturbation attempt as a file records it (ours, or the study's own keys), typed for the report."""

    level: int
    valid: bool
    status: str | None  # valid, not_perturbable, not_verifiable, rejected (None: the study's files)
    reason: str
    question: str | None  # the new stem (the study stored none)
    choices: dict[str, str]
    key: str  # the letter claimed correct
    changes: list[str] | None  # the study's list of changes made (None: ours)
    outcome: Outcome | None  # the subject's answer (None: not valid, never asked)
    answer: str | None
    response: str | None
    seed: int | None
    source: str  # template or generator

    @classmethod
    def of(cls, entry: Mapping[str, Any]) -> Perturbed:
        valid = bool(entry.get("valid"))
        outcome = letter_from_file(entry.get("model_answer"), entry.get("correct"), entry.get("error")) if valid \
            else None
        return cls(int(entry.get("level", 1)), valid, entry.get("status"), str(entry.get("reason") or ""),
                   entry.get("question"), dict(entry.get("choices") or {}),
                   entry.get("correct_letter") or entry.get("perturbed_answer") or "",
                   entry.get("changes_made") if "changes_made" in entry else None, outcome,
                   entry.get("model_answer"), entry.get("response"), entry.get("seed"),
                   entry.get("source") or "generator")

    @property
    def text(self) -> str | None:
        """The item as a reviewer sees it: its stem and options, or the changes the file lists (the study
        stored no new question); None when the file keeps neither."""
        if self.question:
            choices = "\n".join(f"{k}: {v}" for k, v in self.choices.items())
            return f"{self.question}\n\n{choices}".strip()
        if self.changes is not None:
            listed = "\n".join(f"- {c}" for c in self.changes) if self.changes else "(no change listed)"
            return f"The file stores no text of the new question, only the changes made to the original:\n{listed}"
        return None


def coverage(rows: Sequence[Row]) -> dict[str, dict[str, int]]:
    """Status counts per level (every status, zeros included), from the rows; the study recorded only whether
    an item was valid, so its invalid ones are counted by their reason."""
    counts: dict[str, dict[str, int]] = {}
    for row in rows:
        for p in row.perturbed:
            level = counts.setdefault(str(p.level), dict.fromkeys(STATUSES, 0) if p.status else {})
            status = "valid" if p.valid else p.status or p.reason or "invalid"
            level[status] = level.get(status, 0) + 1
    return dict(sorted(counts.items()))


# Perturbations ----------------------------------------------------------------------------------------

def default_generator(model: ModelSpec) -> str:
    """gpt-4o writes perturbations for OpenAI runs (as in the card); any other model writes its own; a model the
    models file lists with a `judge` has that one write them."""
    if (entry := model.listing) is not None and entry.judge:
        return entry.judge
    return "gpt-4o" if model.backend == "openai" else model.name


def perturbations(run: Context[Options], generator_name: str) -> Steps[list[PerturbationRecord]]:
    """Verified templates first (offline, no model call); the generator describes only what has none.

    A question the census left out (no number, numbers that decide nothing, or computational without a
    faithful template) is `not_perturbable` with its reviewed reason, without asking. So a run on CFA-Easy
    or CFA-Challenge, whose every question is in the census, never loads a generator.
    """
    questions, options, dataset = run.questions, run.options, run.settings.dataset
    templates = perturbation.load_templates(dataset)
    reviewed = perturbation.left_out(dataset)
    records = perturbation.template_perturbations([q for q in questions if q.id in templates or q.id in reviewed],
                                                  templates, options.perturbation_levels, options.seed, reviewed)
    rest = [q for q in questions if q.id not in templates and q.id not in reviewed]
    if rest:
        records += yield from perturbation.perturbation_steps(rest, generator_name, options.perturbation_levels,
                                                             options.seed)
    position = {q.id: i for i, q in enumerate(questions)}
    return sorted(records, key=lambda r: (position[r.question_id], r.level))


# Re-grading the study's files -------------------------------------------------------------------------

_NOTHING_CHANGED = re.compile(
    r"(?i)\b(?:no|nothing)\b[^.]*\b(?:changes?|changed|modified|altered)\b|\bnot\s+(?:changed|modified|altered)\b"
    r"|\bunchanged\b")


def unchanged_reason(p: Mapping[str, Any]) -> str | None:
    """Why a perturbation marked valid tested nothing: no recorded change, a change list saying nothing
    changed, or a perturbed question identical to the original."""
    if "changes_made" in p:
        changes = [str(c) for c in p.get("changes_made") or []]
        if not changes:
            return "no recorded change"
        if all(_NOTHING_CHANGED.search(c) and not re.search(r"(?i)\bbut\b", c) for c in changes):
            return "the change list says nothing changed"
    if "changed" in p and not p.get("changed"):
        return "no recorded change"
    return None


@dataclass(frozen=True)
class StudyReach:
    """What the original study's level-1 perturbations called valid really tested (`study_reach`)."""

    called_valid: int
    changed_nothing: int
    by_class: dict[str | None, int]  # census class of the question of each one that changed something
    on_computation: PerturbationLevel  # re-graded, on the computational questions only


def study_reach(rows: Sequence[Row], regraded: Sequence[Row], classes: Mapping[str, str]) -> StudyReach:
    """How many of a file's level-1 perturbations called valid changed nothing, on what kind of question
    (the census `classes`) the rest fell, and the re-graded gap on the computational ones."""
    valid = [(row.question_id, p) for row in rows for p in row.perturbations
             if p.get("valid") and str(p.get("level", 1)) == "1"]
    kept = [classes.get(str(question_id)) for question_id, p in valid if not unchanged_reason(p)]
    computational = {perturbation.TEMPLATED, perturbation.WITHOUT_TEMPLATE}
    on_computation = summarize([row for row in regraded if classes.get(row.question_id) in computational], [1])
    return StudyReach(len(valid), len(valid) - len(kept), dict(Counter(kept)),
                      on_computation.perturbation_levels["1"])


# The experiment ---------------------------------------------------------------------------------------

class Options(Parameters):
    """Counterfactual testing's own parameters."""

    generator_model: Annotated[str | None, checked_by(check_optional_model)] = None  # None: `default_generator`
    perturbation_levels: Annotated[list[int], checked_by(check_levels)] = [1]
    seed: Annotated[int, checked_by(check_integer)] = 0  # of the new values drawn


PAGE = Page(
    blurb="verified perturbations and the memorization gap.",
    intro="""
# Counterfactual testing: reasoning or memory?

The numbers of a question are changed (level 1: one, level 2: two) or it asks for a different unknown
(level 3), and the model is asked again. The computational questions of CFA-Easy and CFA-Challenge that
the formula language can express faithfully have a template written question by question
(`datasets/templates/`; the coverage table below counts them and says why the other questions have none):
its inputs as written in the stem and the textbook formula over them, verified by code against the key.
`cfa_lib` draws new values that look like the originals, computes the new answer itself, rewrites the stem
and rebuilds the choices, all offline. For a decision question (the key is "daily", "greater than the lump
sum") a draw may change the correct option: whether the model follows the new key or keeps the old one is
the sharpest memorization test. Every other question of the two datasets is left out with its reviewed
reason (the census below); only a question of another dataset goes to a generator model that proposes a
formula, under the same checks. Nothing a model says about the new answer is trusted.
""",
    parameters="""
generator_model = None   # None: gpt-4o for OpenAI models (as in the study), else the model itself
perturbation_levels = [1, 2, 3]  # any of 1, 2, 3
""",
    imports=("from IPython.display import display",),
    sections=(
        md("""
## Coverage: which questions could be perturbed and verified

The first table places the whole dataset: questions with no number, questions whose numbers decide
nothing (each reviewed, with its reason in `datasets/templates/`), and the computational ones, with a
verified template or the reason none could be written faithfully. The last rows count this run's valid
perturbations. The next two tables give this run's status per level and why items were not valid.
"""),
        code("display(notebook_tables.template_coverage(dataset, run))\n"
             "display(notebook_tables.counterfactual_coverage(run))\nnotebook_tables.counterfactual_reasons(run)"),
        md("""
## Are the generated items right? A blind review

Code verifies each template against the original key and re-derives every emitted item from its own
text, but a referee will ask whether a person agrees. Generated items (both datasets, levels 1-3; rounds 0-4
at seeds 0-9, round 5 at seeds 10-14) were given, without their keys, to reviewers who had seen neither the
code nor the keys (assistants acting as careful CFA graders, not human charterholders). Each reviewer
worked the answer and called the item valid (one option right) or defective (contradictory, impossible,
or no single right option); an answer other than the generator's key counts as defective. Every defect
was fixed as a class (a rule in the templates' validity domains or in the re-derivation) and the review
was redone on fresh draws. From round 5 the reviewers also said whether the item could be answered from
memory of the original question and whether its options point at the key. Round 6 (seeds 15-19) counted a
kept key letter as memory: 62 of its 160 items kept the original's letter, so since then a numeric key
moves to another letter, the option nearest the remembered answer is never the key, and no key sits in the
middle of evenly spaced options. Rounds 7 to 9 (seeds 20-34) reviewed those items: most items answerable
from memory are decisions that kept their key, as half the decision draws do by design (round 9: 8 of its
12). The defects of rounds 7 and 8 were fixed as classes: challenge_88 at level 3 (a 530 call that broke
put-call parity) and easy_360 (a cost of equity below the cost of the firm's debt) by domain conditions;
easy_9 (a rebuilt '15.7% compounded daily' was right for its own convention beside the key) has no template
since. Round 9 found one: challenge_87 at level 3 asked for a 510 call below the 510 put with the stock above
the strike (put-call parity broken); its domain now keeps C - P above S - K, and a level-3 item checks the
domain at the unknown its stated answer implies, not only at the drawn one. Round 10 (seeds 35-39, after
that fix) found no defect; 7 of its 8 items answerable from memory are decisions that kept their key (4
from templates whose decision cannot flip: challenge_30, easy_280), the eighth easy_193, whose two-part
options left the key the only option sharing an amount with both others (one distractor now makes both
mistakes). Interval: 95% Wilson. The rows are in `datasets/templates/review.jsonl`.
"""),
        code("notebook_tables.template_review()"),
        md("## Where the perturbations came from, and the flipped keys"),
        code("notebook_tables.counterfactual_flips(run)"),
        md("## Accuracy on the originals and on their perturbations\n\nBoth on the same questions; the "
           "memorization gap is their difference, tested with McNemar's test on the pairs."),
        code("notebook_tables.counterfactual_accuracy(run)"),
        code("figures.counterfactual_figure(by_model(run))"),
        md("## Memorization suspects\n\nRight on the original, wrong once its numbers changed."),
        code("notebook_tables.counterfactual_suspects(run)"),
    ),
)


class Counterfactual(Experiment[Options, Row, CounterfactualSummary]):
    name, card_id, title, notebook = "counterfactual", "I1", "Counterfactual testing", "03_counterfactual.ipynb"
    file_names, reference_prefix = frozenset({"counterfactual", "I1_counterfactual"}), "I1_"
    tables, figures = ("table_counterfactual",), ("fig3_counterfactual",)
    judged = False  # the key, computed by code, decides every answer
    page = PAGE
    reviewed = (PERTURBED, "item")
    review_shows = ("the original question with its key, and the generated item with its claimed key",
                    "the original question with its key, the list of changes the generator made and the letter it "
                    "claimed (the study stored neither the new question nor its options)")
    Options, Row = Options, Row

    def requests(self, questions: Sequence[Question], options: Options) -> dict[Key, Request]:
        """The originals, in the multiple-choice format (the perturbations follow once they are built)."""
        return {q.id: Request(prompts.mcq_messages(q)) for q in questions}

    def estimated_steps(self, run: Context[Options]) -> list[Ask]:
        """The originals, the items the templates give (built offline, as the run builds them) and, for questions
        without one, the generator's formula step and at most one rewrite and one answer per question and level
        (the original's text standing in)."""
        generator = run.options.generator_model or default_generator(run.settings.spec)
        declared: list[Ask] = []

        def not_sent(ask: Ask) -> dict[Key, Completion]:
            declared.append(ask)
            return {key: Completion("", generator, error="not sent: the estimate", error_kind="failed")
                    for key in ask.requests}

        records = run_steps(perturbations(run, generator), not_sent)
        formulas = declared[0].requests if declared else {}
        by_id = {q.id: q for q in run.questions}
        written = [(qid, level) for qid in formulas for level in run.options.perturbation_levels]
        items = [record.as_question() for record in records if record.valid]
        return [*super().estimated_steps(run),
                *([declared[0], Ask({key: formulas[key[0]] for key in written}, "Perturbation rewrites", generator,
                                    counted_as="generator")] if formulas else []),
                Ask({**{q.id: Request(prompts.mcq_messages(q)) for q in items},
                     **{key: Request(prompts.mcq_messages(by_id[key[0]])) for key in written}}, "Perturbations")]

    def grade(self, run: Context[Options], answers: Mapping[Key, Completion]) -> Steps[Graded[Row]]:
        """Build and verify the perturbations, ask the valid ones, and pair them with the originals."""
        options = run.options
        generator_name = options.generator_model or default_generator(run.settings.spec)
        records = yield from perturbations(run, generator_name)
        perturbed = [record.as_question() for record in records if record.valid]
        answers = {**answers, **(yield Ask({q.id: Request(prompts.mcq_messages(q)) for q in perturbed},
                                           "Perturbations"))}
        rows = [row_of(q, [r for r in records if r.question_id == q.id], answers) for q in run.questions]
        coverage = {str(k): v for k, v in perturbation.coverage_counts(records).items()}
        return Graded(rows, {"coverage": coverage}, {"generator_model": generator_name,
                                                     "perturbation_levels": options.perturbation_levels,
                                                     "perturbation_seed": options.seed})

    def summarize(self, rows: Sequence[Row], metadata: Mapping[str, Any]) -> CounterfactualSummary:
        return summarize(rows, metadata.get("perturbation_levels"))

    def samples(self, rows: Sequence[Row]) -> Iterator[Sample]:
        """The original, then each perturbation; an invalid perturbation was never asked (no outcome)."""
        for row in rows:
            qid = row.question_id or ""
            answerable = bool(is_open_answerable(qid))
            yield Sample(qid, ORIGINAL, answerable, row.original_outcome, response=row.original.get("response"))
            for index, p in enumerate(row.perturbed):
                claimed = p.choices.get(p.key)
                yield Sample(qid, PERTURBED, answerable, p.outcome, perturbation_level=p.level, perturbation=index,
                             valid=p.valid, perturbation_source=p.source, seed=p.seed, response=p.response,
                             item=p.text, item_key=f"{p.key}: {claimed}" if claimed else p.key,
                             item_whole=bool(p.question))

    def regrade(self, rows: Sequence[Row]) -> tuple[list[Row], dict[str, int]]:
        """This toolkit's validity rule on any file: a perturbation that changed nothing is not valid."""
        changes: Counter[str] = Counter()
        out = []
        for row in rows:
            checked = []
            for p in row.perturbations:
                why = unchanged_reason(p) if p.get("valid") else None
                if why:
                    changes[why] += 1
                    p = {**p, "valid": False, "status": "rejected", "reason": f"re-graded: {why}"}
                checked.append(p)
            out.append(Row(original=row.original, perturbations=checked, question_id=row.question_id,
                           correct_answer=row.correct_answer, extra=row.extra))
        return out, dict(changes)

    def audit(self, rows: Sequence[Row], records: Mapping[str, AuditRecord]) -> tuple[list[Row], dict[str, int]]:
        """The original question's letter against a corrected key, or excluded (`key_set_aside`) where the audit
        finds no single right option; the perturbations carry keys of their own, re-derived, and stay."""
        changes: Counter[str] = Counter()
        out = []
        for row in rows:
            record = records.get(row.question_id or "")
            if record is None or record.key == row.correct_answer:
                out.append(row)
                continue
            original = dict(row.original)
            if record.key is None:
                original.update(correct=None, error=f"{FILE_CODES['key_set_aside']}: the key audit finds "
                                                    f"{VERDICTS[record.verdict]}")
                changes[f"original set aside by the key audit ({record.verdict})"] += 1
            else:
                if original.get("correct") is not None:
                    original["correct"] = original.get("answer") == record.key
                changes["original re-graded against the key the audit corrects"] += 1
            out.append(Row(original=original, perturbations=row.perturbations, question_id=row.question_id,
                           correct_answer=record.key or row.correct_answer, extra=row.extra))
        return out, dict(changes)


COUNTERFACTUAL = Counterfactual()
