"""The reliability report is recorded atomically and rendered as the book's appendix page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import reliability_report
from test_reliability_secrets import leaks

from cfa_lib.publishing.pages import reliability_page


def test_recorded_checks_render_with_their_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = tmp_path / "reliability.json"
    monkeypatch.setenv(reliability_report.REPORT_ENV, str(report))
    reliability_report.record("faults/x", theme="Faults during a run", title="notebook 01 with 20% faults",
                              passed=True, figures={"requests": 37, "faults_by_kind": {"429": 3, "drop": 4},
                                                    "duplicates_paid": 0, "results equal": True})
    reliability_report.record("params/y", theme="Bad input", title="limit | 0", passed=False,
                              figures={"message": "Parameter limit=0 is not valid: <accepted> ..."})
    reliability_report.record("faults/x", theme="Faults during a run", title="notebook 01 with 20% faults",
                              passed=True, figures={"requests": 38, "duplicates_paid": 0, "results equal": True})
    assert set(json.loads(report.read_text())["checks"]) == {"faults/x", "params/y"}

    page = reliability_page(report)
    assert page.startswith("# Reliability")
    assert "**1 of 2 checks passed**" in page
    assert page.index("## Bad input") < page.index("## Faults during a run")
    assert "| notebook 01 with 20% faults | yes | requests: 38; duplicates paid: 0; results equal: yes |" in page
    assert "| limit \\| 0 | no | message: Parameter limit=0 is not valid: &lt;accepted> ... |" in page


def test_a_missing_report_says_how_to_produce_it(tmp_path: Path) -> None:
    page = reliability_page(tmp_path / "absent.json")
    assert "`build/absent.json` is not written yet" in page and "pytest tests/test_reliability_" in page
    assert "FileNotFoundError" not in page  # a reader is told what to run, not an exception's name
    (tmp_path / "broken.json").write_text('{"checks": ')
    assert "`build/broken.json` is unreadable (JSONDecodeError)" in reliability_page(tmp_path / "broken.json")


def test_the_secret_scan_finds_a_planted_key(tmp_path: Path) -> None:
    """The scan the security check relies on does see a key written anywhere, in text or binary."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "cache.sqlite").write_bytes(b"\x00\x01 header sk-test-planted \x00")
    (tmp_path / "clean.json").write_text("{}")
    assert leaks(tmp_path, {"OPENAI_API_KEY": "sk-test-planted", "FOO_TOKEN": "absent"}) == {
        "sub/cache.sqlite": ["OPENAI_API_KEY"]}
