"""Grading accuracy on the hand-labelled corpus (tests/grading_corpus/) and grading speed on CFA-Easy.

Per class: rows, extraction accuracy (the value read equals the labelled value within 1e-6 relative, on
the rows that label a value; MCQ rows: the letter), verdict accuracy. Then the overall line, and the time
to grade 1,032 synthetic Easy responses twice: each question's correct option wrapped in a sentence with a
`FINAL ANSWER:` line, and the same without the line (the heuristic reader). Goals: >= 98 % verdict accuracy
overall, >= 95 % in every class, under 1 s for the 1,032 responses.

    PYTHONPATH=. .venv/bin/python benchmarks/grading.py
"""

from __future__ import annotations

import json
import math
import time
from collections import defaultdict
from pathlib import Path

from cfa_lib.answers import grade_choice, grade_open_answer
from cfa_lib.data import load_dataset

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "grading_corpus"


def corpus_rows() -> list[tuple[str, dict]]:
    return [(kind, json.loads(line)) for kind in ("open", "mcq")
            for line in (CORPUS / f"{kind}.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]


def value_matches(got, expected: float) -> bool:
    return got is not None and math.isclose(got.value, expected, rel_tol=1e-6, abs_tol=1e-9)


def accuracy_table() -> tuple[list[tuple[str, int, str, str]], float, dict[str, float]]:
    questions = {q.id: q for name in ("easy", "challenge") for q in load_dataset(name)}
    stats: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # n, verdict ok, n with value, value ok
    for kind, row in corpus_rows():
        question = questions[row["question_id"]]
        if kind == "open":
            grade = grade_open_answer(question, row["response"], row["finish_reason"])
            expected, got_ok = row["expected_value"], None
            if expected is not None:
                got_ok = value_matches(grade.value, expected)
        else:
            grade = grade_choice(question, row["response"], row["finish_reason"])
            expected = row["expected_letter"]
            got_ok = grade.letter == expected if expected is not None else None
        entry = stats[row["class"]]
        entry[0] += 1
        entry[1] += grade.verdict == row["expected_verdict"]
        if got_ok is not None:
            entry[2] += 1
            entry[3] += got_ok
    table = []
    for name, (n, ok, n_value, value_ok) in stats.items():
        extraction = f"{value_ok / n_value:.1%} ({value_ok}/{n_value})" if n_value else "–"
        table.append((name, n, extraction, f"{ok / n:.1%} ({ok}/{n})"))
    n_all = sum(s[0] for s in stats.values())
    ok_all = sum(s[1] for s in stats.values())
    per_class = {name: s[1] / s[0] for name, s in stats.items()}
    total_value = sum(s[2] for s in stats.values())
    value_ok_all = sum(s[3] for s in stats.values())
    table.append(("overall", n_all, f"{value_ok_all / total_value:.1%} ({value_ok_all}/{total_value})",
                  f"{ok_all / n_all:.1%} ({ok_all}/{n_all})"))
    return table, ok_all / n_all, per_class


def synthetic_responses(final_line: bool) -> list[tuple[object, str]]:
    responses = []
    for question in load_dataset("easy"):
        text = question.correct_text.rstrip(".")
        body = (f"Working through the problem step by step with the data given.\n\n"
                f"Putting the pieces together, the result is {text}.")
        responses.append((question, body + (f"\n\nFINAL ANSWER: {text}" if final_line else "")))
    return responses


def timed(responses) -> tuple[float, dict[str, int]]:
    counts: dict[str, int] = defaultdict(int)
    start = time.perf_counter()
    for question, response in responses:
        counts[grade_open_answer(question, response, "stop").verdict] += 1
    return time.perf_counter() - start, dict(counts)


def main() -> None:
    table, overall, per_class = accuracy_table()
    print(f"{'class':<24} {'n':>4}  {'extraction':>17}  {'verdict':>17}")
    for name, n, extraction, verdict in table:
        print(f"{name:<24} {n:>4}  {extraction:>17}  {verdict:>17}")
    worst = min(per_class, key=per_class.get)
    print(f"goal: overall >= 98 % ({'met' if overall >= 0.98 else 'NOT met'}), every class >= 95 % "
          f"({'met' if per_class[worst] >= 0.95 else 'NOT met'}; lowest {worst} {per_class[worst]:.1%})")
    timed(synthetic_responses(True)[:50])  # warm the regex caches
    for final_line in (True, False):
        responses = synthetic_responses(final_line)
        seconds, counts = timed(responses)
        label = "FINAL ANSWER line" if final_line else "heuristic reader"
        print(f"grading {len(responses)} Easy responses ({label}): {seconds:.3f} s "
              f"({'met' if seconds < 1 else 'NOT met'}: goal < 1 s); verdicts {counts}")


if __name__ == "__main__":
    main()
