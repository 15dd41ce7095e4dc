"""The task files this process holds open between transactions, and the turns processes take.

Opening a DuckDB file costs 0.1-0.3 s on the 2-core bench machine (a database instance and its
threads, then a checkpoint at the close) where a transaction on an open file costs a few ms; a
class submitting at once paid it on every team page. So a task file, once opened, stays open,
with its ``<file>.lock`` (flock) held, until it has been idle :data:`IDLE_CLOSE` seconds or
another process asks for it: a process waiting for the lock file keeps ``<file>.want`` present,
and the holder closes the file at the end of its current transaction, or within :data:`TICK`
seconds when idle. At most :data:`KEPT` files are open at once, the least recently used closed
first. The caller holds the file's in-process lock (:func:`metrics.store.connection.file_lock`)
around :func:`acquire`, its transaction and :func:`done`; the closer thread takes it too.
"""
from __future__ import annotations

import atexit
import fcntl
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import duckdb

from ..store import connection

__all__ = ["IDLE_CLOSE", "TICK", "KEPT", "Opened", "acquire", "done", "close", "close_under", "is_open",
           "take_lock_file"]

IDLE_CLOSE = 2.0   # seconds an idle task file stays open
TICK = 0.05        # how often the closer thread looks at idle and wanted files
KEPT = 8           # task files open at once in one process


@dataclass
class Opened:
    """One task file open in this process: its connection, its held lock file, its in-process lock."""

    path: str
    con: duckdb.DuckDBPyConnection
    handle: BinaryIO    # the open <file>.lock, flocked
    lock: threading.RLock  # the file's in-process lock (metrics.store.connection.file_lock)
    used: float = field(default_factory=time.monotonic)
    depth: int = 0   # transactions running on it (nested ones of one thread included)


_OPEN: dict[str, Opened] = {}
_GUARD = threading.Lock()
_CLOSER: list[threading.Thread] = []
_INHERITED: list[Opened] = []  # a forked child's copies of its parent's files: never used nor closed


def _want(path: str) -> str:
    return f"{path}.want"


def take_lock_file(path: Path, deadline: float) -> BinaryIO:
    """The open ``<file>.lock``, flocked (:func:`metrics.store.connection.take_lock_file`): processes
    on one task file take turns. While waiting, ``<file>.want`` tells the holder to let go."""
    return connection.take_lock_file(path, deadline, problem="the task is busy in another process", source="task")


def acquire(path: Path, lock: threading.RLock, deadline: float,
            connect: Callable[[float], duckdb.DuckDBPyConnection]) -> Opened:
    """The open file of ``path`` (the caller holds ``lock``, the file's in-process lock): kept
    from an earlier transaction, else the lock file taken and ``connect(deadline)`` called."""
    key = str(path)
    with _GUARD:
        held = _OPEN.get(key)
    if held is not None:
        if os.path.exists(key):
            held.depth += 1
            return held
        close(key)  # removed behind this process's back
    handle = take_lock_file(path, deadline)
    try:
        con = connect(deadline)
    except BaseException:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        handle.close()
        raise
    held = Opened(key, con, handle, lock, depth=1)
    with _GUARD:
        _OPEN[key] = held
        surplus = sorted((o for o in _OPEN.values() if o is not held), key=lambda o: o.used)[:max(0, len(_OPEN) - KEPT)]
        if not _CLOSER or not _CLOSER[0].is_alive():
            _CLOSER[:] = [threading.Thread(target=_closer, name="task-files", daemon=True)]
            _CLOSER[0].start()
    for other in surplus:
        _close_if_idle(other, force=True)
    return held


def done(held: Opened) -> None:
    """A transaction on ``held`` ended (its lock still held): let the file go if another process waits."""
    held.depth -= 1
    held.used = time.monotonic()
    if held.depth == 0 and os.path.exists(_want(held.path)):
        close(held.path)


def close(key: str) -> None:
    """Close the file ``key`` if open here (the caller holds its in-process lock)."""
    with _GUARD:
        held = _OPEN.pop(key, None)
    if held is None:
        return
    try:
        held.con.close()
    finally:
        try:
            os.unlink(_want(key))
        except FileNotFoundError:
            pass
        fcntl.flock(held.handle.fileno(), fcntl.LOCK_UN)
        held.handle.close()


def close_under(folder: Path) -> None:
    """Close every task file of ``folder`` open here (waiting for their transactions)."""
    prefix = str(Path(folder)) + os.sep
    with _GUARD:
        mine = [o for k, o in _OPEN.items() if k.startswith(prefix)]
    for held in mine:
        with held.lock:
            if _OPEN.get(held.path) is held:
                close(held.path)


def is_open(path: Path) -> bool:
    """Whether this process holds ``path`` open."""
    return str(path) in _OPEN


def _close_if_idle(held: Opened, *, force: bool = False) -> None:
    if not held.lock.acquire(blocking=False):  # in a transaction: it looks again after it
        return
    try:
        if _OPEN.get(held.path) is not held or held.depth:
            return
        if force or time.monotonic() - held.used > IDLE_CLOSE or os.path.exists(_want(held.path)):
            close(held.path)
    finally:
        held.lock.release()


def _closer() -> None:
    while True:
        time.sleep(TICK)
        with _GUARD:
            opened = list(_OPEN.values())
            if not opened:
                _CLOSER.clear()
                return
        for held in opened:
            _close_if_idle(held)


def _close_all() -> None:
    with _GUARD:
        opened = list(_OPEN.values())
    for held in opened:
        _close_if_idle(held, force=True)


def _forget_in_child() -> None:
    """A forked child owns neither its parent's DuckDB instances nor its locks: it keeps the
    copies alive (a close would checkpoint the parent's file) and opens files of its own."""
    global _GUARD
    _GUARD = threading.Lock()  # the parent's may have been held by another thread at the fork
    _INHERITED.extend(_OPEN.values())
    _OPEN.clear()
    _CLOSER.clear()


os.register_at_fork(after_in_child=_forget_in_child)
atexit.register(_close_all)
