"""The confidence-calibration experiment: its statistics on known values, its two turns on a scripted model
passed in (no module patched), its file read back by the registry, and a run on the embedded model."""

from __future__ import annotations

import numpy as np
import pytest

from cfa_lib.data import load_dataset
from cfa_lib.experiments.confidence import (
    CONFIDENCE,
    CONFIDENCE_FOLLOW_UP,
    Row,
    calibration_bins,
    expected_calibration_error,
    row_of,
    summarize,
)
from cfa_lib.experiments.execute import run_or_load
from cfa_lib.experiments.registry import load_results
from cfa_lib.experiments.settings import Settings
from cfa_lib.models import Completion, Request
from cfa_lib.params import ParameterError


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("CFA_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("CFA_CACHE_DIR", str(tmp_path / "cache"))


def test_ece_and_brier_on_known_values():
    # two answers at 90 % (one right), two at 20 % (both wrong): gaps 0.4 and 0.2, each half of the answers
    confidence, correct = np.array([0.9, 0.9, 0.2, 0.2]), np.array([1.0, 0.0, 0.0, 0.0])
    assert expected_calibration_error(confidence, correct, 10) == pytest.approx(0.3)
    rows = [Row(f"easy_{i}", "correct" if c else "incorrect", letter="A", confidence=int(p * 100))
            for i, (p, c) in enumerate(zip(confidence, correct, strict=True))]
    summary = summarize(rows, 10)
    assert summary.brier_score == pytest.approx((0.1**2 + 0.9**2 + 0.2**2 + 0.2**2) / 4)  # 0.225
    assert summary.accuracy == 0.25 and summary.mean_confidence == pytest.approx(0.55)
    assert summary.overconfidence == pytest.approx(0.30)
    assert summary.ece_ci is None  # 4 graded questions: no interval printed


def test_a_confidence_of_100_falls_in_the_last_bin_and_0_in_the_first():
    bins = calibration_bins(np.array([0.0, 1.0, 1.0]), np.array([0.0, 1.0, 1.0]), 5)
    assert [b.n for b in bins] == [1, 0, 0, 0, 2]
    assert (bins[-1].lower, bins[-1].upper, bins[-1].accuracy) == (0.8, 1.0, 1.0)


def test_the_interval_is_printed_from_20_questions_and_covers_the_estimate():
    rng = np.random.default_rng(1)
    rows = [Row(f"easy_{i}", "correct" if rng.random() < 0.6 else "incorrect", letter="A",
                confidence=int(rng.integers(50, 100))) for i in range(40)]
    summary = summarize(rows, 10)
    low, high = summary.ece_ci
    assert low <= summary.ece <= high and 0 <= low < high <= 1


def test_a_confidence_not_in_the_asked_form_is_excluded_with_the_reason():
    question = load_dataset("easy", limit=1)[0]  # key C
    answer = Completion(text="The price rises.\nANSWER: C", model="m", finish_reason="stop")
    row = row_of(question, answer, Completion(text="I am fairly sure.", model="m", finish_reason="stop"))
    assert (row.status, row.excluded, row.letter, row.confidence) == ("excluded", "unreadable", "C", None)
    assert row.reason.startswith("subject reply does not fit StatedConfidence: reply: Invalid JSON")
    too_high = row_of(question, answer, Completion(text='{"confidence": 150}', model="m", finish_reason="stop"))
    assert too_high.excluded == "unreadable" and "less than or equal to 100" in too_high.reason
    failed = row_of(question, Completion(text="", model="m", error="HTTP 500", error_kind="server"), None)
    assert (failed.status, failed.excluded) == ("excluded", "failed")
    stated = row_of(question, answer, Completion(text='{"confidence": 85}', model="m", finish_reason="stop"))
    assert (stated.status, stated.letter, stated.confidence) == ("correct", "C", 85)


def test_bins_is_checked_with_one_sentence():
    with pytest.raises(ParameterError, match=r"bins=1 is not valid: accepted values are a whole number from 2"):
        CONFIDENCE.Options(bins=1)


class ScriptedModel:
    """Answers C, then states 80 % confidence; records the requests it was sent."""

    def __init__(self, name: str = "scripted") -> None:
        self.name, self.sent = name, []

    def check(self) -> None:
        pass

    def estimate(self, requests: list[Request]) -> str:
        return f"{len(requests)} requests, free"

    def complete_many(self, requests: list[Request], **_: object) -> list[Completion]:
        self.sent += requests
        return [self._reply(r) for r in requests]

    @staticmethod
    def _reply(request: Request) -> Completion:
        if request.messages[-1]["content"] == CONFIDENCE_FOLLOW_UP:
            return Completion(text='{"confidence": 80}', model="scripted", finish_reason="stop")
        return Completion(text="Reasoning.\nANSWER: C", model="scripted", finish_reason="stop")

    def engine_stats(self) -> dict:
        return {}


def test_two_turns_on_a_scripted_model_passed_in(capsys):
    model = ScriptedModel()
    run = run_or_load(CONFIDENCE, Settings(model="gpt-4o-mini", limit=4), clients={"gpt-4o-mini": model},
                      bins=5)
    assert "8 requests, free" in capsys.readouterr().out  # the estimate counts both turns
    follow_ups = [r for r in model.sent if r.messages[-1]["content"] == CONFIDENCE_FOLLOW_UP]
    assert len(follow_ups) == 4 and follow_ups[0].messages[-2] == {"role": "assistant",
                                                                   "content": "Reasoning.\nANSWER: C"}
    # keys C, C, A, C: three right at 80 %, one wrong at 80 %
    s = run.summary
    assert (s.n_graded, s.accuracy, s.mean_confidence) == (4, 0.75, pytest.approx(0.8))
    assert s.brier_score == pytest.approx((3 * 0.2**2 + 0.8**2) / 4)  # 0.19
    assert s.ece == pytest.approx(0.05) and [b.n for b in s.bins] == [0, 0, 0, 0, 4]
    again = load_results(run.path)  # the registry finds the experiment by the file's name
    assert again.summary.to_dict() == s.to_dict() and again.metadata["bins"] == 5
    assert run.metadata["prompt_version"] == CONFIDENCE.prompt_version != ""
    assert [sample.outcome.status for sample in again.samples()] == ["correct", "correct", "incorrect", "correct"]


@pytest.mark.slow
def test_the_embedded_model_states_a_confidence():
    run = run_or_load(CONFIDENCE, Settings(model="local", limit=2))
    assert run.summary.n_questions == 2
    assert run.file_summary["usage"]["subject"]["n_calls"] >= 2
    assert all(r.status == "excluded" or 0 <= r.confidence <= 100 for r in run.rows)
