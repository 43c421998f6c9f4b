"""The `model` parameter's route, from the notebook's settings to the HTTP call, enters each module once.

The subject's name is read once (`params.parse_model` -> `names.parse_model_name`, which also reads the models
file), and what follows is handed the parsed `ModelSpec`: the client factory, the backend, the client, the
estimate, the default judges. The route is recorded by a profiler: every call into `cfa_lib` whose arguments
carry the name or its `ModelSpec`, over one run of the confidence experiment against a loopback server speaking
OpenAI's wire format (tests/servers/fake_openai.py; no OpenAI server can be reached here), driven by the
official `openai` client.
"""

from __future__ import annotations

import sys
from itertools import groupby
from pathlib import Path

import pytest

from cfa_lib.experiments.confidence import CONFIDENCE
from cfa_lib.experiments.execute import run_or_load
from cfa_lib.experiments.settings import Settings
from cfa_lib.models.names import ModelSpec
from tests.servers import fake_openai
from tests.servers.fake_openai import FaultConfig, start_fake_openai

NAME = "openai/fake-model"


def modules_entered(run) -> list[str]:
    """The cfa_lib modules of the calls whose arguments (not `self`) carry NAME or a ModelSpec, in order, each
    stay in one module counted once."""
    route: list[str] = []

    def carries(value: object) -> bool:
        return value == NAME or isinstance(value, ModelSpec)

    def profile(frame, event, _arg) -> None:
        code = frame.f_code
        if event != "call" or "/cfa_lib/" not in code.co_filename:
            return
        names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        if any(carries(frame.f_locals.get(n)) for n in names if n != "self"):
            route.append(code.co_filename.split("/cfa_lib/")[1])

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return [module for module, _ in groupby(route)]


def test_the_model_name_is_read_once_and_each_module_on_its_route_is_entered_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server, app = start_fake_openai(FaultConfig())
    # a reply with a letter: one without (the server's echo) is excluded as undecided and never followed up
    monkeypatch.setattr(fake_openai, "expected_answer", lambda messages: "ANSWER: A")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    monkeypatch.setenv("CFA_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("CFA_CACHE_DIR", str(tmp_path / "cache"))
    try:
        route = modules_entered(lambda: run_or_load(CONFIDENCE, Settings(model=NAME, limit=1)))
        requests = app.stats()["requests"]
    finally:
        server.stop()
    assert requests == 2  # the answer and the confidence follow-up reached the server
    assert route[:5] == ["params.py", "models/names.py", "models/fleet.py", "models/factory.py",
                         "models/openai_backend.py"]
    assert "experiments/judging.py" in route  # the default judge, made from the parsed name
    assert len(route) == len(set(route)), route  # no module entered twice
