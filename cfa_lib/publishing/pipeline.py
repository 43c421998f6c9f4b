"""Run the study's notebooks with papermill: 01–03 for each model, then 04 for the paper's figures.

    python -m cfa_lib.publishing.pipeline --models "local gpt-4o-mini" --dataset easy --limit 8

The first model's executed notebooks are the book's results chapter (book/executed/); the other models'
go to build/runs/<model>/, and notebook 04 draws every model's results files into the book.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from cfa_lib.checks import CommandLine
from cfa_lib.data import DATASET_NAMES
from cfa_lib.experiments.registry import EXPERIMENTS, FIGURES_NOTEBOOK
from cfa_lib.experiments.variants import check_variants
from cfa_lib.models import ModelSpecError, parse_model_name
from cfa_lib.models.fleet import endpoint, listed
from cfa_lib.paths import BUILD_DIR, NOTEBOOKS_DIR, PROJECT_ROOT, results_root
from cfa_lib.results import safe_name

KERNEL_NAME = "python3"
# jupyter_client's words for a kernel that stopped before answering its first request
KERNEL_DIED_AT_START = "Kernel died before replying to kernel_info"
KERNEL_START_RETRIES = 1


class PipelineError(RuntimeError):
    """A notebook that failed: the message names it and where its partial output is."""


@dataclass(frozen=True)
class Job:
    """One papermill run: which notebook, where its executed copy goes, its parameters, its name in logs."""

    notebook: Path
    output: Path
    parameters: dict[str, Any]
    label: str


def parse_limit(text: str | None) -> int | None:
    """`--limit ""` and `--limit none` mean the whole dataset."""
    if text is None or text.strip().lower() in {"", "none", "all"}:
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(
            f"--limit {text!r} is not valid: accepted values are a positive integer, or '' / none for the "
            "whole dataset."
        )
    return value


def positive_int(text: str) -> int:
    """--max-concurrency and --jobs: checked here, before any notebook starts."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not valid: accepted values are a positive integer, such as 8.")
    return value


def parse_cost(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"--max-cost-usd {text!r} is not valid: accepted values are a positive "
                                         "number of US dollars, such as 5.")
    return value


def plan(models: Sequence[str], dataset: str, limit: int | None, sample_seed: int | None,
         max_concurrency: int | None, book_root: Path, results_dir: Path, include_reference: bool,
         figures_only: bool = False, batch: bool = False, max_cost_usd: float | None = None,
         variants: Sequence[str] = (), retry_failed: bool = False) -> list[Job]:
    """The notebooks to run, in order, with their papermill parameters."""
    jobs: list[Job] = []
    if not figures_only:
        for i, model in enumerate(models):
            out_dir = (book_root / "book" / "executed" if i == 0
                       else BUILD_DIR / "runs" / safe_name(model))
            params: dict[str, Any] = {"model": model, "dataset": dataset, "limit": limit,
                                      "sample_seed": sample_seed}
            if max_concurrency is not None:
                params["max_concurrency"] = max_concurrency
            if batch:
                params["batch"] = True
            if max_cost_usd is not None:
                params["max_cost_usd"] = max_cost_usd
            if retry_failed:
                params["retry_failed"] = True
            jobs += [Job(NOTEBOOKS_DIR / e.notebook, out_dir / e.notebook,
                         {**params, "variants": list(variants)} if variants and "variants" in e.Options.model_fields
                         else params,
                         model)
                     for e in EXPERIMENTS.values()]
    jobs.append(Job(
        NOTEBOOKS_DIR / FIGURES_NOTEBOOK,
        book_root / "book" / "executed" / FIGURES_NOTEBOOK,
        {"results_dir": _short(results_dir), "include_reference": include_reference,
         "figures_dir": _short(book_root / "book" / "figures"),
         "tables_dir": _short(book_root / "book" / "tables")},
        "all models",
    ))
    return jobs


def use_this_python_as_kernel() -> None:
    """Make papermill's `python3` kernel this interpreter (the venv's), whatever kernels the user has."""
    from ipykernel.kernelspec import write_kernel_spec

    kernels = BUILD_DIR / "jupyter"
    spec = kernels / "kernels" / KERNEL_NAME
    shutil.rmtree(spec, ignore_errors=True)  # written afresh: the venv may have moved since the last run
    # the kernel talks to papermill on loopback only; its warning that TCP is unencrypted would reach every
    # `make book` log, so the kernel logs nothing below critical (a failing cell still fails the run with its traceback;
    # the KeyboardInterrupt papermill sends at shutdown is not an error either)
    argv = [sys.executable, "-m", "ipykernel_launcher", "--IPKernelApp.log_level=CRITICAL", "-f", "{connection_file}"]
    # a crash in compiled code (a segmentation fault) prints the Python stack into the kernel's log
    write_kernel_spec(spec, overrides={"display_name": "Python 3 (cfa-lib)", "argv": argv,
                                       "env": {"PYTHONFAULTHANDLER": "1"}})
    os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(kernels), os.environ.get("JUPYTER_PATH")]))


