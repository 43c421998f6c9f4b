"""The review file: a CSV any spreadsheet program opens, written blind and read back line by line.

One row per (item, reviewer). The export writes what a reviewer needs (the question, the key, the whole
response as the file stores it) and an empty `verdict`, never the toolkit's verdict or the path that
decided it: those are joined back by `item_id` when the file is scored. Several reviewers add rows with
their name in `reviewer`, and `reviewer_kind` says who made each label: `person` (the default, when empty)
or `model` (an LLM acting as a reviewer), so no figure corrected by a model's labels passes for a human check.
A row that does not fit (an unknown item, a verdict outside the allowed values, an unknown reviewer_kind, the
same item twice for one reviewer) is reported with its row as a spreadsheet shows it, every such row at once,
and the file is left as it is.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cfa_lib.results import write_text_atomic
from cfa_lib.review.items import VERDICTS, ReviewItem

COLUMNS = ("item_id", "experiment", "question_id", "part", "seed", "kind", "allowed_verdicts", "question",
           "correct_option", "response", "response_stored", "reviewer", "reviewer_kind", "verdict", "note")
REVIEWER_KINDS = ("person", "model")
STORED = {True: "whole", False: "cut short in the results file"}


class ReviewFileError(ValueError):
    """A review file that cannot be scored: every bad line is named."""


@dataclass(frozen=True)
class Label:
    """One reviewer's verdict on one item (`verdict` "" while not yet labelled)."""

    item_id: str
    reviewer: str
    verdict: str
    note: str = ""
    row: int = 0  # its row as a spreadsheet shows it (1 is the header)
    kind: str = "person"  # who made it: a person, or a model acting as a reviewer


def export_row(item: ReviewItem, reviewer: str = "", verdict: str = "", note: str = "") -> dict[str, str]:
    """What the reviewer sees of an item, without the toolkit's verdict or the path that decided it."""
    return {"item_id": item.item_id, "experiment": item.experiment, "question_id": item.question_id,
            "part": item.part, "seed": "" if item.seed is None else str(item.seed), "kind": item.kind,
            "allowed_verdicts": " | ".join(VERDICTS[item.kind]), "question": item.question,
            "correct_option": item.correct_option, "response": item.response,
            "response_stored": STORED[item.response_whole], "reviewer": reviewer, "reviewer_kind": "",
            "verdict": verdict, "note": note}


def write_review(rows: Iterable[Mapping[str, str]], path: Path | str) -> Path:
    """The review file (UTF-8 with a byte-order mark, so spreadsheet programs read accents right)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return write_text_atomic("\ufeff" + buffer.getvalue(), Path(path))


def export(items: Sequence[ReviewItem], path: Path | str) -> Path:
    """A blind review file of `items`, every verdict empty."""
    return write_review((export_row(item) for item in items), path)


def read_rows(path: Path | str) -> list[tuple[int, dict[str, str]]]:
    """Every data row of a review file with its row number as a spreadsheet shows it (the header is row 1; a
    response with line breaks is still one row); a missing column names the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ReviewFileError(f"{path}: no such review file.") from None
    except UnicodeDecodeError as error:
        raise ReviewFileError(f"{path}: not UTF-8 text ({error}); save the sheet as CSV UTF-8.") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = {"item_id", "verdict"} - set(reader.fieldnames or ())
    if missing:
        raise ReviewFileError(f"{path}, line 1: the header lacks {sorted(missing)} (columns: {', '.join(COLUMNS)}).")
    return [(number, {k: (v or "") for k, v in raw.items() if k is not None})
            for number, raw in enumerate(reader, start=2)]


def read_labels(path: Path | str, items: Mapping[str, ReviewItem]) -> list[Label]:
    """The labels of a review file, checked against the run's items; every bad line is named at once."""
    problems, labels, seen = [], [], {}
    for line, row in read_rows(path):
        item_id, verdict = row["item_id"].strip(), row["verdict"].strip()
        reviewer = row.get("reviewer", "").strip() or "reviewer"
        item = items.get(item_id)
        if item is None:
            problems.append(f"row {line}: item_id {item_id!r} is no item of this results file")
            continue
        allowed = VERDICTS[item.kind]
        if verdict and verdict not in allowed:
            problems.append(f"row {line}: verdict {verdict!r} for {item_id} is not one of {', '.join(allowed)} "
                            "(leave it empty if not reviewed yet)")
            continue
        kind = row.get("reviewer_kind", "").strip() or "person"
        if kind not in REVIEWER_KINDS:
            problems.append(f"row {line}: reviewer_kind {kind!r} is not one of {', '.join(REVIEWER_KINDS)} "
                            "(empty: person)")
            continue
        if (item_id, reviewer) in seen:
            first = seen[item_id, reviewer]
            problems.append(f"row {line}: {item_id} already labelled by {reviewer!r} on row {first}")
            continue
        seen[item_id, reviewer] = line
        labels.append(Label(item_id, reviewer, verdict, row.get("note", "").strip(), line, kind))
    if problems:
        raise ReviewFileError(f"{path}: {len(problems)} row(s) cannot be scored (the file is unchanged):\n"
                              + "\n".join(problems))
    return labels
