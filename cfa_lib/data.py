"""The CFA-Easy and CFA-Challenge question sets of Salesforce/FinEval, parsed into `Question`s.

The files store each question as one prompt string (instruction line, stem and choices glued
together with commas), so the parser has to split choices that themselves contain commas,
thousands separators and trailing periods. Parsing is strict: a row that cannot be split cleanly
raises `DatasetError` naming the dataset, the row and the problem, rather than yielding a question
with a silently wrong answer key.

Known quirks of the shipped files, handled here and documented in datasets/FinEval/README.md:
four CFA-Easy rows have a lower-case answer letter ("a", "c"); in three of them the `gold` index
disagrees with the letter. The `answer` letter is authoritative (it matches the CFA curriculum key
and is what the original study graded against); `gold` is ignored.
"""

from __future__ import annotations

import functools
import json
import os
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from cfa_lib.paths import DATASETS_DIR

__all__ = ["DATASET_NAMES", "DatasetError", "Question", "datasets_dir", "load_dataset", "parse_row"]

DATASET_FILES: dict[str, str] = {"easy": "CFA_Easy.json", "challenge": "CFA_Challenge.json"}
DATASET_NAMES: tuple[str, ...] = tuple(DATASET_FILES)
DATASETS_DIR_ENV = "CFA_DATASETS_DIR"

# PDF-extraction debris in the source text: soft hyphens and ligature glyphs, LaTeX-escaped percent.
_TEXT_FIXES = {"\x02": "", "\x18": "ffi", "\x1a": "fi", "\\%": "%"}
_LETTERS = "ABCDEFGH"


class DatasetError(Exception):
    """A dataset file is missing, is not JSON, or holds a row that cannot be parsed."""


@dataclass(frozen=True)
class Question:
    """One multiple-choice question; `id` is the dataset name plus the row index in the file."""

    id: str
    dataset: str
    index: int
    stem: str
    choices: dict[str, str]
    answer: str

    def mcq_text(self) -> str:
        """The question as shown in the multiple-choice format (Format A)."""
        options = "\n".join(f"{letter}: {text}" for letter, text in self.choices.items())
        return f"{self.stem}\n\n{options}"

    def open_text(self) -> str:
        """The question with its choices removed (Format B)."""
        return self.stem

    @property
    def correct_text(self) -> str:
        return self.choices[self.answer]

    @property
    def distractors(self) -> dict[str, str]:
        return {letter: text for letter, text in self.choices.items() if letter != self.answer}


def datasets_dir() -> Path:
    """Folder holding the FinEval JSON files: `$CFA_DATASETS_DIR` if set, else <project>/datasets/FinEval.

    `CFA_DATASETS_DIR` may name the folder with the JSON files or its parent (which then holds FinEval/).
    """
    override = os.environ.get(DATASETS_DIR_ENV)
    if not override:
        return DATASETS_DIR / "FinEval"
    folder = Path(override).expanduser()
    if not (folder / DATASET_FILES["easy"]).exists() and (folder / "FinEval").is_dir():
        return folder / "FinEval"
    return folder


def load_dataset(name: str, limit: int | None = None, sample_seed: int | None = None) -> list[Question]:
    """Load and parse a dataset ("easy": 1032 questions, "challenge": 90).

    `limit` alone keeps the first `limit` questions. With `sample_seed` it keeps a reproducible random
    sample of `limit` questions (`random.Random(sample_seed)`), returned in file order. A `limit`
    above the dataset size returns the whole dataset.
    """
    if name not in DATASET_FILES:
        raise ValueError(f"name={name!r} is not a dataset; accepted values: {', '.join(DATASET_NAMES)}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit={limit!r} must be a positive integer or None")
    if sample_seed is not None and (isinstance(sample_seed, bool) or not isinstance(sample_seed, int)):
        raise ValueError(f"sample_seed={sample_seed!r} must be an integer or None")

    path = datasets_dir() / DATASET_FILES[name]
    rows = _read_rows(path)
    indices = list(range(len(rows)))
    if limit is not None and limit < len(rows):
        if sample_seed is None:
            indices = indices[:limit]
        else:
            indices = sorted(random.Random(sample_seed).sample(indices, limit))
    try:
        return [parse_row(name, i, rows[i]) for i in indices]
    except DatasetError as exc:
        raise DatasetError(f"dataset file {path}: {exc}") from None


