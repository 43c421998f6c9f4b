"""The book as one PDF for reviewers: the single-page HTML build printed by headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from cfa_lib.paths import BUILD_DIR
from cfa_lib.publishing import BookBuildError

PDF_PATH = BUILD_DIR / "book.pdf"


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
