"""What every experiment shares: its settings, the clients, metadata and token accounting."""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cfa_lib import __version__, params
from cfa_lib.answers import grade_choice
from cfa_lib.data import Question, load_dataset
from cfa_lib.experiments.judging import default_judges
from cfa_lib.models import DEFAULT_MAX_CONCURRENCY, Completion, get_client
from cfa_lib.prompts import PROMPT_VERSION
from cfa_lib.results import PROJECT_ROOT, ResultRow, load_results


@dataclass(frozen=True)
class Settings:
    """The parameters shared by the notebooks, checked before any call is made."""

    model: str = "local"
    dataset: str = "easy"
    limit: int | None = 20
    sample_seed: int | None = None
    judge_model: str | list[str] | None = None  # a panel when a list: majority of the judges
    tolerance: float = 0.02
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY  # a ceiling: the engine finds the provider's limit
    batch: bool = False  # OpenAI's Batch API at half price (other backends say so and run live)
    max_cost_usd: float | None = None  # stop cleanly before spending more (CFA_MAX_COST_USD)
    retry_failed: bool = False  # send again the failures a deterministic model gave and the cache kept

    def __post_init__(self) -> None:
        params.check_model(self.model)
        params.check_dataset(self.dataset)
        params.check_limit(self.limit)
        params.check_seed(self.sample_seed)
        params.check_judges(self.judge_model)
        params.check_tolerance(self.tolerance)
        params.check_concurrency(self.max_concurrency)
        params.check_cost_cap(self.max_cost_usd)
        params.check_flag("batch", self.batch)
        params.check_flag("retry_failed", self.retry_failed)

    def engine(self) -> dict[str, Any]:
        """The engine options every batch of this run is sent with."""
        return {"max_concurrency": self.max_concurrency, "batch": self.batch, "max_cost_usd": self.max_cost_usd,
                "retry_failed": self.retry_failed or None}  # None: CFA_RETRY_FAILED decides

    @property
    def judges(self) -> list[str]:
        """The judge panel: never the subject, unless no other model is available (offline)."""
        return params.check_judges(self.judge_model) or default_judges(self.model)

    @property
    def self_judged(self) -> bool:
        return self.model in self.judges

    def questions(self) -> list[Question]:
        return load_dataset(self.dataset, limit=self.limit, sample_seed=self.sample_seed)


def ready_client(name: str):
    """A client whose pre-flight check passed: a missing key or server fails before the first question."""
    client = get_client(name)
    client.check()
    return client


def metadata(experiment: str, settings: Settings, n_questions: int, **extra: Any) -> dict[str, Any]:
    return {
        "experiment": experiment,
        "dataset": settings.dataset,
        "n_questions": n_questions,
        "model": settings.model,
        "judge_model": settings.judges[0] if len(settings.judges) == 1 else settings.judges,
        "self_judged": settings.self_judged,
        "limit": settings.limit,
        "sample_seed": settings.sample_seed,
        "tolerance": settings.tolerance,
        "max_concurrency": settings.max_concurrency,
        "batch": settings.batch,
        "max_cost_usd": settings.max_cost_usd,
        "prompt_version": PROMPT_VERSION,
        "package_version": __version__,
        "timestamp": datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ"),
        **extra,
    }


def engine_stats(**clients: Any) -> dict[str, Any]:
    """The engine's record of each role's client (concurrency history, 429s, batches, spend); a client that
    serves two roles (the subject judging itself) is listed under its first role only."""
    seen: set[int] = set()
    stats = {}
    for role, client in clients.items():
        if client is not None and id(client) not in seen:
            seen.add(id(client))
            stats[role] = client.engine_stats()
    return stats


def usage(completions: Sequence[Completion | None]) -> dict[str, Any]:
    """Token totals, cost (None when any priced call is unknown) and cache hits of a set of calls."""
    done = [c for c in completions if c is not None]
    costs = [c.cost_usd for c in done if not c.cached]
    return {
        "n_calls": len(done),
        "cache_hits": sum(c.cached for c in done),
        "failed": sum(not c.ok for c in done),
        "prompt_tokens": sum(c.prompt_tokens or 0 for c in done),
        "completion_tokens": sum(c.completion_tokens or 0 for c in done),
        "cost_usd": None if any(cost is None for cost in costs) else round(sum(costs), 6),
    }


