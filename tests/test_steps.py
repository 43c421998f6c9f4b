"""Grading as declared steps (`cfa_lib.models.steps`): an experiment's grading is a function of replies. Driven
here by scripted replies, with no client, no session and no patched module: which steps it declares, of whom,
counted as what, and what the rows say given the replies."""

from __future__ import annotations

import json

from cfa_lib.data import questions_by_id
from cfa_lib.experiments.contract import Context
from cfa_lib.experiments.option_bias import OPTION_BIAS
from cfa_lib.experiments.settings import Settings
from cfa_lib.models import Ask, Completion, run_steps
from cfa_lib.perturbation import perturbation_steps

EASY = questions_by_id("easy")


def reply(text: str) -> Completion:
    return Completion(text, "scripted", finish_reason="stop")


def test_option_bias_declares_the_panel_then_its_calibration_and_a_yes_sayer_is_set_aside():
    """easy_0's key is words ("expected inflation."), so its open answer goes to the judge panel; easy_3's
    ($113,733) is decided by its number. A judge that calls every answer correct fails calibration on the key's
    distractors, so its verdict is set aside, not counted."""
    questions = [EASY["easy_0"], EASY["easy_3"]]
    settings = Settings(model="local", judge_model=["ollama/judge-x"], limit=2)
    answers = {("easy_0", "A"): reply(f"ANSWER: {EASY['easy_0'].answer}"),
               ("easy_0", "B"): reply("Expected inflation."),
               ("easy_3", "A"): reply(f"ANSWER: {EASY['easy_3'].answer}"),
               ("easy_3", "B"): reply("FINAL ANSWER: $113,733")}
    asked: list[Ask] = []

    def yes_to_all(ask: Ask) -> dict:
        asked.append(ask)
        return {key: {"ollama/judge-x": reply(json.dumps({"correct": True, "reasoning": "matches"}))}
                for key in ask.requests}

    graded = run_steps(OPTION_BIAS.grade(Context(settings, OPTION_BIAS.Options(), questions), answers), yes_to_all)
    assert [(a.desc, a.panel, a.counted_as) for a in asked] == [
        ("Judges", True, "judge"), ("Judge calibration", True, "judge calibration")]
    assert list(asked[0].requests) == ["easy_0"]
    calibration = graded.facts["judge_calibration"]
    assert not calibration.passed
    by_id = {row.question_id: row for row in graded.rows}
    assert by_id["easy_3"].correct_without_options is True  # the number decided it, no judge asked
    assert by_id["easy_0"].correct_without_options is None  # the uncalibrated judge's verdict set aside
    assert by_id["easy_0"].correct_with_options is True


def test_perturbations_a_generator_writes_are_two_steps_of_that_model_counted_as_the_generator():
    """Before, the generator's calls went to its client directly and were missing from the run's usage."""
    asked: list[Ask] = []

    def failing(ask: Ask) -> dict:
        asked.append(ask)
        return {key: Completion("", "scripted", error="down", error_kind="failed") for key in ask.requests}

    records = run_steps(perturbation_steps([EASY["easy_3"]], "ollama/writer", levels=(1,)), failing)
    assert [(a.desc, a.model, a.counted_as, len(a.requests)) for a in asked] == [
        ("Perturbation formulas", "ollama/writer", "generator", 1),
        ("Perturbation rewrites", "ollama/writer", "generator", 0)]
    assert [(r.question_id, r.level, r.valid) for r in records] == [("easy_3", 1, False)]


class Scripted:
    """A model passed in by name: every reply is `text`; its estimate counts what it is given."""

    def __init__(self, text: str) -> None:
        self.text, self.sent = text, 0

    def check(self) -> None:
        pass

    def estimate(self, requests: list) -> str:
        return f"{len(requests)} requests, free"

    def complete_many(self, requests: list, **_: object) -> list[Completion]:
        self.sent += len(requests)
        return [reply(self.text) for _ in requests]

    def engine_stats(self) -> dict:
        return {}


def test_the_estimate_counts_every_step_per_model_before_any_call(tmp_path, monkeypatch, capsys):
    """Option bias on two questions: the subject's 4 first requests exactly, and for the judge (another model)
    at most one verdict per open answer and the calibration items; the run then sends no more than that."""
    from cfa_lib.experiments.execute import run_or_load

    monkeypatch.setenv("CFA_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("CFA_CACHE_DIR", str(tmp_path / "cache"))
    subject, judge = Scripted("Expected inflation.\nANSWER: C"), Scripted('{"correct": true, "reasoning": "same"}')
    settings = Settings(model="ollama/subject-x", judge_model=["ollama/judge-x"], limit=2)
    items = 6  # calibration on the one question answerable without options: its 3 options, as written and reworded
    run_or_load(OPTION_BIAS, settings, clients={"ollama/subject-x": subject, "ollama/judge-x": judge})
    printed = capsys.readouterr().out.splitlines()
    assert printed[:2] == [
        "ollama/subject-x (subject 4): 4 requests, free",
        f"ollama/judge-x (at most: judge 2, judge calibration {items}): {2 + items} requests, free"]
    assert subject.sent == 4 and 0 < judge.sent <= 2 + items