def _read_rows(path: Path) -> list[Mapping]:
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(f"dataset file {path} does not exist (set {DATASETS_DIR_ENV} to its folder)") from None
    except OSError as exc:
        raise DatasetError(f"dataset file {path} cannot be read: {exc}") from exc
    try:
        rows = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"dataset file {path} is not valid JSON: {exc}") from exc
    if not isinstance(rows, list) or not all(isinstance(row, Mapping) for row in rows):
        raise DatasetError(f"dataset file {path} must hold a JSON list of objects")
    return rows


def parse_row(dataset: str, index: int, row: Mapping) -> Question:
    """Parse one raw row; raises DatasetError naming dataset, row and problem."""

    def fail(problem: str) -> DatasetError:
        return DatasetError(f"{dataset} row {index}: {problem}")

    if dataset == "easy":
        stem, block = _split_easy(row, fail)
    elif dataset == "challenge":
        stem, block = _split_challenge(row, fail)
    else:
        raise ValueError(f"dataset={dataset!r} is not a dataset; accepted values: {', '.join(DATASET_NAMES)}")
    if not stem:
        raise fail("empty question stem")
    choices = parse_choices(block)
    if len(choices) < 2:
        raise fail(f"no answer choices found in {block[:120]!r}")
    if any(not text for text in choices.values()):
        raise fail(f"empty answer choice in {choices}")
    declared = row.get("choices")
    if isinstance(declared, list) and declared and [str(c).upper() for c in declared] != list(choices):
        raise fail(f"found choices {', '.join(choices)} but the row declares {', '.join(map(str, declared))}")
    answer = _normalise_letter(row.get("answer"))
    if answer not in choices:
        raise fail(f"answer {row.get('answer')!r} is not among the choices {', '.join(choices)}")
    return Question(id=f"{dataset}_{index}", dataset=dataset, index=index, stem=stem, choices=choices, answer=answer)


def _clean(text: str) -> str:
    for bad, good in _TEXT_FIXES.items():
        text = text.replace(bad, good)
    return text.strip()


def _field(row: Mapping, key: str, fail) -> str:
    value = row.get(key)
    if not isinstance(value, str) or not value.strip():
        raise fail(f"field {key!r} is missing or empty")
    return _clean(value)


def _drop_answer_cue(text: str) -> str:
    """Remove the trailing 'Answer:' prompt cue the FinEval template appends."""
    return re.sub(r"\s*\bAnswer:\s*$", "", text)


def _split_easy(row: Mapping, fail) -> tuple[str, str]:
    """CFA-Easy `text` is 'Q:<stem>,CHOICES: A: ...,B: ...,C: ...'; `query` adds an instruction line."""
    text = row.get("text")
    if isinstance(text, str) and text.strip():
        text = _clean(text)
    else:  # fall back to the prompt, minus its instruction line
        text = _field(row, "query", fail)
        if "\n" in text and not text.lstrip().startswith("Q:"):
            text = text.split("\n", 1)[1]
    text = _drop_answer_cue(text)
    parts = re.split(r"[,;]?\s*\bCHOICES\s*:", text, maxsplit=1)
    if len(parts) != 2:
        raise fail("no 'CHOICES:' marker: no answer choices found")
    stem = re.sub(r"^\s*Q\s*:\s*", "", parts[0]).strip().rstrip(",").strip()
    return stem, parts[1]


