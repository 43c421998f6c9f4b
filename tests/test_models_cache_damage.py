"""Nothing paid for is lost: an unreadable cache entry is set aside and asked again, a damaged cache file is
salvaged into a new one (its intact rows copied, the damaged file kept and named), never refused or deleted."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.servers under any pytest import mode
from reliability_plugin import FAKE_MODEL, fake_server  # noqa: E402

from cfa_lib.models import Request, get_client  # noqa: E402
from cfa_lib.models import cache as cache_module  # noqa: E402
from cfa_lib.models.cache import CompletionCache  # noqa: E402

QUESTIONS = [Request([{"role": "user", "content": f"Question {i}: what is {i} + {i}?"}]) for i in range(200)]


def answered_cache(folder: Path, url: str) -> list[str]:
    """A cache holding the fake server's answers to QUESTIONS (their texts, in order)."""
    client = get_client(FAKE_MODEL, base_url=url, cache_dir=folder)
    return [c.text for c in client.complete_many(QUESTIONS, progress=False)]


def rows(path: Path, table: str = "completions") -> list[tuple]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return conn.execute(f"SELECT * FROM {table}").fetchall()


def test_an_unreadable_entry_is_set_aside_named_and_asked_again_once(tmp_path: Path, caplog) -> None:
    with fake_server() as (url, app):
        first = answered_cache(tmp_path, url)
        cache = tmp_path / "completions.sqlite"
        with contextlib.closing(sqlite3.connect(cache)) as conn, conn:
            key, payload = conn.execute("SELECT key, payload FROM completions LIMIT 1 OFFSET 5").fetchone()
            conn.execute("UPDATE completions SET payload = ? WHERE key = ?", (payload[: len(payload) // 2], key))
        before = app.stats()["requests"]
        with caplog.at_level(logging.WARNING, logger="cfa_lib.models"):
            again = answered_cache(tmp_path, url)  # a new client, as a later run would have
        assert app.stats()["requests"] - before == 1  # the one entry, sent again; the others from the cache
        assert again == first
        assert f"completion cache {cache}: entry {key} cannot be read (not valid JSON" in caplog.text
        aside = rows(cache, "set_aside")
        assert [(r[0], r[3]) for r in aside] == [(key, payload[: len(payload) // 2])]  # kept as it was, to inspect
        assert answered_cache(tmp_path, url) == first and app.stats()["requests"] - before == 1  # once only


def cut(file: Path, fraction: float) -> None:
    """A copy interrupted part-way: the file ends mid-page, its header still giving the old page count."""
    os.truncate(file, int(file.stat().st_size * fraction))


@pytest.mark.parametrize("fraction", [0.6, 0.9])
def test_a_cut_cache_file_is_salvaged_and_the_run_goes_on(tmp_path: Path, fraction: float, caplog,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    with fake_server() as (url, app):
        first = answered_cache(tmp_path, url)
        cache = tmp_path / "completions.sqlite"
        with contextlib.closing(sqlite3.connect(cache)) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        intact = len(rows(cache))
        cut(cache, fraction)
        monkeypatch.setattr(cache_module, "_checked", set())  # the next run is a new process
        before = app.stats()["requests"]
        with caplog.at_level(logging.WARNING, logger="cfa_lib.models"):
            again = answered_cache(tmp_path, url)
        damaged = [f for f in tmp_path.glob("completions.sqlite.damaged-*") if not f.name.endswith(("-wal", "-shm"))]
        assert len(damaged) == 1 and damaged[0].stat().st_size > 0  # kept aside, named, not deleted
        salvaged = 200 - (app.stats()["requests"] - before)  # answers the run did not have to pay again for
        assert intact == 200 and 0 < salvaged < 200
        assert f"completion cache {cache} was damaged: {salvaged} intact answers copied into a new file; " \
               f"the damaged file is kept as {damaged[0]}" in caplog.text
        assert again == first  # the salvaged answers are the ones first stored
        assert len(rows(cache)) == 200


def test_a_garbage_cache_file_is_kept_aside_and_a_new_one_started(tmp_path: Path, caplog) -> None:
    (tmp_path / "completions.sqlite").write_bytes(b"not a database, just bytes\n" * 200)
    with caplog.at_level(logging.WARNING, logger="cfa_lib.models"):
        cache = CompletionCache(tmp_path)
    assert len(cache) == 0
    [damaged] = [f for f in tmp_path.glob("completions.sqlite.damaged-*") if not f.name.endswith(("-wal", "-shm"))]
    assert damaged.read_bytes().startswith(b"not a database")
    assert "0 intact answers copied into a new file" in caplog.text and "file is not a database" in caplog.text


def test_a_sound_cache_is_left_alone(tmp_path: Path) -> None:
    with fake_server() as (url, _):
        answered_cache(tmp_path, url)
    CompletionCache(tmp_path)
    assert not list(tmp_path.glob("*.damaged-*"))
