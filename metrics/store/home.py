"""One server, or the processes of one deployment, per home folder (``NDCG_LAB_HOME``).

A second shared server on one home would write the same registry and workspaces as the first:
:func:`lock_home` refuses it with a POSIX record lock, which the system drops when the process
ends, however it ends.
"""
from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path

from ..errors import MetricsError

_HOMES: dict[str, int] = {}     # home folder -> the open file that holds this process's lock on it
_HOMES_LOCK = threading.Lock()
LOCK_NAME = "server.lock"
GATE_NAME = "server.gate"


def lock_home(folder: Path, deployment: str | None = None) -> None:
    """Hold ``folder/server.lock`` for this process (a POSIX record lock, released when the process
    ends, however it ends), or MetricsError when another server holds it: a second shared server
    on one ``NDCG_LAB_HOME`` would write the same registry and workspaces as the first.

    The processes of one ``deployment`` (``ndcg-lab app --replicas``: they take turns on each file,
    :func:`metrics.store.connection.share_between_processes`) hold it shared, each also holding
    ``server-<deployment>.lock`` shared; a process of another deployment, or a lone server, is
    refused while one of them lives. The check and the taking happen under ``server.gate``, so
    two deployments starting at once cannot both pass. The file stays open for the life of the
    process (closing any descriptor of it drops a POSIX lock), and a second manager in this
    process shares the lock. The message names no server path."""
    folder.mkdir(parents=True, exist_ok=True)
    key = str(folder.resolve())
    with _HOMES_LOCK:
        if key in _HOMES:
            return
        gate = os.open(folder / GATE_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.lockf(gate, fcntl.LOCK_EX)
            if deployment is None:
                _HOMES[key] = _hold(folder / LOCK_NAME, fcntl.LOCK_EX, write_pid=True)
            else:
                for other in folder.glob("server-*.lock"):
                    if other.name != f"server-{deployment}.lock":
                        os.close(_hold(other, fcntl.LOCK_EX))   # refused while a process of it lives
                _HOMES[key] = _hold(folder / LOCK_NAME, fcntl.LOCK_SH)
                _HOMES[f"{key}\0{deployment}"] = _hold(folder / f"server-{deployment}.lock", fcntl.LOCK_SH)
        finally:
            os.close(gate)     # closing it drops the gate's lock


def _hold(path: Path, mode: int, *, write_pid: bool = False) -> int:
    """The open descriptor of ``path`` holding the record lock ``mode``, or the home's MetricsError."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.lockf(fd, mode | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise MetricsError("another nDCG Lab server is serving this workspace folder, so this one serves "
                           "nothing", fix="use the other server's address; an operator runs each server "
                                          "(or each deployment of ndcg-lab app --replicas) with a folder of "
                                          "its own (NDCG_LAB_HOME)") from None
    if write_pid:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
    return fd
