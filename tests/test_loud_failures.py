"""Failures a user sees in one sentence, with a non-zero exit: a run whose every request failed, a kernel that
died (which notebook, which model, its last words, the likely cause), an unknown model name, a bad parameter."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from reliability_plugin import FAKE_MODEL, ROOT, fake_server, first_error, papermill, run_env

from cfa_lib.models import Request, RunFailedError, get_client
from cfa_lib.models.keyed import complete_keyed
from cfa_lib.publishing import pipeline

ALWAYS_500 = {"rate": 1.0, "kinds": ("500",), "max_faults_per_prompt": 10**6}  # lists its models, answers nothing


def test_a_batch_whose_every_request_failed_raises_with_the_count_and_the_first_error(tmp_path: Path) -> None:
    with fake_server(**ALWAYS_500) as (url, _):
        client = get_client(FAKE_MODEL, base_url=url, cache_dir=tmp_path, max_attempts=1)
        client.check()  # the server is up: GET /models answers
        requests = {("easy_3", "format_a"): Request([{"role": "user", "content": "Q1"}]),
                    ("easy_4", "format_a"): Request([{"role": "user", "content": "Q2"}])}
        with pytest.raises(RunFailedError) as caught:
            complete_keyed(client, requests, desc="Format A", progress=False)
    message = str(caught.value)
    assert message.startswith(f"all 2 requests to {FAKE_MODEL} failed (Format A); the first error: ")
    assert "HTTP 500" in message and "No results file was written" in message


@pytest.mark.slow
def test_the_pipeline_exits_non_zero_when_every_request_failed(tmp_path: Path) -> None:
    with fake_server(**ALWAYS_500) as (url, _):
        env = run_env(tmp_path, url, CFA_MAX_ATTEMPTS="1")
        done = subprocess.run(
            [sys.executable, "-m", "cfa_lib.publishing.pipeline", "--models", FAKE_MODEL, "--limit", "2", "--jobs", "1",
             "--no-reference", "--book-root", str(tmp_path / "book"), "--results-dir", str(tmp_path / "results")],
            env=env, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 1, done.stderr[-2000:]
    error = done.stderr.strip().splitlines()
    assert error[0].startswith(f"error: 01_option_bias.ipynb ({FAKE_MODEL}) failed in cell ")
    # 2 questions, each asked with and without its options: the 4 requests of notebook 01's first batch
    expected = rf"RunFailedError: all 4 requests to {FAKE_MODEL} failed \(Option bias\); the first error: .*HTTP 500"
    assert re.search(expected, error[0]), error[0]
    assert "Traceback" not in done.stderr
    assert not list((tmp_path / "results").rglob("results.json"))  # no file with 0 paired questions


def crashing_notebook(folder: Path, module: str) -> Path:
    """A notebook whose second cell dies of a segmentation fault inside `module` (a file of that name)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{module}.py").write_text("import ctypes\n\ndef complete():\n    ctypes.string_at(0)\n")
    cells = [f"import sys\nsys.path.insert(0, {str(folder)!r})\nimport {module}", f"{module}.complete()"]
    nb = {"cells": [{"cell_type": "code", "metadata": {}, "source": c, "outputs": [], "execution_count": None}
                    for c in cells],
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    path = folder / "02_three_tier.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize(("module", "cause"), [
    ("llama", "the embedded model's engine (llama.cpp) crashed"),
    ("pricing", "a crash in compiled code"),
])
def test_a_dead_kernel_names_the_notebook_the_model_its_last_words_and_the_cause(tmp_path: Path, module: str,
                                                                                cause: str) -> None:
    pipeline.use_this_python_as_kernel()
    job = pipeline.Job(crashing_notebook(tmp_path / "nb", module), tmp_path / "out" / "02_three_tier.ipynb",
                       {}, "local")
    with pytest.raises(pipeline.PipelineError) as caught:
        pipeline.run_job(job)
    message = str(caught.value)
    assert message.startswith("02_three_tier.ipynb (local): the notebook's kernel died; likely cause: " + cause)
    assert "Fatal Python error: Segmentation fault" in message and f"{module}.py" in message
    assert str(tmp_path / "out" / "02_three_tier.ipynb") in message


def test_an_unknown_model_name_stops_the_pipeline_in_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    assert pipeline.main(["--models", "local lokal"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --models: unknown model name 'lokal'") and "'local'" in err[0]


@pytest.mark.slow
def test_a_bad_notebook_parameter_is_one_sentence_not_a_traceback(tmp_path: Path) -> None:
    done = papermill("01_option_bias.ipynb", tmp_path / "out.ipynb", run_env(tmp_path), {"model": "lokal"})
    assert done.returncode != 0
    _, _, error = first_error(tmp_path / "out.ipynb")
    assert error.startswith("ParameterError: Parameter model='lokal' is not valid: unknown model name 'lokal'")
    executed = json.loads((tmp_path / "out.ipynb").read_text(encoding="utf-8"))
    [output] = [o for c in executed["cells"] for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert output["traceback"] == [error]  # the sentence, not a screen of frames above it
    assert done.stderr.strip().splitlines()[-1] == error


def test_the_likely_cause_of_a_silent_death_is_named() -> None:
    job = pipeline.Job(Path("notebooks/03_counterfactual.ipynb"), Path("build/x.ipynb"), {}, "gpt-4o-mini")
    message = pipeline.dead_kernel(job, Path("/nonexistent.log"))
    assert "03_counterfactual.ipynb (gpt-4o-mini): the notebook's kernel died" in message
    assert "ran out of memory" in message and "(it wrote nothing)" in message


@pytest.mark.parametrize(("deaths", "runs", "raises"), [(1, 2, False), (2, 2, True)])
def test_a_kernel_that_died_before_its_first_reply_is_started_once_more(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, deaths: int, runs: int, raises: bool) -> None:
    """jupyter_client's own error for a kernel lost at start (no cell ran): one more start, then the error."""
    import papermill

    calls = []

    def execute_notebook(*args: object, **kwargs: object) -> None:
        calls.append(args)
        if len(calls) <= deaths:
            raise RuntimeError("Kernel died before replying to kernel_info")

    monkeypatch.setattr(papermill, "execute_notebook", execute_notebook)
    notebook = tmp_path / "01_option_bias.ipynb"
    notebook.write_text("{}")
    job = pipeline.Job(notebook, tmp_path / "out" / "01_option_bias.ipynb", {}, "local")
    if raises:
        with pytest.raises(RuntimeError, match="before replying to kernel_info"):
            pipeline.run_job(job)
    else:
        pipeline.run_job(job)
    assert len(calls) == runs


def test_a_kernel_that_died_in_a_cell_is_not_started_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import papermill
    from nbclient.exceptions import DeadKernelError

    calls = []

    def execute_notebook(*args: object, **kwargs: object) -> None:
        calls.append(args)
        raise DeadKernelError("Kernel died")

    monkeypatch.setattr(papermill, "execute_notebook", execute_notebook)
    notebook = tmp_path / "02_three_tier.ipynb"
    notebook.write_text("{}")
    with pytest.raises(pipeline.PipelineError, match="kernel died"):
        pipeline.run_job(pipeline.Job(notebook, tmp_path / "out" / "02_three_tier.ipynb", {}, "local"))
    assert len(calls) == 1
