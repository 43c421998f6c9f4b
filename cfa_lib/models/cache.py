"""SQLite store of finished completions, so an interrupted run resumes where it stopped.

WAL mode plus one short transaction per insert means a crash or `kill -9` loses at most the answer in
flight and never corrupts what is stored; busy_timeout lets several processes share the file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import socket
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cfa_lib.paths import PROJECT_ROOT

from .cache_salvage import salvage
from .errors import CacheError

log = logging.getLogger("cfa_lib.models")

CACHE_FILE = "completions.sqlite"
CLAIM_MAX_AGE_S = 3600.0  # a claim older than this is abandoned even if its process seems alive
HOST = socket.gethostname()
_checked: set[Path] = set()  # cache files this process has checked for damage


def default_cache_dir() -> Path:
    env = os.environ.get("CFA_CACHE_DIR")
    return Path(env).expanduser() if env else PROJECT_ROOT / ".cache" / "cfa_lib"


def cache_key(identity: dict[str, Any]) -> str:
    """Stable hash of backend, model, messages, sampling params and schema (never a credential)."""
    blob = json.dumps(identity, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CompletionCache:
    """Thread-safe key → completion-dict store; one connection per thread."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.path = self.directory / CACHE_FILE
        self._local = threading.local()
        # One writer at a time within the process: threads queue here instead of in SQLite's busy
        # handler, which sleeps for milliseconds at a time (58 ms a claim at 64 threads, measured).
        self._write_lock = threading.Lock()
        self._pending_lock = threading.Lock()
        self._pending: list[_Pending] = []
        self._connect()  # fail now, with the file name, if the file is not a database

    def _connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheError(f"cannot create the completion cache folder {self.directory}: {exc}") from exc
        if self.path not in _checked:  # once per file and process: a damaged file is salvaged, never refused
            self._salvage_if_damaged()
            _checked.add(self.path)
        try:
            conn = self._open()
        except sqlite3.DatabaseError:  # damaged since it was checked (another process, a full disk)
            self._salvage_if_damaged()
            try:
                conn = self._open()
            except sqlite3.DatabaseError as exc:
                raise CacheError(f"completion cache {self.path} cannot be used even after salvaging it ({exc}); "
                                 "set CFA_CACHE_DIR to another folder") from exc
        self._local.conn = conn
        return conn

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout = 30000")
        _when_unlocked(lambda: _use_wal(conn))
        conn.execute("PRAGMA synchronous = NORMAL")
        _when_unlocked(lambda: _create_tables(conn))
        return conn

    def _salvage_if_damaged(self) -> None:
        done = salvage(self.path, _create_tables)
        if done is not None:
            log.warning("completion cache %s was damaged: %s", self.path, done)

    def _set_aside(self, conn: sqlite3.Connection, key: str, payload: str, reason: str) -> None:
        """Move an entry that cannot be read into the table set_aside (kept for inspection), inside the
        caller's write transaction; the request is then sent again once, like one never asked."""
        conn.execute("INSERT INTO set_aside (key, model, created, payload, reason, moved) "
                     "SELECT key, model, created, payload, ?, ? FROM completions WHERE key = ?",
                     (reason, time.time(), key))
        conn.execute("DELETE FROM completions WHERE key = ? AND payload = ?", (key, payload))
        log.warning("completion cache %s: entry %s cannot be read (%s); it is kept in the table set_aside "
                    "and its request is sent again", self.path, key, reason)

    def _answers(self, conn: sqlite3.Connection, rows: Iterable[tuple[str, str]], failures: bool,
                 in_write: bool = False) -> dict[str, dict[str, Any]]:
        """{key: answer} of stored rows; a row that cannot be read is set aside (in the caller's write
        transaction when `in_write`, else in one of its own) and counts as not stored."""
        found: dict[str, dict[str, Any]] = {}
        unreadable: list[tuple[str, str, str]] = []
        for key, payload in rows:
            try:
                answer = _answer(payload, failures)
            except _Unreadable as exc:
                unreadable.append((key, payload, str(exc)))
                continue
            if answer is not None:
                found[key] = answer
        if unreadable:
            if in_write:
                for entry in unreadable:
                    self._set_aside(conn, *entry)
            else:
                with self._write() as writer:
                    for entry in unreadable:
                        self._set_aside(writer, *entry)
        return found

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One short write transaction (BEGIN IMMEDIATE), serialized within the process."""
        conn = self._connect()
        with self._write_lock, conn:
            conn.execute("BEGIN IMMEDIATE")
            yield conn

    def get(self, key: str, failures: bool = True) -> dict[str, Any] | None:
        """The stored completion; a stored failure (determinism.py) only when `failures`."""
        conn = self._connect()
        rows = conn.execute("SELECT key, payload FROM completions WHERE key = ?", (key,)).fetchall()
        return self._answers(conn, rows, failures).get(key)

    def get_many(self, keys: Iterable[str], failures: bool = True) -> dict[str, dict[str, Any]]:
        """One query per 500 keys rather than one per key, so a warm-cache rerun is fast; 500 stays under
        SQLite's limit on bound parameters. Stored failures count only when `failures`."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, dict[str, Any]] = {}
        conn = self._connect()
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(self._answers(conn, conn.execute(
                f"SELECT key, payload FROM completions WHERE key IN ({marks})", chunk).fetchall(), failures))
        return found

    def put(self, key: str, model: str, payload: dict[str, Any], session: str | None = None) -> None:
        """Store one completion, durable when this returns, releasing this process's claim on it; its
        cost goes to the spend session's ledger in the same transaction.

        Group commit: a thread that gets the write lock commits every answer queued by then, so at 64
        connections the threads share a few transactions instead of queueing for one each.
        """
        row = _Pending(key, model, json.dumps(payload, ensure_ascii=False), session, payload.get("cost_usd"))
        with self._pending_lock:
            self._pending.append(row)
        with self._write_lock:
            if not row.done:
                with self._pending_lock:
                    rows, self._pending = self._pending, []
                try:
                    self._commit(rows)
                except BaseException as exc:
                    for other in rows:
                        other.error = exc
                    raise
                finally:
                    for other in rows:
                        other.done = True
        if row.error is not None:
            raise row.error

    def _commit(self, rows: list[_Pending]) -> None:
        conn = self._connect()
        now, pid = time.time(), os.getpid()
        with conn:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(
                "INSERT OR REPLACE INTO completions (key, model, created, payload) VALUES (?, ?, ?, ?)",
                [(r.key, r.model, now, r.payload) for r in rows],
            )
            conn.executemany("DELETE FROM claims WHERE key = ? AND pid = ? AND host = ?",
                             [(r.key, pid, HOST) for r in rows])
            conn.executemany("INSERT OR IGNORE INTO spend (session, key, usd) VALUES (?, ?, ?)",
                             [(r.session, r.key, r.cost) for r in rows if r.session is not None and r.cost])

    def spent(self, session: str) -> float:
        """USD paid so far in this spend session (all models, all processes sharing the session)."""
        row = self._connect().execute("SELECT SUM(usd) FROM spend WHERE session = ?", (session,)).fetchone()
        return float(row[0] or 0.0)

    # -- Batch API jobs: recorded before the run waits on them, so a killed run polls the same batch ----
    def add_batch_job(self, tag: str, model: str, keys: list[str]) -> None:
        with self._write() as conn:
            conn.execute(
                "INSERT INTO batch_jobs (tag, batch_id, model, keys, pid, host, created)"
                " VALUES (?, NULL, ?, ?, ?, ?, ?)",
                (tag, model, json.dumps(keys), os.getpid(), HOST, time.time()),
            )

    def set_batch_id(self, tag: str, batch_id: str) -> None:
        with self._write() as conn:
            conn.execute("UPDATE batch_jobs SET batch_id = ? WHERE tag = ?", (batch_id, tag))

    def batch_jobs(self, model: str) -> list[dict[str, Any]]:
        """This model's jobs not yet collected: tag, batch_id (None while submitting), keys, and whether
        the process that submitted it is gone."""
        rows = self._connect().execute(
            "SELECT tag, batch_id, keys, pid, host, created FROM batch_jobs WHERE model = ? ORDER BY created",
            (model,),
        ).fetchall()
        return [
            {"tag": tag, "batch_id": batch_id, "keys": json.loads(keys),
             "orphan": _abandoned(pid, host, created)}
            for tag, batch_id, keys, pid, host, created in rows
        ]

    def remove_batch_job(self, tag: str) -> None:
        self.settle_batch_job(tag, [])

    def settle_batch_job(self, tag: str, left: list[str]) -> None:
        """A collected job: forgotten, or kept with the answered keys that no run has stored yet."""
        with self._write() as conn:
            if left:
                conn.execute("UPDATE batch_jobs SET keys = ? WHERE tag = ?", (json.dumps(left), tag))
            else:
                conn.execute("DELETE FROM batch_jobs WHERE tag = ?", (tag,))

    def try_claim(self, key: str, use_cached: bool = True, failures: bool = True
                  ) -> tuple[bool, dict[str, Any] | None]:
        """Claim a request before paying for it, so two runs sharing this cache never pay for the same
        answer twice. Returns (True, None) when this process may send it; (False, payload) when it is
        already answered; (False, None) while another live process is sending it. A claim left by a
        process that died (kill -9) is taken over. A stored failure is an answer only when `failures`."""
        with self._write() as conn:
            if use_cached:
                rows = conn.execute("SELECT key, payload FROM completions WHERE key = ?", (key,)).fetchall()
                if (answer := self._answers(conn, rows, failures, in_write=True).get(key)) is not None:
                    return False, answer
            holder = conn.execute("SELECT pid, host, since FROM claims WHERE key = ?", (key,)).fetchone()
            if holder is not None and not _abandoned(*holder):
                return False, None
            conn.execute("INSERT OR REPLACE INTO claims (key, pid, host, since) VALUES (?, ?, ?, ?)",
                         (key, os.getpid(), HOST, time.time()))
            return True, None

    def claim_many(self, keys: list[str], use_cached: bool = True, failures: bool = True
                   ) -> tuple[set[str], dict[str, dict[str, Any]]]:
        """try_claim for a chunk of requests in one transaction (at 64 connections, one transaction per
        request kept threads waiting on each other): (keys now ours, {key: payload} already answered);
        the rest are being sent by another live process."""
        mine: set[str] = set()
        answered: dict[str, dict[str, Any]] = {}
        with self._write() as conn:
            for start in range(0, len(keys), 500):
                chunk = keys[start : start + 500]
                marks = ",".join("?" * len(chunk))
                if use_cached:
                    answered.update(self._answers(conn, conn.execute(
                        f"SELECT key, payload FROM completions WHERE key IN ({marks})", chunk).fetchall(),
                        failures, in_write=True))
                held = {key: (pid, host, since) for key, pid, host, since in conn.execute(
                    f"SELECT key, pid, host, since FROM claims WHERE key IN ({marks})", chunk)}
                free = [k for k in chunk if k not in answered and (k not in held or _abandoned(*held[k]))]
                now = time.time()
                conn.executemany("INSERT OR REPLACE INTO claims (key, pid, host, since) VALUES (?, ?, ?, ?)",
                                 [(k, os.getpid(), HOST, now) for k in free])
                mine.update(free)
        return mine, answered

    def release_many(self, keys: list[str]) -> None:
        if keys:
            with self._write() as conn:
                conn.executemany("DELETE FROM claims WHERE key = ? AND pid = ? AND host = ?",
                                 [(k, os.getpid(), HOST) for k in keys])

    def release(self, key: str) -> None:
        """Give up this process's claim, answered or not (a failure is retried by whoever asks next)."""
        with self._write() as conn:
            conn.execute("DELETE FROM claims WHERE key = ? AND pid = ? AND host = ?", (key, os.getpid(), HOST))

    def __len__(self) -> int:
        return self._connect().execute("SELECT COUNT(*) FROM completions").fetchone()[0]

    def __repr__(self) -> str:
        return f"CompletionCache({str(self.path)!r})"


