"""Bad notebook parameters fail in the first cell that uses them, with one sentence naming the parameter,
the bad value and the accepted values, before any model call (a fake server counts the calls)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from reliability_plugin import FAKE_MODEL, ROOT, fake_server, first_error, papermill, run_env
from reliability_report import record

from cfa_lib import params
from cfa_lib.experiments.execute import run_or_load
from cfa_lib.experiments.registry import EXPERIMENTS
from cfa_lib.experiments.settings import Settings

REFERENCE = ROOT / "datasets" / "reference_runs"
NOTEBOOK = {"01": "01_option_bias.ipynb", "02": "02_three_tier.ipynb", "03": "03_counterfactual.ipynb"}


@dataclass(frozen=True)
class Case:
    """One bad value; "{tmp}" in a value or fragment is the run's temporary folder."""

    notebook: str
    name: str
    params: dict[str, Any]
    expected: tuple[str, ...]  # fragments of the one-sentence message
    yaml: str | None = None

    @property
    def id(self) -> str:
        return f"{self.notebook}-{self.name}"

    def resolved(self, tmp: Path) -> tuple[dict[str, Any], tuple[str, ...]]:
        fill = {"tmp": str(tmp)}
        return ({k: str(v).format(**fill) for k, v in self.params.items()},
                tuple(f.format(**fill) for f in self.expected))


FAKE = {"model": FAKE_MODEL}
ANY_MODEL = "accepted forms: 'local'"
THREE_TIER_FILE = REFERENCE / "A1_open_ended_gpt-4o-mini.json"
CASES = [
    Case("01", "unknown-model", {"model": "claude-3-opus"},
         ("Parameter model='claude-3-opus' is not valid", ANY_MODEL)),
    Case("01", "limit-zero", {**FAKE, "limit": 0},
         ("Parameter limit=0 is not valid: accepted values are a positive integer",)),
    Case("01", "tolerance-zero", {**FAKE, "tolerance": 0},
         ("Parameter tolerance=0 is not valid: accepted values are a relative tolerance above 0",)),
    Case("01", "results-of-another-experiment", {**FAKE, "results_path": THREE_TIER_FILE},
         (f"Parameter results_path='{THREE_TIER_FILE}' is not valid", "holds experiment 'A1_open_ended'",
          "accepted values are None (run the experiment) or the path of a results.json of experiment "
          "'option_bias'")),
    Case("02", "limit-not-a-number", {**FAKE, "limit": "ten"},
         ("Parameter limit='ten' is not valid: accepted values are a positive",)),
    Case("02", "unknown-dataset", {**FAKE, "dataset": "medium"},
         ("Parameter dataset='medium' is not valid: accepted values are 'easy' or 'challenge'.",)),
    Case("02", "tolerance-negative", {**FAKE, "tolerance": -0.5},
         ("Parameter tolerance=-0.5 is not valid: accepted values are",)),
    Case("02", "results-missing", {**FAKE, "results_path": "{tmp}/no_such_run/results.json"},
         ("Parameter results_path='{tmp}/no_such_run/results.json' is not valid", "does not exist",
          "of experiment 'three_tier'")),
    Case("03", "unknown-level", {**FAKE}, ("Parameter perturbation_levels=[4] is not valid: accepted values are a "
                                           "non-empty list drawn from [1, 2, 3]",), yaml="perturbation_levels: [4]"),
    Case("03", "limit-fraction", {**FAKE, "limit": 2.5}, ("Parameter limit=2.5 is not valid",)),
    Case("03", "unknown-generator", {**FAKE, "generator_model": "claude"},
         ("Parameter generator_model='claude' is not valid",)),
    Case("03", "results-truncated", {**FAKE, "results_path": "{tmp}/truncated/results.json"},
         ("Parameter results_path='{tmp}/truncated/results.json' is not valid",
          "not valid JSON (corrupt or truncated?)")),
]


