"""Running an experiment: the one path from settings to a results file, and the notebooks' run cell.

`execute` owns what every experiment shares: the cost estimate, the clients, the subject's first batch, the
steps grading declares, usage, metadata and the atomic write. The experiment only says what to ask and how to grade
(`contract.Experiment`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cfa_lib import __version__, params
from cfa_lib.experiments.contract import Context, Experiment
from cfa_lib.experiments.loading import LoadedRun, load_run
from cfa_lib.experiments.session import Session
from cfa_lib.experiments.settings import Settings
from cfa_lib.key_audit import KeyChanges
from cfa_lib.models import ChatClient, get_client, run_steps
from cfa_lib.models.run_options import RunOptions
from cfa_lib.paths import display_path
from cfa_lib.results import new_run_id, write_results


def metadata(experiment: Experiment, settings: Settings, n_questions: int, sent_with: RunOptions, keys: KeyChanges,
             **extra: Any) -> dict[str, Any]:
    """What a results file says about its run: the experiment, the settings, the answer keys it graded against,
    the engine settings it was sent with (resolved once, by its session), the versions, when."""
    judges = settings.judges
    return {
        "experiment": experiment.name,
        "dataset": settings.dataset,
        "n_questions": n_questions,
        "model": settings.model,
        **({"judge_model": judges[0] if len(judges) == 1 else judges} if experiment.judged else {}),
        "self_judged": settings.self_judged,
        "limit": settings.limit,
        "sample_seed": settings.sample_seed,
        "tolerance": settings.tolerance,
        "keys": keys.to_dict(),  # the answer keys graded against (cfa_lib.key_audit)
        "max_concurrency": sent_with.max_concurrency,
        "batch": sent_with.batch,
        "max_cost_usd": sent_with.max_cost_usd,
        "prompt_version": experiment.prompt_version,
        "package_version": __version__,
        "timestamp": datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ"),
        **extra,
    }


def execute(experiment: Experiment, settings: Settings, options: params.Parameters | None = None,
            clients: Mapping[str, ChatClient] | None = None) -> Path:
    """Estimate, ask, grade, summarize and write one run; returns the results file's path.

    `clients` (model name -> client) are used instead of `get_client` for those names: a test runs an
    experiment on a scripted model without patching any module.
    """
    options = options if options is not None else experiment.Options()
    questions, keys = settings.key_changes()  # the dataset read once: the questions and what the audit changed
    subject = (clients or {}).get(settings.model) or get_client(settings.spec)
    session = Session(settings, options, questions, experiment.helper_models(settings, options),
                      {**(clients or {}), settings.model: subject})
    context = Context(settings, options, questions)
    print("\n".join(session.estimate(experiment.estimated_steps(context))))
    answers = session.ask(experiment.requests(questions, options), desc=experiment.title)
    graded = run_steps(experiment.grade(context, answers), session.answer)
    meta = metadata(experiment, settings, len(questions), session.engine, keys, **graded.metadata,
                    engine=session.engine_stats())
    usage = session.usage()
    summary = experiment.summarize(graded.rows, meta).with_facts(
        **graded.facts, usage=usage,
        total_tokens=sum(u["prompt_tokens"] + u["completion_tokens"] for u in usage.values()))
    data = {"metadata": meta, "summary": summary.to_dict(), "results": [row.to_dict() for row in graded.rows]}
    return write_results(experiment.name, new_run_id(settings.model, settings.dataset), data)


def run_or_load(experiment: Experiment, settings: Settings, results_path: str | Path | None = None, *,
                clients: Mapping[str, ChatClient] | None = None, **options: Any) -> LoadedRun:
    """The notebooks' run cell: analyse an existing results file, or run the experiment and load what it wrote.

    The experiment's options are checked first, so a typo fails before the estimate and any call.
    """
    chosen = experiment.Options(**options)
    if results_path is not None:
        return params.check_results_path(results_path, experiment.name, lambda path: load_run(experiment, path))
    path = execute(experiment, settings, chosen, clients)
    print(f"Results written to {display_path(path)}")
    return load_run(experiment, path)
