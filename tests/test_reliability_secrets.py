"""API keys and other credentials never reach a file the project writes, in a good run or a failing one."""

from __future__ import annotations

import json
import secrets
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from reliability_plugin import FAKE_MODEL, NOTEBOOKS, fake_server, papermill, run_env
from reliability_report import record

CREDENTIAL_WORDS = ("key", "token", "secret", "password")


def fake_secrets() -> dict[str, str]:
    return {"OPENAI_API_KEY": f"sk-test-{secrets.token_hex(16)}", "FOO_TOKEN": f"foo-{secrets.token_hex(12)}",
            "BAR_KEY": f"bar-{secrets.token_hex(12)}", "HF_TOKEN": f"hf_{secrets.token_hex(12)}"}


def leaks(folder: Path, values: dict[str, str]) -> dict[str, list[str]]:
    """{file: [variable names whose value it contains]} over every file under folder, read as bytes."""
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        blob = path.read_bytes()
        names = [name for name, value in values.items() if value.encode() in blob]
        if names:
            found[str(path.relative_to(folder))] = names
    return found


def test_no_notebook_parameter_is_a_credential() -> None:
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            if "parameters" in cell["metadata"].get("tags", []):
                names = [line.split("=")[0].strip() for line in "".join(cell["source"]).splitlines() if "=" in line]
                assert not [n for n in names if any(w in n.lower() for w in CREDENTIAL_WORDS)], (path.name, names)


@pytest.mark.slow
def test_fake_keys_appear_in_no_output_of_a_run(tmp_path: Path) -> None:
    values = fake_secrets()
    with fake_server(rate=0.3, hang_s=0.5, retry_after_s=0.05) as (url, _):
        runs = {
            # a run with retried faults, and one whose server is down (an error message end to end)
            "faulty": ("01_option_bias.ipynb", run_env(tmp_path / "faulty", url, api_key=values["OPENAI_API_KEY"],
                                                         **values)),
            "server-down": ("03_counterfactual.ipynb",
                            run_env(tmp_path / "down", "http://127.0.0.1:9/v1", api_key=values["OPENAI_API_KEY"],
                                    **values)),
        }

        def run(name: str):
            notebook, env = runs[name]
            done = papermill(notebook, tmp_path / f"{name}.ipynb", env, {"model": FAKE_MODEL, "limit": 5,
                                                                         "judge_model": FAKE_MODEL}
                             if notebook.startswith("01") else {"model": FAKE_MODEL, "limit": 5})
            (tmp_path / f"{name}.log").write_text(done.stdout + done.stderr)  # the terminal log, kept
            return done

        with ThreadPoolExecutor(2) as pool:
            done = dict(zip(runs, pool.map(run, runs), strict=True))
    scanned = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    found = leaks(tmp_path, values)
    parameters = {name: json.loads((tmp_path / f"{name}.ipynb").read_text())["metadata"]["papermill"]["parameters"]
                  for name in runs}
    figures = {
        "credentials set": len(values),
        "files scanned": len(scanned),
        "kinds of files": sorted({p.suffix or p.name for p in scanned}),
        "files containing a credential": len(found),
        "good run exit code": done["faulty"].returncode,
        "failing run exit code": done["server-down"].returncode,
    }
    record("secrets/no-key-in-outputs", theme="Security", title="fake API keys and tokens in no output file",
           passed=not found and done["faulty"].returncode == 0, figures=figures)

    assert done["faulty"].returncode == 0, done["faulty"].stderr[-3000:]
    assert done["server-down"].returncode != 0 and "ModelUnavailableError" in done["server-down"].stderr
    assert any(p.name == "completions.sqlite" for p in scanned) and any(p.name == "results.json" for p in scanned)
    assert not found, found
    assert not any(v in json.dumps(parameters) for v in values.values())