def write_truncated_results(tmp: Path) -> None:
    """Half of a real counterfactual results file, as a crash of a non-atomic writer would leave it."""
    target = tmp / "truncated" / "results.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    text = (REFERENCE / "I1_counterfactual_gpt-4o-mini.json").read_text()
    target.write_text(text[: len(text) // 2])


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every case through papermill, three at a time, against one fake server that must see no call."""
    tmp = tmp_path_factory.mktemp("bad-params")
    write_truncated_results(tmp)
    with fake_server() as (url, app):
        def run(number: int, case: Case) -> tuple[Any, Path, tuple[str, ...]]:
            values, expected = case.resolved(tmp)
            out = tmp / f"case{number}.ipynb"
            done = papermill(NOTEBOOK[case.notebook], out, run_env(tmp / f"case{number}", url), values, case.yaml)
            return done, out, expected

        with ThreadPoolExecutor(max_workers=3) as pool:
            runs = dict(zip((c.id for c in CASES), pool.map(run, range(len(CASES)), CASES), strict=True))
        stats = app.stats()
    return {"runs": runs, "server": stats}


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_parameter_fails_in_the_first_cell_that_uses_it(executed: dict[str, Any], case: Case) -> None:
    done, out, expected = executed["runs"][case.id]
    error = first_error(out)
    message = error[2] if error else ""
    passed = (done.returncode != 0 and error is not None and "Settings(" in error[1]
              and message.startswith("ParameterError: ") and all(f in message for f in expected))
    record(f"params/{case.id}", theme="Bad input", title=f"notebook {case.notebook}: {case.name.replace('-', ' ')}",
           passed=passed, figures={"exit code": done.returncode, "message": message.removeprefix("ParameterError: "),
                                   "model calls": 0})
    assert done.returncode != 0
    assert error is not None, done.stderr[-2000:]
    index, source, message = error
    assert "Settings(" in source, f"failed in cell {index}, not the run cell: {message}"
    assert message.startswith("ParameterError: "), message
    for fragment in expected:
        assert fragment in message
        assert fragment in done.stderr  # what the researcher sees in the terminal
    assert message.count(". ") == 0 or "accepted forms" in message, f"more than one sentence: {message}"


@pytest.mark.slow
def test_no_bad_parameter_reaches_the_model_server(executed: dict[str, Any]) -> None:
    assert executed["server"]["requests"] == 0


@pytest.mark.parametrize(("make", "fragment"), [
    (lambda: Settings(limit=True), "Parameter limit=True is not valid"),
    (lambda: Settings(limit="5"), "Parameter limit='5' is not valid"),
    (lambda: Settings(tolerance=1.5), "Parameter tolerance=1.5 is not valid"),
    (lambda: Settings(tolerance=float("nan")), "Parameter tolerance=nan is not valid"),
    (lambda: Settings(sample_seed="x"), "Parameter sample_seed='x' is not valid"),
    (lambda: Settings(max_concurrency=0), "Parameter max_concurrency=0 is not valid"),
    (lambda: Settings(model=""), "Parameter model='' is not valid"),
    (lambda: Settings(retry_failed="yes"), "Parameter retry_failed='yes' is not valid"),
    (lambda: params.check_levels([]), "Parameter perturbation_levels=[] is not valid"),
    (lambda: params.check_levels([1, 1.0]), "Parameter perturbation_levels=[1, 1.0] is not valid"),
    (lambda: params.check_levels([True]), "Parameter perturbation_levels=[True] is not valid"),
    (lambda: params.check_results_path("", "option_bias"), "Parameter results_path='' is not valid"),
])
def test_parameter_checks_name_the_parameter_and_value(make, fragment: str) -> None:
    with pytest.raises(params.ParameterError) as caught:
        make()
    assert str(caught.value).startswith(fragment)
    assert "accepted" in str(caught.value)


def test_a_bare_level_is_accepted_as_a_list() -> None:
    assert params.check_levels(2) == [2]
    assert params.check_levels((3, 1, 3)) == [1, 3]


@pytest.mark.parametrize(("experiment", "settings", "options", "fragment"), [
    ("option_bias", {"judge_model": "gpt4"}, {}, "Parameter judge_model='gpt4' is not valid"),
    ("option_bias", {"dataset": "Easy"}, {}, "Parameter dataset='Easy' is not valid"),
    ("three_tier", {}, {"gold_model": "my model"}, "Parameter gold_model='my model' is not valid"),
    ("counterfactual", {}, {"perturbation_levels": "1 and 2"}, "Parameter perturbation_levels='1 and 2' is not valid"),
    ("counterfactual", {}, {"generator_model": "claude"}, "Parameter generator_model='claude' is not valid"),
    ("counterfactual", {"limit": -3}, {}, "Parameter limit=-3 is not valid"),
    ("counterfactual", {"model": "gpt4"}, {}, "Parameter model='gpt4' is not valid"),
])
def test_the_run_cell_rejects_before_the_estimate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, experiment: str,
                                                  settings: dict[str, Any], options: dict[str, Any],
                                                  fragment: str) -> None:
    """The notebooks' run cell, in-process: nothing is estimated, asked or written for a bad value."""
    monkeypatch.setenv("CFA_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("CFA_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(params.ParameterError) as caught:
        run_or_load(EXPERIMENTS[experiment], Settings(**{"model": FAKE_MODEL, **settings}), None, **options)
    assert str(caught.value).startswith(fragment)
    assert not (tmp_path / "results").exists() and not (tmp_path / "cache").exists()