def run_job(job: Job) -> float:
    import papermill
    from nbclient.exceptions import DeadKernelError
    from papermill.exceptions import PapermillExecutionError

    if not job.notebook.is_file():
        raise PipelineError(f"notebook {job.notebook} does not exist.")
    job.output.parent.mkdir(parents=True, exist_ok=True)
    log = kernel_log(job)
    start = time.monotonic()
    try:
        for attempt in range(1 + KERNEL_START_RETRIES):
            try:
                papermill.execute_notebook(str(job.notebook), str(job.output), parameters=job.parameters,
                                           kernel_name=KERNEL_NAME, cwd=str(PROJECT_ROOT), progress_bar=False,
                                           kernel_manager_class=logged_kernel_manager(log))
                break
            except RuntimeError as exc:
                if not died_at_start(exc) or attempt == KERNEL_START_RETRIES:
                    raise
    except PapermillExecutionError as exc:
        raise PipelineError(
            f"{job.notebook.name} ({job.label}) failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue}\n"
            f"The partially executed notebook is {_short(job.output)}"
        ) from exc
    except DeadKernelError as exc:
        raise PipelineError(dead_kernel(job, log)) from exc
    return time.monotonic() - start


def died_at_start(exc: BaseException) -> bool:
    """A kernel that died before its first reply ran no cell, so starting it again is safe. Under load a
    kernel can lose one of the ports it was handed to another process's connection between the choice and
    its own bind; a second start picks other ports."""
    return KERNEL_DIED_AT_START in str(exc)


def kernel_log(job: Job) -> Path:
    """Where the kernel process of a job writes what never reaches a cell (a crash's own words): beside the
    executed notebook."""
    return job.output.with_suffix(".kernel.log")


def logged_kernel_manager(log: Path) -> type:
    """A kernel manager whose kernel writes its stdout and stderr to `log` (afresh for each run)."""
    from jupyter_client.manager import AsyncKernelManager

    class LoggedKernelManager(AsyncKernelManager):
        async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
            log.parent.mkdir(parents=True, exist_ok=True)
            with log.open("wb") as handle:  # the child keeps its own copy of the descriptor
                await super()._async_launch_kernel(kernel_cmd, **kw, stdout=handle, stderr=handle)

    return LoggedKernelManager


CRASH_CAUSES = (  # (words in the kernel's log, what most likely happened)
    (("llama", "ggml"), "the embedded model's engine (llama.cpp) crashed. A llama-cpp-python compiled for another "
     "CPU, or with AMX on an Intel Xeon, does this: reinstall the portable build with `rm -rf .venv && make install`"),
    (("Illegal instruction", "SIGILL"), "the CPU met an instruction it lacks: a library was compiled for another "
     "CPU; reinstall with `rm -rf .venv && make install`"),
    (("MemoryError", "Cannot allocate memory"), "the kernel ran out of memory"),
    (("Segmentation fault", "Fatal Python error"), "a crash in compiled code (a library built for another CPU, or "
     "a bug in it); its stack is below"),
)


def last_words(log_text: str, most: int = 12) -> list[str]:
    """What a dead kernel's log says of its death: the fatal error and the crashed thread's innermost frames
    (faulthandler's "Current thread" block), else the last lines it wrote."""
    lines = [line for line in log_text.splitlines() if line.strip()]
    fatal = next((i for i, line in enumerate(lines) if line.startswith("Fatal Python error")), None)
    current = next((i for i, line in enumerate(lines) if line.startswith("Current thread")), None)
    if fatal is None or current is None:
        return lines[-most:]
    frames = [line for line in lines[current + 1:] if line.startswith("  File")]
    return [lines[fatal], lines[current], *frames[: most - 2]]


