"""Grade answers produced elsewhere: `python -m cfa_lib.grade responses.jsonl`.

Each input line is one JSON object `{"question_id": "easy_3", "response": "...", "finish_reason": "stop"}`
(`finish_reason` optional; `"format": "mcq"` grades a multiple-choice response with `grade_choice`,
the default `"open"` uses `grade_open_answer`). One verdict per line is written as JSONL
(`{question_id, verdict, value, unit, answer_source, reason}`, plus `letter` for MCQ rows); the counts
per verdict are printed, and how many verdicts the final line decided, how many the heuristic reader
decided, and how many were deferred to the judge (a deferral costs a judge call, a wrong verdict
costs the study: the reader defers whenever it cannot point at the committed answer). A bad line (not
JSON, a missing field, an unknown question id) gets a message naming its line number, is skipped and
counted; the exit code is then 1.

Answers are graded against the audited keys, as every run is (`--keys original`: the dataset's own keys); a
question the key audit sets aside is named, counted and not graded.
"""

from __future__ import annotations

import functools
import json
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from cfa_lib.answers.open_answer import VERDICTS, grade_choice, grade_open_answer
from cfa_lib.checks import CommandLine
from cfa_lib.data import DATASET_NAMES, Question, dataset_of, load_dataset
from cfa_lib.key_audit import KeyChanges, Keys, apply_audit


@functools.cache
def _graded_against(dataset: str, keys: Keys) -> tuple[dict[str, Question], KeyChanges]:
    questions, changes = apply_audit(load_dataset(dataset), keys)
    return {q.id: q for q in questions}, changes


def grade_lines(lines: Iterable[str | bytes], dataset: str | None = None, tolerance: float = 0.02,
                keys: Keys = "audited"):
    """(verdict rows, bad-line messages, set-aside messages) for an iterable of JSONL lines, text or bytes (a line
    that is not UTF-8 is named and skipped, the rest graded), against the `keys` (audited: a question the audit
    sets aside is named in the third list and not graded)."""
    rows: list[dict] = []
    bad: list[str] = []
    set_aside: list[str] = []
    for number, line in enumerate(lines, start=1):
        if isinstance(line, bytes):
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError as error:
                bad.append(f"line {number}: not UTF-8 (byte {line[error.start]:#04x} at column {error.start + 1})")
                continue
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            bad.append(f"line {number}: not JSON ({error.msg})")
            continue
        if not isinstance(record, dict):
            bad.append(f"line {number}: not a JSON object")
            continue
        missing = [f for f in ("question_id", "response") if f not in record]
        if missing:
            bad.append(f"line {number}: missing field {', '.join(missing)}")
            continue
        question_id = str(record["question_id"])
        name = dataset or dataset_of(question_id)
        if name is None:
            bad.append(f"line {number}: unknown question id {question_id!r} (expected easy_N or challenge_N)")
            continue
        graded_against, changes = _graded_against(name, keys)
        if question_id in changes.set_aside:
            set_aside.append(f"line {number}: {question_id} is set aside by the key audit "
                             f"({changes.set_aside[question_id]}); --keys original grades it against the dataset's key")
            continue
        question = graded_against.get(question_id)
        if question is None:
            bad.append(f"line {number}: unknown question id {question_id!r} in dataset {name!r}")
            continue
        response = record["response"]
        if response is not None and not isinstance(response, str):
            bad.append(f"line {number}: response must be a string")
            continue
        finish_reason = record.get("finish_reason")
        if record.get("format", "open") == "mcq":
            grade = grade_choice(question, response, finish_reason)
        else:
            grade = grade_open_answer(question, response, finish_reason, tolerance=tolerance)
        row = {"question_id": question_id, **grade.to_dict()}
        if grade.letter is None:
            row.pop("letter")
        rows.append(row)
    return rows, bad, set_aside


def main(argv: list[str] | None = None) -> int:
    parser = CommandLine(prog="python -m cfa_lib.grade", description=__doc__.splitlines()[0])
    parser.add_argument("responses", type=Path, help="JSONL: one {question_id, response, finish_reason?} per line")
    parser.add_argument("--dataset", choices=DATASET_NAMES, default=None,
                        help="dataset of every question id (default: from the id prefix)")
    parser.add_argument("--out", type=Path, default=None,
                        help="verdicts JSONL (default: <responses>.verdicts.jsonl)")
    parser.add_argument("--tolerance", type=float, default=0.02, help="relative tolerance (default 0.02)")
    parser.add_argument("--keys", choices=("audited", "original"), default="audited",
                        help="the audited answer keys (default, as every run) or the dataset's own")
    args = parser.parse_args(argv)
    if args.tolerance < 0:
        parser.error(f"--tolerance={args.tolerance} must be a non-negative number")
    try:
        data = args.responses.read_bytes()
    except OSError as error:
        print(f"cannot read {args.responses}: {error.strerror}", file=sys.stderr)
        return 2
    rows, bad, set_aside = grade_lines(data.removeprefix(b"\xef\xbb\xbf").splitlines(), args.dataset, args.tolerance,
                                       args.keys)
    out = args.out or args.responses.with_suffix(".verdicts.jsonl")
    out.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    for message in bad + set_aside:
        print(message, file=sys.stderr)
    counts = Counter(row["verdict"] for row in rows)
    print(f"{len(rows)} graded, written to {out}")
    for verdict in VERDICTS:
        print(f"  {verdict:<10} {counts.get(verdict, 0)}")
    if set_aside:
        print(f"  {'set aside':<10} {len(set_aside)} (the key audit: datasets/key_audit/)")
    if bad:
        print(f"  {'bad lines':<10} {len(bad)}")
    print("decided by:")
    for path, n in decided_by(rows).items():
        print(f"  {path:<22} {n}")
    return 1 if bad else 0


def decided_by(rows: list[dict]) -> dict[str, int]:
    """How each verdict was reached: the FINAL ANSWER (MCQ: ANSWER) line, the heuristic reader, a deferral
    to the judge, or before any answer was read (truncated, nothing after the reasoning block)."""
    def path(row: dict) -> str:
        if row["verdict"] == "judge":
            return "deferred to the judge"
        return {"final_line": "the final line", "heuristic": "the heuristic reader"}.get(
            row["answer_source"], "before reading")

    counts = Counter(path(row) for row in rows)
    return {name: counts.get(name, 0) for name in
            ("the final line", "the heuristic reader", "deferred to the judge", "before reading")}


if __name__ == "__main__":
    sys.exit(main())
