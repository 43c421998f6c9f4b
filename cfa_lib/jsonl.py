"""Reading the project's JSON-lines files (templates, reviews, reviewed exceptions): one loop, one error shape.

Every reader names the file and the line of a row it cannot use, so a hand-edited file is fixed in one go.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def json_lines(path: Path | str, error: type[Exception] = ValueError, **loads: Any) -> Iterator[tuple[str, Any]]:
    """(where, value) for every non-empty line, `where` being "FILE:LINE" for the caller's own checks; a line
    that is not JSON raises `error` naming it (`loads`: json.loads options, such as parse_constant)."""
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            value = json.loads(line, **loads)
        except ValueError as exc:  # json.JSONDecodeError, or a constant the caller refuses
            raise error(f"{where}: not valid JSON: {exc}") from None
        yield where, value
