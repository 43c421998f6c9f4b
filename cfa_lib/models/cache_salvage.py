"""A damaged completion cache: its intact rows copied into a new file, the damaged one kept aside and named.

Answers in the cache were paid for, so a cut or scribbled file is never just refused or deleted. SQLite
refuses a file shorter than its header says ("database disk image is malformed") even where most pages are
intact; the salvage reads a copy whose header states the pages really there, walks each table in rowid
order and skips over pages it cannot read.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# What a damaged file's tables hold that is worth keeping: paid answers, rows set aside for inspection,
# Batch API jobs (paid, not yet collected) and the spend ledger. Claims are short-lived and not kept.
KEPT_TABLES = ("completions", "set_aside", "batch_jobs", "spend")
SKIPS = 24  # jumps over unreadable rowids (1, 2, 4, ... 2^23) before a table is given up


@dataclass(frozen=True)
class Salvage:
    """What a salvage did: rows copied per table, where the damaged file now is, and why it was damaged."""

    damaged: Path
    copied: dict[str, int]
    reason: str

    def __str__(self) -> str:
        answers = self.copied.get("completions", 0)
        others = ", ".join(f"{n} {table.replace('_', ' ')} rows" for table, n in self.copied.items()
                           if table != "completions" and n)
        return (f"{answers} intact answers{f' and {others}' if others else ''} copied into a new file; the damaged "
                f"file is kept as {self.damaged} ({self.reason})")


def damage(path: Path) -> str | None:
    """Why SQLite cannot use this cache file, or None if it is sound (integrity checked, not only opened)."""
    if not path.exists():
        return None
    try:
        with contextlib.closing(sqlite3.connect(path, timeout=30.0)) as conn:
            result = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc):
            return None  # busy, not damaged: the caller's own busy handling applies
        return str(exc)
    except sqlite3.DatabaseError as exc:
        return str(exc)
    return None if result == "ok" else result


def salvage(path: Path, create_tables) -> Salvage | None:
    """Move a damaged cache aside and rebuild it from its readable rows; None if it was sound after all
    (another process salvaged it first: the salvage is serialized by a lock file beside the cache)."""
    with _lock(path.with_name(path.name + ".salvage-lock")):
        reason = damage(path)
        if reason is None:
            return None
        stamp = time.strftime("%Y%m%d-%H%M%S")
        damaged = path.with_name(f"{path.name}.damaged-{stamp}-{os.getpid()}")
        for suffix in ("", "-wal", "-shm"):
            if Path(f"{path}{suffix}").exists():
                os.replace(f"{path}{suffix}", f"{damaged}{suffix}")
        rows = _readable_rows(damaged)
        with contextlib.closing(sqlite3.connect(path, timeout=30.0, isolation_level=None)) as conn:
            create_tables(conn)
            conn.execute("BEGIN IMMEDIATE")
            copied = {}
            for table, (columns, values) in rows.items():
                marks = ",".join("?" * len(columns))
                conn.executemany(f"INSERT OR IGNORE INTO {table} ({','.join(columns)}) VALUES ({marks})", values)
                copied[table] = len(values)
            conn.execute("COMMIT")
        return Salvage(damaged, copied, reason)


def _readable_rows(damaged: Path) -> dict[str, tuple[list[str], list[tuple]]]:
    """{table: (columns, rows)} of every kept table SQLite can still read from a copy of the damaged file."""
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder) / "copy.sqlite"
        shutil.copyfile(damaged, work)
        if Path(f"{damaged}-wal").exists():
            shutil.copyfile(f"{damaged}-wal", f"{work}-wal")
        _state_real_page_count(work)
        found: dict[str, tuple[list[str], list[tuple]]] = {}
        try:
            conn = sqlite3.connect(work, isolation_level=None)
            conn.execute("PRAGMA writable_schema = ON")  # a table whose root page was cut off must not hide the rest
            tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.DatabaseError:
            return found  # not a database at all (or its schema page is gone): nothing can be read
        with contextlib.closing(conn):
            for table in KEPT_TABLES:
                if table in tables:
                    columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
                    found[table] = (columns, list(_rows(conn, table, columns)))
        return found


def _state_real_page_count(file: Path) -> None:
    """A cut file's header still gives the old page count, and SQLite then refuses every page: write the
    count of whole pages present (the copy only, never the kept original)."""
    with file.open("r+b") as handle:
        header = handle.read(100)
        if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
            return
        page_size = int.from_bytes(header[16:18], "big")
        page_size = 65536 if page_size == 1 else page_size
        pages = file.stat().st_size // page_size
        if pages and pages < int.from_bytes(header[28:32], "big"):
            handle.truncate(pages * page_size)
            handle.seek(28)
            handle.write(pages.to_bytes(4, "big"))


def _rows(conn: sqlite3.Connection, table: str, columns: list[str]) -> Iterator[tuple]:
    """Rows in rowid order; past an unreadable page, rowids further on are tried (1, 2, 4, ... ahead)."""
    last, skip, failures = 0, 1, 0
    select = f"SELECT rowid, {','.join(columns)} FROM {table} WHERE rowid > ? ORDER BY rowid"
    while failures < SKIPS:
        try:
            for rowid, *values in conn.execute(select, (last,)):
                last, skip, failures = rowid, 1, 0
                yield tuple(values)
            return
        except sqlite3.DatabaseError:
            last, skip, failures = last + skip, skip * 2, failures + 1


@contextlib.contextmanager
def _lock(file: Path) -> Iterator[None]:
    with file.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
