"""SQLite store of finished completions, so an interrupted run resumes where it stopped.

WAL mode plus one short transaction per insert means a crash or `kill -9` loses at most the answer in
flight and never corrupts what is stored; busy_timeout lets several processes share the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .errors import CacheError

CACHE_FILE = "completions.sqlite"


def project_root() -> Path:
    """The folder holding pyproject.toml above this package (falls back to the working directory)."""
    for parent in Path(__file__).resolve().parents:
        if (parent / "pyproject.toml").is_file():
            return parent
    return Path.cwd()


def default_cache_dir() -> Path:
    env = os.environ.get("CFA_CACHE_DIR")
    return Path(env).expanduser() if env else project_root() / ".cache" / "cfa_lib"


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
        self._connect()  # fail now, with the file name, if the file is not a database

    def _connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout = 30000")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS completions ("
                " key TEXT PRIMARY KEY, model TEXT NOT NULL, created REAL NOT NULL, payload TEXT NOT NULL)"
            )
        except sqlite3.DatabaseError as exc:
            raise CacheError(
                f"completion cache {self.path} is not a usable SQLite database ({exc}); "
                "move or delete it, or set CFA_CACHE_DIR to another folder"
            ) from exc
        except OSError as exc:
            raise CacheError(f"cannot create the completion cache folder {self.directory}: {exc}") from exc
        self._local.conn = conn
        return conn

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._connect().execute("SELECT payload FROM completions WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """One query per 500 keys rather than one per key, so a warm-cache rerun is fast; 500 stays under
        SQLite's limit on bound parameters."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, dict[str, Any]] = {}
        conn = self._connect()
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for key, payload in conn.execute(
                f"SELECT key, payload FROM completions WHERE key IN ({marks})", chunk
            ):
                found[key] = json.loads(payload)
        return found

    def put(self, key: str, model: str, payload: dict[str, Any]) -> None:
        """Store one completion in its own short transaction (durable as soon as it returns)."""
        conn = self._connect()
        with conn:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(
                "INSERT OR REPLACE INTO completions (key, model, created, payload) VALUES (?, ?, ?, ?)",
                (key, model, time.time(), json.dumps(payload, ensure_ascii=False)),
            )

    def __len__(self) -> int:
        return self._connect().execute("SELECT COUNT(*) FROM completions").fetchone()[0]

    def __repr__(self) -> str:
        return f"CompletionCache({str(self.path)!r})"
