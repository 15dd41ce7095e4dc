"""A SQLite registry that the app and commands read and write at once, and the token hash it keys.

The registries of workspaces and of class tasks keep sha256(token) -> what the token opens:
no token is stored. SQLite in WAL mode lets many readers and one writer share the file across
processes; a write is one ``BEGIN IMMEDIATE`` transaction, so a writer of another process waits
(up to 30 seconds) instead of failing half-way. In a process, one lock serialises the shared
connection.
"""
from __future__ import annotations

import hashlib
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path

__all__ = ["Registry", "token_hash"]


def token_hash(token: str) -> str:
    """The key a registry keeps for a token: sha256(token), hex."""
    return hashlib.sha256(token.encode()).hexdigest()


class Registry:
    """A SQLite file with ``schema`` (run on first use, so it must be idempotent: ``IF NOT EXISTS``),
    opened on first use: :meth:`rows` reads, :meth:`write` is one write transaction."""

    def __init__(self, path: Path, schema: str) -> None:
        self.path, self.schema = Path(path), schema
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.executescript(self.schema)
        return self._db

    def rows(self, sql: str, params=()) -> list[tuple]:
        """Every row of one statement (autocommit read)."""
        with self._lock:
            return self._connect().execute(sql, params).fetchall()

    @contextmanager
    def write(self):
        """One write transaction (BEGIN IMMEDIATE: writers of other processes wait); rolled back
        if the block or the COMMIT raises."""
        with self._lock:
            db = self._connect()
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                db.execute("COMMIT")           # may fail too (a full disk): never leave it open
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
