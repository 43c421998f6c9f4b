"""Shared helpers of the reliability tests: notebooks under papermill against the loopback fake server.

Plain functions and context managers (no fixtures), so the test modules import them and no conftest
line is needed. Every server listens on 127.0.0.1 and stops itself after `SERVER_LIFETIME_S`.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # tests.servers under any pytest import mode
    sys.path.insert(0, str(ROOT))

from cfa_lib.publishing.pipeline import KERNEL_DIED_AT_START, KERNEL_START_RETRIES  # noqa: E402
from tests.servers.fake_openai import FakeOpenAI, FaultConfig  # noqa: E402
from tests.servers.mini_http import MiniHTTPServer  # noqa: E402

NOTEBOOKS = ROOT / "notebooks"
FAKE_MODEL = "openai/fake-model"
SERVER_LIFETIME_S = 600.0
PAPERMILL_TIMEOUT_S = 300
# Fields that differ between two equal runs: when, how fast, and what the cache or retries saved.
VOLATILE = {"timestamp", "latency_s", "usage", "total_tokens", "cached", "retries"}
SECRET_ENV_PATTERNS = ("KEY", "TOKEN", "SECRET", "PASSWORD")


@contextlib.contextmanager
def fake_server(**config: Any) -> Iterator[tuple[str, FakeOpenAI]]:
    """(base URL ending in /v1, app) of a fake OpenAI server with the given FaultConfig fields."""
    app = FakeOpenAI(FaultConfig(**config))
    server = MiniHTTPServer(app.handle).start(lifetime_s=SERVER_LIFETIME_S)
    try:
        yield f"{server.url}/v1", app
    finally:
        server.stop()


def control(base_url: str, **body: Any) -> None:
    """POST /control (hold_after, rate, delay_s, ...) on a running fake server."""
    httpx.post(f"{base_url.removesuffix('/v1')}/control", json=body, timeout=5).raise_for_status()


def run_env(tmp: Path, base_url: str | None = None, *, cache: Path | None = None, results: Path | None = None,
            api_key: str = "sk-test-reliability", **extra: str) -> dict[str, str]:
    """The environment of one run: private results and cache folders, fake keys only.

    Any real credential of the developer's shell is dropped, so a test can never spend money or leak it.
    """
    env = {k: v for k, v in os.environ.items() if not any(p in k.upper() for p in SECRET_ENV_PATTERNS)}
    env.pop("OPENAI_BASE_URL", None)
    env.update(CFA_RESULTS_DIR=str(results or tmp / "results"), CFA_CACHE_DIR=str(cache or tmp / "cache"),
               OPENAI_API_KEY=api_key, PYTHONUNBUFFERED="1")
    if base_url is not None:
        env["OPENAI_BASE_URL"] = base_url
    env.update(extra)
    return env


def papermill_args(notebook: str, out: Path, params: dict[str, Any], yaml: str | None = None) -> list[str]:
    """The command a researcher types: `papermill NB OUT -p name value ...` (values as strings)."""
    args = [sys.executable, "-m", "papermill", str(NOTEBOOKS / notebook), str(out), "--cwd", str(ROOT),
            "-k", "python3", "--log-output"]
    for name, value in params.items():
        args += ["-p", name, str(value)]
    if yaml:
        args += ["-y", yaml]
    return args


def papermill(notebook: str, out: Path, env: dict[str, str], params: dict[str, Any], yaml: str | None = None
              ) -> subprocess.CompletedProcess:
    return run_papermill(papermill_args(notebook, out, params, yaml), env, PAPERMILL_TIMEOUT_S)


def run_papermill(args: list[str], env: dict[str, str], timeout_s: float) -> subprocess.CompletedProcess:
    """papermill as a user types it, started again once if its kernel died before its first reply (no cell
    ran): on a loaded test machine a kernel can lose a port to another process's connection between the
    choice and its bind, which says nothing about the notebook under test (the pipeline does the same)."""
    for _ in range(1 + KERNEL_START_RETRIES):
        done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout_s, cwd=ROOT)
        if KERNEL_DIED_AT_START not in done.stderr:
            break
    return done


def start_papermill(notebook: str, out: Path, env: dict[str, str], params: dict[str, Any], log: Path
                    ) -> subprocess.Popen:
    handle = log.open("w")
    return subprocess.Popen(papermill_args(notebook, out, params), env=env, stdout=handle,
                            stderr=subprocess.STDOUT, cwd=ROOT)


def wait_until(condition: Callable[[], bool], what: str, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(0.05)


def first_error(executed: Path) -> tuple[int, str, str] | None:
    """(cell index, cell source, 'Name: message') of the first cell that raised, or None."""
    nb = json.loads(executed.read_text(encoding="utf-8"))
    for index, cell in enumerate(nb["cells"]):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                return index, "".join(cell["source"]), f"{output['ename']}: {output['evalue']}"
    return None


def results_file(results_dir: Path, experiment: str) -> Path:
    files = sorted(results_dir.glob(f"{experiment}/*/results.json"))
    assert len(files) == 1, f"expected one {experiment} results file in {results_dir}, found {files}"
    return files[0]


def strip_volatile(value: Any) -> Any:
    """A results structure without the fields that differ between equal runs (timestamps, latency, usage)."""
    if isinstance(value, dict):
        return {k: strip_volatile(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [strip_volatile(v) for v in value]
    return value


def comparable(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {"results": strip_volatile(data["results"]), "summary": strip_volatile(data["summary"])}


def server_figures(stats: dict[str, Any]) -> dict[str, Any]:
    """What the server saw: requests, answers (= completions paid), injected faults, duplicates paid."""
    prompts = stats["prompts"].values()
    return {
        "requests": stats["requests"],
        "answered": stats["answered"],
        "aborted_in_flight": stats["aborted"],
        "injected_faults": sum(stats["faults"].values()),
        "faults_by_kind": dict(sorted(stats["faults"].items())),
        "duplicates_paid": sum(max(0, p["answered"] - 1) for p in prompts),
    }


def cache_figures(cache_dir: Path) -> dict[str, int]:
    """Entries in the completion cache and the retries the engine counted for them."""
    path = cache_dir / "completions.sqlite"
    with contextlib.closing(sqlite3.connect(path)) as db:
        payloads = [json.loads(p) for (p,) in db.execute("SELECT payload FROM completions")]
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
    return {"cache_entries": len(payloads), "retries": sum(p.get("retries", 0) for p in payloads),
            "cache_integrity_ok": integrity == "ok"}
