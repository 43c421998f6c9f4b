"""Build the book: the generated pages, MathJax from the book itself, then Jupyter Book, then checks.

    python -m cfa_lib.publishing.build html   # → build/book/_build/html/index.html
    python -m cfa_lib.publishing.build pdf    # → build/book.pdf (single-page HTML printed by headless Chromium)
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from cfa_lib.checks import CommandLine
from cfa_lib.paths import BUILD_DIR, PROJECT_ROOT, results_root
from cfa_lib.publishing import BookBuildError
from cfa_lib.publishing.mathjax import install_mathjax
from cfa_lib.publishing.pages import write_generated
from cfa_lib.publishing.pdf import PDF_PATH, print_pdf, printable_page
from cfa_lib.publishing.scan import external_assets, find_secrets

OUTPUT = BUILD_DIR / "book"


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


def main(argv: Sequence[str] | None = None) -> int:
    parser = CommandLine(prog="python -m cfa_lib.publishing.build", description=__doc__.splitlines()[0])
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