TRUNCATED = "TRUNCATED"  # cut by the token limit: excluded and reported, never counted wrong


@dataclass(frozen=True)
class LetterOutcome:
    """A multiple-choice completion read against its key: the letter, whether it is right, or why not."""

    letter: str | None
    correct: bool | None  # None: failed or cut short, so the question is excluded, never counted wrong
    error: str | None
    status: str = "answered"  # answered | no_answer | truncated | failed

    @property
    def no_answer(self) -> bool:
        return self.status == "no_answer"


def cut_short(completion: Completion) -> bool:
    """The token limit ended the response (the engine's retry with a larger budget did not help)."""
    return completion.finish_reason == "length" or completion.error_kind == "truncated"


def grade_letter(completion: Completion, question: Question) -> LetterOutcome:
    """`grade_choice` on a completion: a failed call or a response cut before its answer line is excluded."""
    if not completion.ok and not cut_short(completion):
        return LetterOutcome(None, None, completion.error, "failed")
    grade = grade_choice(question, completion.text, "length" if cut_short(completion) else completion.finish_reason)
    if grade.verdict == "truncated":
        return LetterOutcome(None, None, f"{TRUNCATED}: {grade.reason}", "truncated")
    status = "no_answer" if grade.verdict == "no_answer" else "answered"
    return LetterOutcome(grade.letter, grade.verdict == "correct", None, status)


def count(values: Sequence[Any]) -> dict[str, int]:
    return dict(Counter(str(v) for v in values))


Regrade = Callable[[list[Any]], tuple[list[Any], dict[str, int]]]


def load_run(path: str | Path, experiment: str, row_type: type[ResultRow],
             summarize: Callable[[list[Any], dict[str, Any]], dict[str, Any]],
             regrade: Regrade | None = None) -> dict[str, Any]:
    """A results file (ours or the original study's) read into typed rows, its summary recomputed from them:
    what the book shows never depends on the summary a file claims.

    `recomputed_as_published` keeps the file's own verdicts; `recomputed_summary` applies this toolkit's
    rules (`regrade`), and `regrade_changes` counts the rows each rule changed, so a reader sees both
    figures side by side and why they differ. For our own files the two agree.
    """
    data = load_results(path, experiment)  # checks the rows carry what summarize needs
    rows = [row_type.from_dict(r) for r in data["results"]]
    data["recomputed_as_published"] = summarize(rows, data["metadata"])
    regraded, changes = regrade(rows) if regrade is not None else (rows, {})
    data["recomputed_summary"] = summarize(regraded, data["metadata"]) if changes else \
        data["recomputed_as_published"]
    for summary in {id(s): s for s in (data["recomputed_as_published"], data["recomputed_summary"])}.values():
        # facts of the run that rows cannot give back: the judge's calibration and agreement, who judged
        summary.update({k: data["summary"][k] for k in ("judge_calibration", "judge_agreement")
                        if k in data["summary"]})
        summary["self_judged"] = data["metadata"].get("self_judged")
    data["regrade_changes"] = changes
    return data


def display_path(path: str | Path) -> str:
    """A path as a reader of the book should see it: relative to the project, never the build machine's."""
    try:
        return str(Path(path).resolve().relative_to(PROJECT_ROOT))
    except ValueError:
        return Path(path).name


def run_or_load(experiment, settings: Settings, results_path: str | Path | None = None, **run_kwargs: Any
                ) -> tuple[dict[str, Any], Path]:
    """Analyse an existing results file, or print the cost estimate, run, and load what was written.

    `experiment` is one of the modules of `cfa_lib.experiments`; the notebooks call this so that the
    same cells serve a fresh run and a re-analysis.
    """
    check_options = getattr(experiment, "check_run_options", None)
    if check_options is not None:  # a typo in an experiment's own parameter fails before the estimate
        check_options(**run_kwargs)
    if results_path is not None:
        path = params.check_results_path(results_path, experiment.EXPERIMENT)
    else:
        wanted = inspect.signature(experiment.estimate).parameters  # e.g. option_bias's variants
        print(experiment.estimate(settings, **{k: v for k, v in run_kwargs.items() if k in wanted}))
        _, path = experiment.run(settings, **run_kwargs)
        print(f"Results written to {display_path(path)}")
    return experiment.load(path), path