def dead_kernel(job: Job, log: Path) -> str:
    """One sentence on a kernel that died mid-notebook (which notebook, which model, the likely cause),
    then the last words of its process."""
    lines = last_words(log.read_text(encoding="utf-8", errors="replace") if log.is_file() else "")
    said = "\n".join(lines)
    cause = next((why for words, why in CRASH_CAUSES if any(w in said for w in words)),
                 "the process was killed without a word: most often the machine ran out of memory "
                 "(see `dmesg`), or it was killed from outside")
    tail = "\n".join(f"    {line}" for line in lines) if lines else "    (it wrote nothing)"
    return (f"{job.notebook.name} ({job.label}): the notebook's kernel died; likely cause: {cause}.\n"
            f"The last lines its process wrote ({_short(log)}):\n{tail}\n"
            f"The partially executed notebook is {_short(job.output)}")


def on_own_servers(models: Sequence[str]) -> bool:
    """Every model is listed in the models file (cfa_lib.models.fleet), each at an endpoint of its own: the
    models run side by side, one lane each (`run_lanes`)."""
    entries = [listed(m) for m in models]
    return len(models) > 1 and all(entries) and len({endpoint(e.base_url) for e in entries if e}) == len(models)


def default_workers(models: Sequence[str]) -> int:
    """Notebooks run at once: one per core when every model runs in-process (each kernel decodes on one
    core, and the shared cache splits the requests two notebooks share, such as Format B and 02's open
    answers); else one at a time, so a server's rate limit and the spend cap see one run."""
    in_process = all(parse_model_name(m).backend == "local" for m in models)
    return max(1, os.cpu_count() or 1) if in_process and models else 1


def run(jobs: Sequence[Job], workers: int = 1) -> None:
    """The experiment notebooks, `workers` at a time, then the figures notebook, which reads their results."""
    use_this_python_as_kernel()
    numbered = list(enumerate(jobs, 1))
    experiments = [(i, j) for i, j in numbered if j.notebook.name != FIGURES_NOTEBOOK]
    figures = [(i, j) for i, j in numbered if j.notebook.name == FIGURES_NOTEBOOK]

    def one(i: int, job: Job) -> None:
        print(f"[{i}/{len(jobs)}] {job.notebook.name} ({job.label}) → {_short(job.output)} ...", flush=True)
        seconds = run_job(job)
        print(f"[{i}/{len(jobs)}] {job.notebook.name} ({job.label}) done in {seconds:.1f} s", flush=True)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = [pool.submit(one, i, job) for i, job in experiments]
        for future in futures:
            if future.exception() is not None:  # the first failure in plan order; the others finish first
                for other in futures:
                    other.cancel()
                raise future.exception()  # type: ignore[misc]
    for i, job in figures:
        one(i, job)


def usage_line(model: str, since: float) -> str:
    """A model's requests, failures and cost over the results files its notebooks wrote since `since` (every role:
    the subject, its judges, its generator), as the lanes' summary prints them."""
    calls = cached = failed = 0
    costs: list[float | None] = []
    for path in results_root().glob("*/*/results.json"):
        if path.stat().st_mtime < since:
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("metadata", {}).get("model") != model:
            continue
        for role in (data.get("summary", {}).get("usage") or {}).values():
            calls, failed = calls + role.get("n_calls", 0), failed + role.get("failed", 0)
            cached += role.get("cache_hits", 0)
            costs.append(role.get("cost_usd"))
    cost = "cost unknown" if any(c is None for c in costs) else f"${sum(c for c in costs if c is not None):.4f}"
    return f"{calls} requests ({cached} from the cache, {failed} failed), {cost}"


def run_lanes(jobs: Sequence[Job]) -> None:
    """One lane per model, side by side, each running its model's notebooks in order; a notebook that fails
    (its server down) ends its lane only, the others go on; the figures notebook then draws what finished. The
    summary names each model's notebooks done and failed and its time; any failure raises after it."""
    use_this_python_as_kernel()
    started = time.time()
    lanes: dict[str, list[Job]] = {}
    for job in jobs:
        if job.notebook.name != FIGURES_NOTEBOOK:
            lanes.setdefault(job.label, []).append(job)
    outcome: dict[str, tuple[int, str | None, float]] = {}  # model -> (notebooks done, failure, seconds)

    def lane(position: int, model: str, mine: list[Job]) -> None:
        start, done = time.monotonic(), 0
        with tqdm(total=len(mine), desc=model, position=position, unit="notebook", leave=True) as bar:
            for job in mine:
                bar.set_postfix_str(job.notebook.name)
                try:
                    run_job(job)
                except PipelineError as exc:
                    outcome[model] = (done, str(exc).splitlines()[0], time.monotonic() - start)
                    bar.set_postfix_str(f"{job.notebook.name} failed: the model's other notebooks are skipped")
                    return
                done += 1
                bar.update()
        outcome[model] = (done, None, time.monotonic() - start)

    with ThreadPoolExecutor(max_workers=len(lanes)) as pool:  # one progress bar per model, one line each
        for future in [pool.submit(lane, i, model, mine) for i, (model, mine) in enumerate(lanes.items())]:
            future.result()
    if any(failure is None for _, failure, _ in outcome.values()):
        for job in jobs:
            if job.notebook.name == FIGURES_NOTEBOOK:
                run_job(job)
    for model, (done, failure, seconds) in outcome.items():
        status = "done" if failure is None else f"failed: {failure}"
        print(f"{model}: {done} of {len(lanes[model])} notebooks in {seconds:.0f} s, {usage_line(model, started)}; "
              f"{status}", flush=True)
    failed = [model for model, (_, failure, _) in outcome.items() if failure]
    if failed:
        raise PipelineError(f"{len(failed)} of {len(lanes)} models failed ({', '.join(failed)}); the others' "
                            "notebooks and results are written")


