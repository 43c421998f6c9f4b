"""The experiment contract: what every experiment gives the runner, the loader and the report.

After openai/simple-evals (an eval is an object the runner calls) and inspect_ai (a task is a dataset, a
solver and a scorer): an experiment is a subclass of `Experiment` that says

* its options, one `Parameters` model checked once (`Options`), and its results row (`Row`);
* `requests`: what the subject is asked for a list of questions, keyed by (question id, role);
* `estimated_steps`: every step a run may take, at its most, which the cost estimate counts before any call;
* `grade`: the subject's answers graded into rows, with the run's facts the rows cannot give back (a judge's
  calibration); the further model calls it needs (judges, their calibration, gold answers, follow-up turns,
  perturbations) are declared steps it yields (`cfa_lib.models.steps.Ask`), which the engine sends, so grading is
  a function of replies;
* `summarize`: rows into the experiment's typed summary (a frozen `Summary`);
* `regrade`: this toolkit's rules on rows another grader wrote (the original study's files);
* `audit`: rows graded against the dataset's keys, under the key audit's (a corrected key, a question set aside);
* `samples`: rows as `Sample`s, one per question and condition, which `report.items_frame` (and everything
  built on it) reads without knowing the experiment.

`execute.execute` owns everything else (estimate, usage, metadata, writing), `loading.load_run` the
reading back, and the registry (`registry.EXPERIMENTS`) holds one object per experiment.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Self, TypeVar

from cfa_lib.data import Question
from cfa_lib.experiments.judging import JudgeAgreement, JudgeCalibration
from cfa_lib.experiments.outcome import Outcome
from cfa_lib.experiments.page import Page
from cfa_lib.models import Ask, Completion, Request, Steps
from cfa_lib.params import Parameters
from cfa_lib.prompts import PROMPT_VERSION, all_prompts, version_of
from cfa_lib.results import ResultRow

if TYPE_CHECKING:
    from cfa_lib.experiments.settings import Settings
    from cfa_lib.key_audit import AuditRecord

Key = Hashable


def tally(values: Sequence[Any]) -> dict[str, int]:
    """How often each value occurs, by its text: the count tables of a summary."""
    return dict(Counter(str(v) for v in values))


def plain(value: Any) -> Any:
    """A summary's value as JSON writes it: typed parts by their own `to_dict`."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple) and any(hasattr(v, "to_dict") for v in value):
        return [plain(v) for v in value]
    return value


@dataclass(frozen=True)
class Summary:
    """Base of every experiment's summary: statistics recomputed from rows (the fields, written in order by
    `to_dict`), then the run's facts that rows cannot give back (the judge's calibration and agreement, who
    judged, usage), written after them as they were given."""

    facts: Mapping[str, Any] = field(default_factory=dict, kw_only=True, repr=False)

    def to_dict(self) -> dict[str, Any]:
        statistics = {f.name: plain(getattr(self, f.name)) for f in fields(self) if f.name != "facts"}
        return {**statistics, **{name: plain(value) for name, value in self.facts.items()}}

    def with_facts(self, **facts: Any) -> Self:
        return replace(self, facts={**self.facts, **facts})

    @property
    def self_judged(self) -> bool | None:
        return self.facts.get("self_judged")

    @property
    def judge_calibration(self) -> JudgeCalibration | None:
        return self.facts.get("judge_calibration")

    @property
    def judge_agreement(self) -> JudgeAgreement | None:
        return self.facts.get("judge_agreement")


OptionsT = TypeVar("OptionsT", bound=Parameters)
RowT = TypeVar("RowT", bound=ResultRow)
SummaryT = TypeVar("SummaryT", bound=Summary)


@dataclass(frozen=True)
class Context(Generic[OptionsT]):
    """What grading knows of its run: the settings, the experiment's options and the questions asked (no client:
    grading asks for model calls by yielding steps)."""

    settings: Settings
    options: OptionsT
    questions: Sequence[Question]


@dataclass(frozen=True)
class Graded(Generic[RowT]):
    """What `grade` hands back: the rows, the run's facts for the summary, and extra metadata."""

    rows: list[RowT]
    facts: dict[str, Any] = field(default_factory=dict)  # written into the summary after the statistics
    metadata: dict[str, Any] = field(default_factory=dict)  # written into the metadata (gold model, levels)


# The condition of a sample: the format asked, or the question as written against a perturbation.
FORMAT_A, FORMAT_B, OPEN, ORIGINAL, PERTURBED = "A", "B", "open", "original", "perturbed"