@dataclass
class _Pending:
    """An answer waiting for the next group commit."""

    key: str
    model: str
    payload: str
    session: str | None
    cost: float | None
    done: bool = False
    error: BaseException | None = None


class _Unreadable(ValueError):
    """A stored entry that is not a completion (not JSON, or not a JSON object)."""


def _answer(payload: str, failures: bool) -> dict[str, Any] | None:
    """A stored completion as the caller asked for it: a stored failure is left out unless `failures`."""
    try:
        answer = json.loads(payload)
    except ValueError as exc:
        raise _Unreadable(f"not valid JSON: {exc}") from None
    if not isinstance(answer, dict):
        raise _Unreadable(f"a JSON {type(answer).__name__}, not an object")
    return answer if failures or answer.get("ok", True) else None


def _create_tables(conn: sqlite3.Connection) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS completions ("
        " key TEXT PRIMARY KEY, model TEXT NOT NULL, created REAL NOT NULL, payload TEXT NOT NULL)"
    )
    conn.execute(
        "CREATE TABLE IF NOT EXISTS claims ("
        " key TEXT PRIMARY KEY, pid INTEGER NOT NULL, host TEXT NOT NULL, since REAL NOT NULL)"
    )
    conn.execute(  # Batch API jobs not yet collected; batch_id is NULL while being submitted
        "CREATE TABLE IF NOT EXISTS batch_jobs ("
        " tag TEXT PRIMARY KEY, batch_id TEXT, model TEXT NOT NULL, keys TEXT NOT NULL,"
        " pid INTEGER NOT NULL, host TEXT NOT NULL, created REAL NOT NULL)"
    )
    conn.execute(  # entries that could not be read, kept for inspection (their requests were sent again)
        "CREATE TABLE IF NOT EXISTS set_aside ("
        " key TEXT NOT NULL, model TEXT NOT NULL, created REAL NOT NULL, payload TEXT NOT NULL,"
        " reason TEXT NOT NULL, moved REAL NOT NULL)"
    )
    conn.execute(  # what each spend session paid, for max_cost_usd
        "CREATE TABLE IF NOT EXISTS spend ("
        " session TEXT NOT NULL, key TEXT NOT NULL, usd REAL NOT NULL, PRIMARY KEY (session, key))"
    )


def _use_wal(conn: sqlite3.Connection) -> None:
    """WAL once per file: asking again while another process writes can fail at once with "database is
    locked" (switching the journal mode skips SQLite's busy handler), so read the mode first."""
    if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        conn.execute("PRAGMA journal_mode = WAL")


def _when_unlocked(step: Callable[[], None], attempts: int = 50, pause_s: float = 0.1) -> None:
    """Run a setup step that SQLite may refuse with "database is locked" without waiting (journal-mode
    changes), retrying for a few seconds: two runs opening one cache at once must both start."""
    for attempt in range(attempts):
        try:
            step()
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(pause_s)


def _abandoned(pid: int, host: str, since: float) -> bool:
    """This process's own claims never block it; another's count while that process lives on this host
    (or, on another host sharing the folder, for CLAIM_MAX_AGE_S)."""
    if host == HOST and pid == os.getpid():
        return True
    if time.time() - since > CLAIM_MAX_AGE_S:
        return True
    return host == HOST and not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
