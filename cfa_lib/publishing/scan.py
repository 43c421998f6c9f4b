"""Checks of what is about to be published: nothing fetched from the network, no secret shown.

The built pages are searched for scripts or styles loaded from the network (links to papers in the text
are fine) and every published file for the value of any *_KEY / *_TOKEN variable (never printed).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

SECRET_NAME = re.compile(r"(_KEY|_TOKEN)$")
# A script or stylesheet loaded from the network (links to papers in the text are fine).
EXTERNAL_ASSET = re.compile(
    r"<(?:script|img|iframe)\b[^>]*\bsrc\s*=\s*[\"']?(?:https?:)?//[^\"'\s>]+"
    r"|<link\b[^>]*\bhref\s*=\s*[\"']?(?:https?:)?//[^\"'\s>]+[^>]*>"
    r"|@import\s+(?:url\()?[\"']?(?:https?:)?//[^\"')\s]+",
    re.IGNORECASE,
)


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
