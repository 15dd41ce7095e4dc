"""The DuckDB connection of a workspace file, and the lock its writers share in this process.

A :class:`Connection` opens on first use, can be closed while idle (an LRU of open files
does that) and reopens at the next operation; each operation takes a cursor of its own,
so operations of several threads run at once. Opening errors become one-line messages:
a file another process holds is :class:`WorkspaceLocked`, never DuckDB's traceback.

Several processes on one file (the processes of one deployment, :func:`share_between_processes`):
DuckDB lets one process open a file for writing, so the processes take turns, as class tasks
do (:mod:`metrics.tasks.opened`). A connection holds ``<file>.lock`` (flock) while it is open; a
process that needs the file keeps ``<file>.want`` present while it waits, and the holder closes
the file at the end of its current operation, or within :data:`TICK` seconds when idle (a closer
thread looks), and anyway after :data:`IDLE_CLOSE` idle seconds. A transaction is thus never
split between processes, and a process killed mid-transaction leaves DuckDB's log, which the
next opening replays or discards whole.
"""
from __future__ import annotations

import fcntl
import os
import re
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import duckdb

from ..errors import MetricsError

if TYPE_CHECKING:
    from .tables import Layout

__all__ = ["Connection", "WorkspaceLocked", "file_lock", "release_file_lock", "open_error", "first_line",
           "take_lock_file", "in_turn", "share_between_processes", "shared_between_processes", "TURN_WAIT",
           "IDLE_CLOSE", "TICK"]

TURN_WAIT = 30.0   # seconds an operation waits for a file another process of the deployment holds
IDLE_CLOSE = 2.0   # seconds a file shared between processes stays open while idle
TICK = 0.05        # how often the closer thread looks for idle and wanted files


class WorkspaceLocked(MetricsError):
    """Another process holds the workspace file open (DuckDB allows one writing process)."""


class Connection:
    """The DuckDB connection of a workspace: opened on first use, closed by :meth:`suspend`
    when idle and reopened by the next operation, closed for good by :meth:`close`.

    Each operation takes a cursor of its own (``users`` counts them), so operations of
    several threads run at once; a suspend never closes a connection under one.
    """

    def __init__(self, path, *, read_only: bool, memory_limit: int | None, on_use,
                 describe: Callable[[duckdb.DuckDBPyConnection], Layout | None] | None = None) -> None:
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
        self.turn: BinaryIO | None = None   # the held <file>.lock while open, when processes share the file
        self.used = time.monotonic()

    @contextmanager
    def cursor(self):
        with self.state:
            if self.closed is not None:
                raise self.closed()
            if self.con is None:
                self.con = self._connect_in_turn()
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
                self.used = time.monotonic()
                if self.closed is not None and self.users == 0 and self.con is not None:
                    self._shut()
                elif self.users == 0 and self.turn is not None and os.path.exists(_want(self.path)):
                    self._shut()    # another process waits for this file: its turn now

    def suspend(self) -> bool:
        with self.state:
            if self.users or self.con is None or self.path == ":memory:":
                return False
            self._shut()
            return True

    def _shut(self) -> None:
        """Close the DuckDB connection and let the file go to the other processes (under ``state``)."""
        try:
            if self.con is not None:
                self.con.close()
        finally:
            self.con = None
            turn, self.turn = self.turn, None
            if turn is not None:
                _give_turn(str(self.path), turn)

    def _connect_in_turn(self) -> duckdb.DuckDBPyConnection:
        """A new DuckDB connection; when processes share the file, its lock file is taken first
        (waiting for the other processes' turns) and held until :meth:`_shut`."""
        if self.read_only or self.path == ":memory:" or not shared_between_processes(self.path):
            return self._connect()
        self.turn = take_lock_file(Path(self.path), time.monotonic() + TURN_WAIT)
        try:
            con = self._connect()
        except BaseException:
            turn, self.turn = self.turn, None
            _give_turn(str(self.path), turn)
            raise
        _SHARED_OPEN.add(self)
        _start_closer()
        return con

    def replace_file(self, copy) -> bool:
        """Close the connection, put the finished database file ``copy`` in place of this one and
        let the next operation reopen it; False (nothing done) while an operation uses it, or when
        processes share the file and this one's turn ended since the copy was made."""
        with self.state:
            if self.users or self.closed is not None or self.path == ":memory:":
                return False
            if self.turn is None and shared_between_processes(self.path):
                return False     # the turn went to another process since the copy was made
            # The turn is kept until the copy is in place: no other process opens the old file meanwhile.
            turn, self.turn = self.turn, None
            try:
                self._shut()
                os.replace(copy, self.path)
                try:
                    os.unlink(f"{self.path}.wal")   # a log of the old file must never replay onto the copy
                except FileNotFoundError:
                    pass
            finally:
                if turn is not None:
                    _give_turn(str(self.path), turn)
            return True

    def close(self, reason: Callable[[], MetricsError]) -> None:
        with self.state:
            self.closed = reason
            if self.users == 0 and self.con is not None:
                self._shut()

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


