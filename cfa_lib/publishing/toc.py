"""The book's table of contents, written from the experiment registry (Jupyter Book reads `_toc.yml`,
which cannot import Python, so the file is generated and committed; a test checks it is current).

    python -m cfa_lib.publishing.toc   # → _toc.yml
"""

from __future__ import annotations

from pathlib import Path

from cfa_lib.paths import PROJECT_ROOT
from cfa_lib.publishing.pages import EXECUTED

TOC_PATH = PROJECT_ROOT / "_toc.yml"
HEADER = """\
# The book's table of contents, written by python -m cfa_lib.publishing.toc from the experiment registry
# (cfa_lib/experiments/__init__.py): do not edit by hand. book/executed/ holds the notebooks executed by
# papermill (python -m cfa_lib.publishing.pipeline); book/generated_*.md are written by
# python -m cfa_lib.publishing.build.
"""


def toc_yaml() -> str:
    """The text of `_toc.yml`: the study's chapters with one results section per executed notebook."""
    sections = "".join(f"          - file: book/executed/{name}\n" for name in EXECUTED)
    return (
        f"{HEADER}format: jb-book\nroot: book/index\nparts:\n"
        "  - caption: The study\n"
        "    chapters:\n"
        "      - file: book/method\n"
        "      - file: book/keys\n"
        "      - file: book/results\n"
        f"        sections:\n{sections}"
        "      - file: book/discussion\n"
        "  - caption: Appendix\n"
        "    chapters:\n"
        "      - file: book/appendix_runs\n"
        "      - file: book/appendix_reliability\n"
        "      - file: book/references\n"
    )


def write_toc(path: Path = TOC_PATH) -> Path:
    path.write_text(toc_yaml(), encoding="utf-8")
    return path


if __name__ == "__main__":
    print(f"wrote {write_toc()}")