@dataclass(frozen=True)
class Sample:
    """One graded item of a run: a question under one condition (Format A or B, the open answer, the original or
    one perturbation), its `Outcome` (None: an invalid perturbation, never asked), what places it, and what a
    reviewer reads of it (the response received, or the generated item and its claimed key)."""

    question_id: str
    condition: str
    answerable: bool  # the question can be answered without its options (`cfa_lib.answerability`)
    outcome: Outcome | None
    tier: str | None = None  # three-tier grading: exact, directional, incorrect
    perturbation_level: int | None = None
    perturbation: int | None = None  # the perturbation's position in its row
    valid: bool | None = None
    perturbation_source: str | None = None  # "template" or "generator"
    seed: int | None = None  # the perturbation's seed
    response: str | None = None  # the reply received, as the file stores it
    response_whole: bool = True  # False: the row stores the reply cut short (the study's files)
    item: str | None = None  # a generated item as a reviewer sees it (its stem and options, or its changes)
    item_key: str | None = None  # the generated item's claimed key: "B: 5.2%"
    item_whole: bool = True  # False: the file lists the item's changes, not its text (the study's files)


class Experiment(ABC, Generic[OptionsT, RowT, SummaryT]):
    """One experiment of the study (see the module docstring); the class attributes are its registry entry."""

    name: ClassVar[str]  # folder under results/, `metadata.experiment` in our files
    card_id: ClassVar[str] = ""  # the original study's experiment card (A5, A1, I1), if it had one
    title: ClassVar[str]
    notebook: ClassVar[str]  # under notebooks/; executed into book/executed/
    file_names: ClassVar[frozenset[str]]  # accepted `metadata.experiment` values (ours and the study's)
    reference_prefix: ClassVar[str | None] = None  # the study's result files in datasets/reference_runs/
    tables: ClassVar[tuple[str, ...]] = ()  # paper tables drawn from this experiment's runs (cfa_lib.report)
    figures: ClassVar[tuple[str, ...]] = ()  # paper figures drawn from this experiment's runs
    judged: ClassVar[bool] = True  # a judge grades what numbers cannot: the metadata names it
    # The blind review (cfa_lib.review): which samples a person checks, as which kind of item ("open": a
    # verdict of an open answer, "tier": a three-tier level, "item": a generated item's validity), and what
    # the reviewer sees, in this toolkit's files (whole responses) and in the study's.
    reviewed: ClassVar[tuple[str, str] | None] = None  # (condition, kind)
    review_shows: ClassVar[tuple[str, str]] = ("", "")
    page: ClassVar[Page | None] = None  # its notebook's own text (None: the title and the summary's table)
    # The book's prompts page: the groups of cfa_lib.prompts this experiment sends (constant-name prefix,
    # title), and the prompts the experiment's module defines itself (name -> text).
    prompt_groups: ClassVar[tuple[tuple[str, str], ...]] = ()
    own_prompts: ClassVar[Mapping[str, str]] = {}
    Options: type[OptionsT]
    Row: type[RowT]

    @property
    def prompt_version(self) -> str:
        """The hash of every prompt a run of this experiment may send (`prompts.PROMPT_VERSION` for one that
        defines none of its own), written into each results file."""
        return version_of({**all_prompts(), **self.own_prompts}) if self.own_prompts else PROMPT_VERSION

    def helper_models(self, settings: Settings, options: OptionsT) -> dict[str, str]:
        """The models the run calls besides the subject, by role, checked before the first question."""
        return {name: name for name in settings.judges} if self.judged else {}

    @abstractmethod
    def requests(self, questions: Sequence[Question], options: OptionsT) -> dict[Key, Request]:
        """What the subject is asked first, keyed; the cost estimate counts these."""

    def estimated_steps(self, run: Context[OptionsT]) -> list[Ask]:
        """The steps a run may declare, for the cost estimate before any call: the subject's first batch, then each
        later step at its most (a judge for every answer, with the key's text standing in for answers not known
        yet). The default: the first batch alone."""
        return [Ask(self.requests(run.questions, run.options), self.title)]

    @abstractmethod
    def grade(self, run: Context[OptionsT], answers: Mapping[Key, Completion]) -> Steps[Graded[RowT]]:
        """The subject's answers to `requests` graded into rows, in question order: a generator that yields the
        further model calls it needs as `Ask`s and receives their replies (`cfa_lib.models.steps`)."""

    @abstractmethod
    def summarize(self, rows: Sequence[RowT], metadata: Mapping[str, Any]) -> SummaryT:
        """The summary recomputed from rows (ours or the study's); `metadata` is the file's."""

    def regrade(self, rows: Sequence[RowT]) -> tuple[list[RowT], dict[str, int]]:
        """This toolkit's rules on rows another grader wrote, and how many rows each rule changed; the rows
        given are never changed."""
        return list(rows), {}

    def audit(self, rows: Sequence[RowT], records: Mapping[str, AuditRecord]) -> tuple[list[RowT], dict[str, int]]:
        """Rows graded against the dataset's keys, under the key audit's (`cfa_lib.key_audit`): a letter is
        re-graded against a corrected key, what a file cannot re-grade (a judge's verdict on the old key) and every
        item of a question the audit sets aside is excluded; how many rows each change touched. The default: none
        of this experiment's verdicts depends on the dataset's key."""
        return list(rows), {}

    @abstractmethod
    def samples(self, rows: Sequence[RowT]) -> Iterator[Sample]:
        """Every graded item of the rows, one `Sample` per question and condition."""