# -- turns between the processes of one deployment ------------------------------------------

_SHARED_FOLDERS: set[Path] = set()
_SHARED_OPEN: weakref.WeakSet[Connection] = weakref.WeakSet()
_CLOSER: list[threading.Thread] = []
_CLOSER_GUARD = threading.Lock()


def share_between_processes(folder: Path | str) -> None:
    """Declare that other processes open the DuckDB files under ``folder`` too (the processes of
    one deployment on one ``NDCG_LAB_HOME``): their connections take turns (see the module)."""
    _SHARED_FOLDERS.add(Path(folder).resolve())


def shared_between_processes(path: Path | str) -> bool:
    """Whether the file ``path`` is under a folder declared by :func:`share_between_processes`."""
    if not _SHARED_FOLDERS or str(path) == ":memory:":
        return False
    resolved = Path(path).resolve()
    return any(folder == resolved.parent or folder in resolved.parents for folder in _SHARED_FOLDERS)


@contextmanager
def in_turn(path: Path | str) -> Iterator[None]:
    """The block runs in this process's turn on the file ``path`` when processes share it (else at
    once): a change of the file's neighbours (a compaction's copy) never meets another process's."""
    if not shared_between_processes(path):
        yield
        return
    turn = take_lock_file(Path(path), time.monotonic() + TURN_WAIT)
    try:
        yield
    finally:
        _give_turn(str(path), turn)


def _want(path: Path | str) -> str:
    return f"{path}.want"


def take_lock_file(path: Path, deadline: float, *, problem: str = "the file is busy in another process",
                   source: str | None = None) -> BinaryIO:
    """The open ``<file>.lock``, flocked: processes on one DuckDB file take turns. While waiting,
    ``<file>.want`` tells the holder to let go; past ``deadline`` :class:`WorkspaceLocked` (``problem``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(f"{path}.lock", "a+b")  # noqa: SIM115 - kept open while the file is held
    pause = 0.001
    try:
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                return handle
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise WorkspaceLocked(problem, source=path.name if source is None else source,
                                          fix="try again in a moment") from None
                try:
                    with open(_want(path), "x"):
                        pass
                except FileExistsError:
                    pass
                time.sleep(pause)
                pause = min(pause * 2, 0.02)
    except BaseException:
        handle.close()
        raise


def _give_turn(path: str, handle: BinaryIO) -> None:
    """Let the file go: the wish of whoever waited is met, then the lock file is released."""
    try:
        os.unlink(_want(path))
    except FileNotFoundError:
        pass
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    finally:
        handle.close()


def _start_closer() -> None:
    with _CLOSER_GUARD:
        if not _CLOSER or not _CLOSER[0].is_alive():
            _CLOSER[:] = [threading.Thread(target=_closer, name="shared-files", daemon=True)]
            _CLOSER[0].start()


def _closer() -> None:
    """Close the shared files that are idle and wanted by another process, or idle too long."""
    while True:
        time.sleep(TICK)
        with _CLOSER_GUARD:
            held = [c for c in list(_SHARED_OPEN) if c.turn is not None]
            if not held:
                _CLOSER.clear()
                return
        for conn in held:
            if not conn.state.acquire(blocking=False):
                continue
            try:
                if conn.users == 0 and conn.turn is not None and (
                        os.path.exists(_want(conn.path)) or time.monotonic() - conn.used > IDLE_CLOSE):
                    conn._shut()
            finally:
                conn.state.release()


def _forget_in_child() -> None:
    """A forked child holds neither its parent's files nor their turns."""
    _SHARED_OPEN.clear()
    _CLOSER.clear()


os.register_at_fork(after_in_child=_forget_in_child)
