"""Two notebooks running at the same time share one completion cache: no "database is locked", no lost
entry (a rerun of both asks the server nothing), and no prompt paid for by both."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from reliability_plugin import (
    FAKE_MODEL,
    cache_figures,
    fake_server,
    papermill,
    results_file,
    run_env,
    server_figures,
)
from reliability_report import record

RUNS = {"01_option_bias.ipynb": "option_bias", "02_three_tier.ipynb": "three_tier"}
PARAMS = {"model": FAKE_MODEL, "judge_model": FAKE_MODEL, "limit": 10}


def both_at_once(tmp: Path, url: str, cache: Path, round_: str) -> dict[str, object]:
    def run(notebook: str):
        env = run_env(tmp / f"{round_}-{notebook[:2]}", url, cache=cache)
        return papermill(notebook, tmp / f"{round_}-{notebook}", env, PARAMS)

    with ThreadPoolExecutor(2) as pool:
        return dict(zip(RUNS, pool.map(run, RUNS), strict=True))


@pytest.mark.slow
def test_two_notebooks_at_once_share_the_cache(tmp_path: Path) -> None:
    cache = tmp_path / "shared-cache"
    with fake_server(delay_s=0.05) as (url, app):  # slow answers keep both runs writing at the same time
        first = both_at_once(tmp_path, url, cache, "first")
        after_first = app.stats()
        again = both_at_once(tmp_path, url, cache, "again")
        after_again = app.stats()

    texts = [d.stdout + d.stderr for d in (*first.values(), *again.values())]
    texts += [p.read_text() for p in tmp_path.glob("*.ipynb")]
    locked = sum(t.count("database is locked") for t in texts)
    usages = [json.loads(results_file(tmp_path / f"again-{nb[:2]}" / "results", exp).read_text())["summary"]["usage"]
              for nb, exp in RUNS.items()]
    calls = sum(u["n_calls"] for usage in usages for u in usage.values())
    hits = sum(u["cache_hits"] for usage in usages for u in usage.values())
    figures = {
        "runs at once": 2,
        "requests": after_first["requests"],
        "cache entries": cache_figures(cache)["cache_entries"],
        # both notebooks ask the same open-answer prompts at the same moment: a claim in the cache makes the
        # second run wait for the first one's answer instead of paying for it again
        "same prompt paid by both runs at once": server_figures(after_first)["duplicates_paid"],
        "'database is locked' errors": locked,
        "requests of the rerun of both": after_again["requests"] - after_first["requests"],
        "rerun served from the cache": f"{hits} of {calls}",
        "cache integrity ok": cache_figures(cache)["cache_integrity_ok"],
    }
    passed = (all(d.returncode == 0 for d in (*first.values(), *again.values())) and locked == 0
              and figures["requests of the rerun of both"] == 0 and hits == calls
              and figures["same prompt paid by both runs at once"] == 0)
    record("concurrency/shared-cache", theme="Faults during a run",
           title="notebooks 01 and 02 at the same time on one cache", passed=passed, figures=figures)

    for completed in (*first.values(), *again.values()):
        assert completed.returncode == 0, completed.stderr[-3000:]
    assert locked == 0
    assert figures["cache integrity ok"]
    assert figures["requests of the rerun of both"] == 0  # nothing the first round paid for was lost
    assert hits == calls > 0
    assert figures["same prompt paid by both runs at once"] == 0