def _short(path: Path) -> str:
    try:
        return str(path.relative_to(PROJECT_ROOT))
    except ValueError:
        return str(path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = CommandLine(prog="python -m cfa_lib.publishing.pipeline", description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="local",
                        help='space-separated model names, e.g. "local gpt-4o-mini"')
    parser.add_argument("--dataset", default="easy", choices=DATASET_NAMES)
    parser.add_argument("--limit", type=parse_limit, default=8, help='questions per run; "" or none: all')
    parser.add_argument("--sample-seed", type=int, default=None)
    parser.add_argument("--max-concurrency", type=positive_int, default=None)
    parser.add_argument("--batch", action="store_true",
                        help="send uncached requests through OpenAI's Batch API (half price, results within 24 h)")
    parser.add_argument("--batch-fallback", choices=("batch", "live"), default=None,
                        help="requests that failed inside a batch: retry by batch (default) or live")
    parser.add_argument("--max-cost-usd", type=parse_cost, default=None,
                        help="stop cleanly before the whole run spends more than this (all notebooks together)")
    parser.add_argument("--retry-failed", action="store_true",
                        help="send again the failures a deterministic model gave, which the cache keeps")
    parser.add_argument("--variants", default="",
                        help='answer-format variants for notebook 01, space-separated, e.g. "options_only shuffled"')
    parser.add_argument("--jobs", type=positive_int, default=None,
                        help="notebooks run at once (default: one per core for in-process models, else 1)")
    parser.add_argument("--no-reference", action="store_true",
                        help="leave the original study's runs out of 04")
    parser.add_argument("--figures-only", action="store_true", help="run notebook 04 alone")
    parser.add_argument("--book-root", type=Path, default=PROJECT_ROOT,
                        help="where book/executed, book/figures and book/tables are written")
    parser.add_argument("--results-dir", type=Path, default=None,
                        help="results folder read by 04 (default: CFA_RESULTS_DIR or results/)")
    args = parser.parse_args(argv)
    models = args.models.split()
    if args.results_dir is not None:  # the notebooks' kernels inherit it, so 01-03 write where 04 reads
        os.environ["CFA_RESULTS_DIR"] = str(args.results_dir.resolve())
    if args.batch_fallback is not None:
        os.environ["CFA_BATCH_FALLBACK"] = args.batch_fallback
    # one spend cap for the whole run: every notebook kernel inherits the session and adds to its total
    os.environ.setdefault("CFA_SPEND_SESSION", f"pipeline-{uuid.uuid4().hex}")
    try:
        variants = check_variants(args.variants.split())
    except ValueError as exc:
        parser.error(str(exc))
    if not models and not args.figures_only:
        parser.error("--models is empty: name at least one model, e.g. --models local")
    for model in models:  # a typo fails here, in one sentence, before any notebook starts
        try:
            parse_model_name(model)
        except ModelSpecError as exc:
            print(f"error: --models: {exc}", file=sys.stderr)
            return 2
    jobs = plan(models, args.dataset, args.limit, args.sample_seed, args.max_concurrency,
                args.book_root.resolve(), (args.results_dir or results_root()).resolve(),
                include_reference=not args.no_reference, figures_only=args.figures_only, batch=args.batch,
                max_cost_usd=args.max_cost_usd, variants=variants, retry_failed=args.retry_failed)
    try:
        if args.jobs is None and on_own_servers(models) and not args.figures_only:
            run_lanes(jobs)
        else:
            run(jobs, args.jobs or default_workers(models))
    except PipelineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"Executed notebooks: {_short(args.book_root.resolve() / 'book' / 'executed')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
