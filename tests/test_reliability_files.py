"""Broken files fail loudly, naming the file; a results file is replaced atomically or not at all."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from reliability_plugin import FAKE_MODEL, ROOT, fake_server, first_error, papermill, run_env, wait_until
from reliability_report import record

from cfa_lib.data import DatasetError
from cfa_lib.experiments.loading import latest_runs, load_run
from cfa_lib.experiments.option_bias import OPTION_BIAS
from cfa_lib.experiments.registry import EXPERIMENTS
from cfa_lib.experiments.settings import Settings
from cfa_lib.models import get_client
from cfa_lib.results import ResultsFileError, write_json_atomic, write_results

REFERENCE = ROOT / "datasets" / "reference_runs" / "A5_option_bias_gpt-4o-mini.json"
EASY = ROOT / "datasets" / "FinEval" / "CFA_Easy.json"


def dataset_copy_with_bad_row(folder: Path, index: int = 3) -> Path:
    """CFA-Easy with row `index` answering a letter that is not among its choices."""
    rows = json.loads(EASY.read_text(encoding="utf-8"))
    rows[index]["answer"] = "Z"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "CFA_Easy.json").write_text(json.dumps(rows), encoding="utf-8")
    return folder / "CFA_Easy.json"


def garbage_cache(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "completions.sqlite").write_bytes(b"not a database, just bytes\n" * 200)
    return folder / "completions.sqlite"


# -- results files ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("damage", "fragment"), [
    (lambda text: text[: len(text) // 3], "is not valid JSON (corrupt or truncated?)"),
    (lambda text: "", "is not valid JSON"),
    (lambda text: "\udcff" + text, "is not valid JSON"),
    (lambda text: json.dumps({"metadata": [], "summary": {}, "results": []}), "'metadata' must be an object"),
    (lambda text: json.dumps({"metadata": {}, "summary": {}}), "is not a results file"),
    (lambda text: json.dumps({**json.loads(text), "results": [1, 2]}), "results row 0 is not an object"),
    (lambda text: json.dumps({**json.loads(text), "results": [{"question_id": "easy_0"}]}),
     "results row 0 lacks ['correct_with_options', 'correct_without_options', 'judge_verdict']"),
])
def test_a_damaged_results_file_is_rejected_by_name(tmp_path: Path, damage, fragment: str) -> None:
    path = tmp_path / "results.json"
    path.write_text(damage(REFERENCE.read_text(encoding="utf-8")), encoding="utf-8", errors="surrogateescape")
    with pytest.raises(ResultsFileError) as caught:
        load_run(OPTION_BIAS, path)
    assert str(path) in str(caught.value) and fragment in str(caught.value)


def test_the_reference_runs_still_load() -> None:
    for experiment in EXPERIMENTS.values():
        for path in (ROOT / "datasets" / "reference_runs").glob(f"{experiment.reference_prefix}*.json"):
            assert load_run(experiment, path).rows


def test_a_damaged_file_among_runs_is_skipped_with_a_warning_naming_it(tmp_path: Path) -> None:
    good = tmp_path / "option_bias" / "run1" / "results.json"
    bad = tmp_path / "option_bias" / "run2" / "results.json"
    good.parent.mkdir(parents=True)
    good.write_text(REFERENCE.read_text())
    bad.parent.mkdir(parents=True)
    bad.write_text(REFERENCE.read_text()[:500])
    with pytest.warns(UserWarning, match=str(bad)):
        assert latest_runs(OPTION_BIAS, tmp_path) == [good]


# -- dataset and cache files -----------------------------------------------------------------------------

def test_a_malformed_dataset_row_names_the_file_and_the_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    file = dataset_copy_with_bad_row(tmp_path / "data")
    monkeypatch.setenv("CFA_DATASETS_DIR", str(file.parent))
    with pytest.raises(DatasetError) as caught:
        Settings(model=FAKE_MODEL, limit=5).questions()
    assert str(file) in str(caught.value) and "row 3" in str(caught.value) and "'Z'" in str(caught.value)
    assert len(Settings(model=FAKE_MODEL, limit=3).questions()) == 3  # rows before it are fine


def test_a_cache_that_is_not_a_database_is_kept_aside_by_name(tmp_path: Path, caplog: pytest.LogCaptureFixture
                                                               ) -> None:
    file = garbage_cache(tmp_path / "cache")
    client = get_client(FAKE_MODEL, cache_dir=file.parent)  # a new cache beside the damaged one, kept as it was
    [kept] = [f for f in file.parent.glob("completions.sqlite.damaged-*") if not f.name.endswith(("-wal", "-shm"))]
    assert len(client.cache) == 0 and kept.read_bytes().startswith(b"not a database")
    assert f"completion cache {file} was damaged" in caplog.text and str(kept) in caplog.text


@pytest.mark.slow
def test_notebooks_stop_on_a_broken_dataset_and_salvage_a_broken_cache_naming_the_file(tmp_path: Path) -> None:
    bad_row = dataset_copy_with_bad_row(tmp_path / "data")
    bad_cache = garbage_cache(tmp_path / "badcache")
    with fake_server() as (url, app):
        envs = {"dataset": ("01_option_bias.ipynb", run_env(tmp_path / "a", url, CFA_DATASETS_DIR=str(bad_row.parent))),
                "cache": ("02_three_tier.ipynb", run_env(tmp_path / "b", url, cache=bad_cache.parent))}

        def run(name: str):
            notebook, env = envs[name]
            return papermill(notebook, tmp_path / f"{name}.ipynb", env, {"model": FAKE_MODEL, "limit": 5})

        with ThreadPoolExecutor(2) as pool:
            done = dict(zip(envs, pool.map(run, envs), strict=True))
    error = first_error(tmp_path / "dataset.ipynb")
    stopped = done["dataset"].returncode != 0 and error is not None and error[2].startswith("DatasetError")
    record("files/notebook-dataset", theme="Bad input", title="a broken dataset file stops the notebook",
           passed=stopped and str(bad_row) in error[2],
           figures={"exit code": done["dataset"].returncode, "message": error[2] if error else None})
    assert stopped and str(bad_row) in error[2], error
    executed = (tmp_path / "cache.ipynb").read_text(encoding="utf-8")
    kept = [f for f in bad_cache.parent.glob("completions.sqlite.damaged-*") if not f.name.endswith(("-wal", "-shm"))]
    salvaged = done["cache"].returncode == 0 and len(kept) == 1 and f"{bad_cache} was damaged" in executed
    record("files/notebook-cache", theme="Bad input", title="a broken cache file is kept aside, the notebook goes on",
           passed=salvaged, figures={"exit code": done["cache"].returncode, "kept aside": [f.name for f in kept]})
    assert salvaged, done["cache"].stderr[-2000:]


# -- atomic writes ---------------------------------------------------------------------------------------

def test_a_write_that_fails_midway_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CFA_RESULTS_DIR", str(tmp_path))
    good = {"metadata": {"experiment": "option_bias"}, "summary": {}, "results": [{"n": i} for i in range(50)]}
    path = write_results("option_bias", "run", good)
    before = path.read_bytes()
    broken = {**good, "results": [*good["results"], {"x": float("nan")}]}  # json refuses NaN at the very end
    with pytest.raises(ValueError):
        write_results("option_bias", "run", broken)
    assert path.read_bytes() == before
    assert [p.name for p in path.parent.iterdir()] == ["results.json"]  # no temporary file left behind
    record("files/atomic-exception", theme="Files", title="a write that raises midway leaves the old results file",
           passed=True, figures={"old file intact": True, "temporary files left": 0})


SLOW_WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from cfa_lib.results import write_json_atomic

    class SlowRows(list):
        def __iter__(self):
            for item in super().__iter__():
                time.sleep(0.01)
                yield item

    write_json_atomic({"results": SlowRows({"n": i, "pad": "x" * 200} for i in range(2000))}, Path(sys.argv[1]))
""")


def test_kill_9_during_a_write_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    write_json_atomic({"results": ["the good run"]}, path)
    before = path.read_bytes()
    writer = subprocess.Popen([sys.executable, "-c", SLOW_WRITER, str(path)], cwd=ROOT)
    try:
        temporary = lambda: [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # noqa: E731
        wait_until(lambda: any(p.stat().st_size > 20_000 for p in temporary()), "the writer to be halfway", 30)
        os.kill(writer.pid, signal.SIGKILL)
        assert writer.wait(10) == -signal.SIGKILL
    finally:
        if writer.poll() is None:
            writer.kill()
    half = temporary()[0].stat().st_size
    assert path.read_bytes() == before
    assert json.loads(path.read_text()) == {"results": ["the good run"]}
    record("files/atomic-kill", theme="Files", title="kill -9 during a results write leaves the old file",
           passed=True, figures={"bytes written before the kill": half, "old file intact": True})
