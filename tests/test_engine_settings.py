"""One resolution order for every engine setting: the argument given, else the CFA_* variable, else the
default; a notebook parameter left at its default (None) counts as not given.

The end-to-end test runs notebook 01 with CFA_BATCH=1 against tests/servers/fake_batch.py, a loopback
server that speaks OpenAI's documented Files and Batches wire format (OpenAI itself cannot be reached
from here), driven by the official `openai` client."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.servers under any pytest import mode
from cfa_lib.experiments.settings import Settings  # noqa: E402
from cfa_lib.models import get_client  # noqa: E402
from cfa_lib.params import ParameterError  # noqa: E402
from tests.servers.fake_batch import start_fake_batch  # noqa: E402
from tests.servers.fake_openai import FaultConfig  # noqa: E402
from tests.test_notebooks import papermill  # noqa: E402


@pytest.fixture(autouse=True)
def no_engine_variables(monkeypatch) -> None:
    for name in ("CFA_BATCH", "CFA_MAX_CONCURRENCY", "CFA_MAX_COST_USD", "CFA_RETRY_FAILED", "CFA_BATCH_FALLBACK"):
        monkeypatch.delenv(name, raising=False)


def test_settings_left_at_their_defaults_let_the_environment_decide(monkeypatch) -> None:
    monkeypatch.setenv("CFA_BATCH", "1")
    monkeypatch.setenv("CFA_MAX_CONCURRENCY", "7")
    monkeypatch.setenv("CFA_MAX_COST_USD", "2.5")
    resolved = Settings().engine()
    assert (resolved.batch, resolved.max_concurrency, resolved.max_cost_usd) == (True, 7, 2.5)


def test_an_argument_given_wins_over_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("CFA_BATCH", "1")
    monkeypatch.setenv("CFA_MAX_CONCURRENCY", "7")
    resolved = Settings(batch=False, max_concurrency=3).engine()
    assert (resolved.batch, resolved.max_concurrency) == (False, 3)
    client = get_client("gpt-4o-mini", base_url="http://127.0.0.1:9/v1", max_concurrency=5)
    assert client.options().max_concurrency == 5  # get_client's argument over CFA_MAX_CONCURRENCY
    assert client.options(max_concurrency=2).max_concurrency == 2  # the call's argument over get_client's


def test_nothing_given_and_no_variable_gives_the_defaults() -> None:
    resolved = Settings().engine()
    assert (resolved.batch, resolved.max_concurrency, resolved.max_cost_usd, resolved.retry_failed) == \
        (False, 64, None, False)


def test_one_check_and_one_sentence_for_a_bad_engine_setting(monkeypatch) -> None:
    with pytest.raises(ParameterError, match=r"Parameter max_concurrency=0 is not valid: accepted values are "
                                             r"None or a positive integer"):
        Settings(max_concurrency=0)
    with pytest.raises(ValueError, match=r"Parameter max_concurrency=0 is not valid: accepted values are "
                                         r"None or a positive integer"):
        get_client("local").options(max_concurrency=0)
    with pytest.raises(ParameterError, match=r"Parameter batch='yes' is not valid"):
        Settings(batch="yes")
    monkeypatch.setenv("CFA_MAX_CONCURRENCY", "-1")
    with pytest.raises(ValueError, match="CFA_MAX_CONCURRENCY='-1' is not valid"):
        Settings().engine()


@pytest.mark.slow
def test_a_notebook_run_with_cfa_batch_goes_through_the_batch_api(tmp_path: Path) -> None:
    server, app = start_fake_batch(FaultConfig(delay_s=0.01))
    try:
        env = {k: v for k, v in os.environ.items() if "KEY" not in k.upper()}
        env.update(OPENAI_BASE_URL=f"{server.url}/v1", OPENAI_API_KEY="sk-test", CFA_BATCH="1",
                   CFA_BATCH_POLL_S="0.1", CFA_CACHE_DIR=str(tmp_path / "cache"),
                   CFA_RESULTS_DIR=str(tmp_path / "results"))
        done = papermill("01_option_bias.ipynb", tmp_path / "01.ipynb", env, "model=gpt-4o-mini", "limit=2",
                         "variants=[]")
        assert done.returncode == 0, done.stderr[-3000:]
        stats = app.stats()
    finally:
        server.stop()
    assert stats["batches_created"] >= 1 and stats["requests"] == 0  # every answer came through a batch
    results = next((tmp_path / "results").glob("option_bias/*/results.json"))
    meta = json.loads(results.read_text())["metadata"]
    assert meta["batch"] is True and meta["engine"]["subject"]["batch_ids"]
