"""Script runs admitted in order of arrival, a bounded number at once per server process.

Every session's script run is a thread of one Python process, and Python runs one thread at a
time: when a lecture's 100 students open a lesson at once, 100 runs share the process and all
finish together, after the sum of their times. Admitting at most ``NDCG_LAB_RUNS_AT_ONCE`` runs
(default :data:`DEFAULT_RUNS`) and queueing the rest first come, first served turns that into a
queue: the first student sees the page after one run, the n-th after about n runs, and nobody
waits longer than without it. A waiting visitor sees "You are number N in the queue", updated
as the queue moves.

:class:`Gate` is the queue (plain threads, no Streamlit); :func:`admitted` is the context manager
the entry script runs the page in. A run that is stopped while it waits (its visitor left, or
asked for a newer run) leaves the queue.
"""
from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import streamlit as st

from metrics.errors import MetricsError

__all__ = ["DEFAULT_RUNS", "ENV", "Gate", "admitted", "gate", "runs_at_once"]

ENV = "NDCG_LAB_RUNS_AT_ONCE"
DEFAULT_RUNS = 2
"""Two runs at once: one computes while the other waits on its database or sends its page."""
POLL = 2.0  # seconds between two notes to a waiting visitor (its turn wakes it at once)
MIN_WAIT = 0.05  # the shortest sleep of a waiter between two looks at its place (a poll of 0 in tests)


def runs_at_once(env: dict[str, str] | None = None) -> int:
    """``NDCG_LAB_RUNS_AT_ONCE``: script runs one process runs at once (a whole number, 1 or more)."""
    text = (os.environ if env is None else env).get(ENV, "").strip()
    if not text:
        return DEFAULT_RUNS
    if not text.isdigit() or int(text) < 1:
        raise MetricsError(f"{ENV} must be a whole number of script runs, 1 or more, not {text!r}", source=ENV,
                           fix=f"unset it for {DEFAULT_RUNS}, or set e.g. {ENV}=2")
    return int(text)


class Gate:
    """At most ``limit`` holders at once; the others wait in order of arrival (first in, first out).

    Each waiter sleeps on its own condition, and a free place wakes only the head of the queue:
    with one shared condition woken for every change, a burst's 100 waiting threads all woke at
    each admission and took the interpreter in turn from the one run doing the work."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.running = 0
        self._lock = threading.Lock()
        self._queue: deque[threading.Condition] = deque()   # one condition per waiter, on the one lock

    @property
    def waiting(self) -> int:
        return len(self._queue)

    def _wake_head(self) -> None:
        """Wake the first waiter if a place is free (called with the lock held)."""
        if self._queue and self.running < self.limit:
            self._queue[0].notify()

    @contextmanager
    def held(self, on_wait: Callable[[int], None] = lambda position: None, poll: float = POLL) -> Iterator[None]:
        """Hold one place for the block. While waiting, ``on_wait(position)`` is called (outside the
        lock) with the 1-based position in the queue: at once, then when it has changed, at most once
        per ``poll`` seconds (a burst moves every waiter's place several times a second, and each
        note is a message to a browser): a waiter wakes for its note on its own timer, and for its
        turn when a place frees while it heads the queue. If ``on_wait`` raises (a stopped run:
        Streamlit raises at a script's next message once its visitor left or asked for a newer
        run), the ticket leaves the queue and the exception goes on."""
        ticket = threading.Condition(self._lock)
        shown, told = 0, float("-inf")
        every = max(poll, MIN_WAIT)
        with self._lock:
            self._queue.append(ticket)
        try:
            while True:
                with self._lock:
                    if self.running < self.limit and self._queue[0] is ticket:
                        self._queue.popleft()
                        self.running += 1
                        self._wake_head()   # a second free place goes to the next one at once
                        break
                    position = self._queue.index(ticket) + 1
                    since = time.monotonic() - told
                    if position == shown or since < poll:
                        ticket.wait(every if position == shown else max(poll - since, MIN_WAIT))
                        continue
                shown, told = position, time.monotonic()
                on_wait(position)
        except BaseException:
            with self._lock:
                if ticket in self._queue:
                    self._queue.remove(ticket)
                self._wake_head()
            raise
        try:
            yield
        finally:
            with self._lock:
                self.running -= 1
                self._wake_head()


@st.cache_resource(show_spinner=False)
def gate(limit: int) -> Gate:
    """The one gate of this process for ``limit`` runs at once, shared by every session."""
    return Gate(limit)


@contextmanager
def admitted() -> Iterator[None]:
    """Run the block once this script run's turn comes; meanwhile a note gives the place in the queue."""
    note = st.empty()

    def waiting(position: int) -> None:
        # Plain text, not an alert: pages and clients read an alert as the answer to an action.
        note.markdown(f":material/hourglass_top: Many people are opening the app at once. You are number "
                      f"{position} in the queue; the page opens by itself when your turn comes.")

    with gate(runs_at_once()).held(waiting):
        note.empty()
        yield
