"""The DuckDB connection of a workspace file, and the lock its writers share in this process.

A :class:`Connection` opens on first use, can be closed while idle (an LRU of open files
does that) and reopens at the next operation; each operation takes a cursor of its own,
so operations of several threads run at once. Opening errors become one-line messages:
a file another process holds is :class:`WorkspaceLocked`, never DuckDB's traceback.
"""
from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from contextlib import contextmanager
from typing import TYPE_CHECKING

import duckdb

from ..errors import MetricsError

if TYPE_CHECKING:
    from .tables import Layout

__all__ = ["Connection", "WorkspaceLocked", "file_lock", "release_file_lock", "open_error", "first_line"]


class WorkspaceLocked(MetricsError):
    """Another process holds the workspace file open (DuckDB allows one writing process)."""


class Connection:
    """The DuckDB connection of a workspace: opened on first use, closed by :meth:`suspend`
    when idle and reopened by the next operation, closed for good by :meth:`close`.

    Each operation takes a cursor of its own (``users`` counts them), so operations of
    several threads run at once; a suspend never closes a connection under one.
    """

    def __init__(self, path, *, read_only: bool, memory_limit: int | None, on_use,
                 describe: Callable[[duckdb.DuckDBPyConnection], Layout] | None = None) -> None:
        self.path = path
        self.describe = describe     # called with each new DuckDB connection; its result is ``description``
        self.description: Layout | None = None
        self.read_only = read_only
        self.db_read_only = False  # whether DuckDB itself refuses writes (the file opened read-only)
        self.memory_limit = memory_limit
        self.on_use = on_use
        self.state = threading.Lock()
        self.con: duckdb.DuckDBPyConnection | None = None
        self.users = 0
        self.closed: Callable[[], MetricsError] | None = None
        self.opened = False

    @contextmanager
    def cursor(self):
        with self.state:
            if self.closed is not None:
                raise self.closed()
            if self.con is None:
                self.con = self._connect()
            self.users += 1
            try:
                cur = self.con.cursor()
            except BaseException:
                self.users -= 1
                raise
        try:
            if self.on_use is not None:
                self.on_use()
            yield cur
        finally:
            cur.close()
            with self.state:
                self.users -= 1
                if self.closed is not None and self.users == 0 and self.con is not None:
                    self.con.close()
                    self.con = None

    def suspend(self) -> bool:
        with self.state:
            if self.users or self.con is None or self.path == ":memory:":
                return False
            self.con.close()
            self.con = None
            return True

    def replace_file(self, copy) -> bool:
        """Close the connection, put the finished database file ``copy`` in place of this one and
        let the next operation reopen it; False (nothing done) while an operation uses it."""
        with self.state:
            if self.users or self.closed is not None or self.path == ":memory:":
                return False
            if self.con is not None:
                self.con.close()
                self.con = None
            os.replace(copy, self.path)
            try:
                os.unlink(f"{self.path}.wal")   # a log of the old file must never replay onto the copy
            except FileNotFoundError:
                pass
            return True

    def close(self, reason: Callable[[], MetricsError]) -> None:
        with self.state:
            self.closed = reason
            if self.users == 0 and self.con is not None:
                self.con.close()
                self.con = None

    def _connect(self) -> duckdb.DuckDBPyConnection:
        path = str(self.path)
        if self.opened and path != ":memory:" and not os.path.exists(path):
            raise MetricsError("the workspace file is gone", source=path,
                               fix="it was removed while closed; open another workspace")
        try:
            try:
                con = duckdb.connect(path, read_only=self.read_only and path != ":memory:")
                self.db_read_only = self.read_only and path != ":memory:"
            except duckdb.ConnectionException as exc:
                if not (self.read_only and "different configuration" in str(exc)):
                    raise
                # This process has the file open for writing: share that instance; the
                # Workspace itself refuses every change.
                con = duckdb.connect(path)
                self.db_read_only = False
            if self.memory_limit is not None:
                con.execute(f"SET memory_limit = '{int(self.memory_limit)}B'")
            if self.describe is not None:
                self.description = self.describe(con)
        except duckdb.Error as exc:
            raise open_error(exc, path) from None
        self.opened = True
        return con


def open_error(exc: duckdb.Error, path: str) -> MetricsError:
    text = first_line(exc)
    if "lock" in text.lower():
        pid = re.search(r"\(PID (\d+)\)", text)
        return WorkspaceLocked(f"the workspace is open in another process{f' (PID {pid.group(1)})' if pid else ''}",
                               source=path, fix="close that nDCG Lab app or command first, or pass --workspace "
                                                "with another file")
    if "different configuration" in text:
        return MetricsError("the workspace is open in this process already, read-only", source=path,
                            fix="open it read-only here too, or close the read-only one first")
    return MetricsError(f"cannot open the workspace ({text})", source=path,
                        fix="if another nDCG Lab process has it open, close that one or pass "
                            "--workspace with another file; if the file is not a DuckDB database, move it away")


# One lock per database file: writers in this process (any Workspace object on the file) take
# turns, so DuckDB never sees two write transactions collide. Counted, so that it goes with
# the last Workspace on its file.
_LOCKS: dict[str, list] = {}
_LOCKS_GUARD = threading.Lock()


def file_lock(key: str) -> threading.RLock:
    with _LOCKS_GUARD:
        entry = _LOCKS.setdefault(key, [threading.RLock(), 0])
        entry[1] += 1
        return entry[0]


def release_file_lock(key: str) -> None:
    with _LOCKS_GUARD:
        entry = _LOCKS.get(key)
        if entry is not None:
            entry[1] -= 1
            if entry[1] <= 0:
                del _LOCKS[key]


def first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
