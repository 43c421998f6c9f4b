"""Small results files for the review tests: real question ids, verdicts chosen so every figure is known."""

from __future__ import annotations

import json
from pathlib import Path

# Ten open answers: the first six judged correct, the last four judged incorrect (the study's spelling).
JUDGE = ["CORRECT"] * 6 + ["INCORRECT"] * 4
LONG = "Step 1: the nominal rate adds expected inflation to the real rate. " * 12 + "FINAL ANSWER: expected inflation"


def option_bias_file(directory: Path, ours: bool = False, verdicts: list[str] = JUDGE) -> Path:
    """An option-bias file of ten judged open answers (the study's format, or ours with whole responses)."""
    rows = []
    for i, verdict in enumerate(verdicts):
        row = {"question_id": f"easy_{i}", "correct_answer": "C", "correct_with_options": True, "answer_with": "C",
               "correct_without_options": verdict == "CORRECT", "judge_verdict": verdict,
               "answer_without": f"Answer {i}: the rate is {i + 1}.0%.", "option_biased": verdict != "CORRECT"}
        if ours:
            row.update(judge_verdict=f"JUDGE_{verdict}", answer_without=None, response_without=f"{i}. {LONG}",
                       open_status="answered", answer_source=None, judge_reasoning="matches the option")
        rows.append(row)
    metadata = {"experiment": "option_bias" if ours else "A5_option_bias", "model": "test-model", "dataset": "easy",
                "n_questions": len(rows)}
    if ours:
        metadata["prompt_version"] = "test"
    path = directory / ("results.json" if ours else "A5_option_bias_test.json")
    path.write_text(json.dumps({"metadata": metadata, "summary": {}, "results": rows}), encoding="utf-8")
    return path