def _split_challenge(row: Mapping, fail) -> tuple[str, str]:
    """CFA-Challenge `query`: instruction line, 'Scenario: ...;', 'Question: ...;', 'Answer Choices: ...'."""
    query = _field(row, "query", fail)
    parts = re.split(r"\n\s*Answer Choices\s*:", query, maxsplit=1)
    if len(parts) != 2:
        raise fail("no 'Answer Choices:' marker: no answer choices found")
    body, block = parts
    # The template closes the last choice with '. \nAnswer:'; that period is not part of the choice.
    block = _drop_answer_cue(block).strip()
    block = block[:-1] if block.endswith(".") else block
    scenario_at = body.find("Scenario:")
    question_at = body.find("Question:", max(scenario_at, 0))
    if scenario_at < 0 and question_at < 0:  # no labels: everything after the instruction line
        stem = body.split("\n", 1)[1] if "\n" in body else body
        return stem.strip().rstrip(";").strip(), block
    pieces = []
    if scenario_at >= 0:
        scenario_end = question_at if question_at > scenario_at else len(body)
        scenario = body[scenario_at + len("Scenario:") : scenario_end].strip().rstrip(";").strip()
        if scenario:
            pieces.append(f"Scenario: {scenario}")
    if question_at >= 0:
        question = body[question_at + len("Question:") :].strip().rstrip(";").strip()
        if not question:
            raise fail("empty question stem ('Question:' is empty)")
        pieces.append(f"Question: {question}")
    return "\n\n".join(pieces), block


def parse_choices(block: str) -> dict[str, str]:
    """Split 'A: x,B: y,C: z' (also 'A. x', 'A) x', '(A) x', separated by commas or line breaks).

    The label style is taken from the first label and each next letter is searched only after the
    previous one, so commas, '$113,330.' and words like 'Portfolio B' inside a choice survive.
    """
    block = block.strip()
    first = re.match(r"\(?A\s*([:.)])", block)
    if not first:
        return {}
    punct = {":": r"\s*:", ".": r"\.", ")": r"\)"}[first.group(1)]
    starts: list[tuple[str, int, int]] = []  # (letter, label start, text start)
    position = 0
    for letter in _LETTERS:
        opener = r"\(?" if punct == r"\)" else ""
        boundary = r"^" if letter == "A" else r"(?:(?<=[,;\s])|(?<=[.]))"
        match = re.compile(rf"{boundary}{opener}{letter}{punct}\s*", re.M).search(block, position)
        if not match:
            break
        starts.append((letter, match.start(), match.end()))
        position = match.end()
    choices: dict[str, str] = {}
    for (letter, _, text_start), nxt in zip(starts, [*starts[1:], None], strict=True):
        text = block[text_start : nxt[1] if nxt else len(block)]
        text = re.sub(r"\s+", " ", text).strip()
        if nxt:  # drop the separator before the next label
            text = re.sub(r"\s*[,;]$", "", text).strip()
        choices[letter] = text
    return choices


def _normalise_letter(value: object) -> str:
    """'C', 'c', ' (C)', 'C.' -> 'C'; anything else is returned unchanged for the error message."""
    if not isinstance(value, str):
        return str(value)
    match = re.fullmatch(r"\s*\(?([A-Za-z])\)?\.?\s*", value)
    return match.group(1).upper() if match else value


def dataset_of(question_id: str) -> str | None:
    """The dataset a question id names ("easy_12" -> "easy"), or None for an id of no known dataset."""
    prefix = question_id.rpartition("_")[0]
    return prefix if prefix in DATASET_NAMES else None


def questions_by_id(name: str) -> dict[str, Question]:
    """Every question of a dataset by id, read once per process and datasets folder (callers must not
    change the dict): what re-grading, tables and the grade command look questions up in."""
    return _questions_by_id(name, datasets_dir())


@functools.cache
def _questions_by_id(name: str, directory: Path) -> dict[str, Question]:
    return {q.id: q for q in load_dataset(name)}
