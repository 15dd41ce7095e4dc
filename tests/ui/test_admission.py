"""The admission gate: at most ``limit`` runs at once, the others admitted in order of arrival,
each told its place; a run stopped while waiting leaves the queue."""
from __future__ import annotations

import threading
import time

import pytest

from metrics.errors import MetricsError
from ndcg_lab.ui.admission import DEFAULT_RUNS, Gate, runs_at_once


def test_runs_at_once_reads_the_environment():
    assert runs_at_once({}) == DEFAULT_RUNS
    assert runs_at_once({"NDCG_LAB_RUNS_AT_ONCE": " 3 "}) == 3
    for bad in ("0", "-1", "two", "1.5"):
        with pytest.raises(MetricsError, match="NDCG_LAB_RUNS_AT_ONCE"):
            runs_at_once({"NDCG_LAB_RUNS_AT_ONCE": bad})


def _arrive_in_order(gate: Gate, count: int, hold: threading.Event):
    """``count`` threads queue one after the other (each waits until the previous one is queued or
    running); returns (threads, order of admission, positions each was told, most running at once)."""
    admitted, told, peak = [], {i: [] for i in range(count)}, [0]
    lock = threading.Lock()

    def run(i):
        with gate.held(lambda position: told[i].append(position), poll=0.0):
            with lock:
                admitted.append(i)
                peak[0] = max(peak[0], gate.running)
            hold.wait(5)

    threads = []
    for i in range(count):
        before = gate.waiting + gate.running
        thread = threading.Thread(target=run, args=(i,))
        thread.start()
        threads.append(thread)
        deadline = time.monotonic() + 5
        while gate.waiting + gate.running == before and time.monotonic() < deadline:
            time.sleep(0.001)
    return threads, admitted, told, peak


def test_early_arrivals_are_admitted_first_and_told_their_place():
    gate, hold = Gate(2), threading.Event()
    threads, admitted, told, peak = _arrive_in_order(gate, 8, hold)
    assert sorted(admitted) == [0, 1] and gate.waiting == 6
    assert told[2] == [1] and told[7] == [6]      # third arrival is first in the queue, the last sixth
    hold.set()
    for thread in threads:
        thread.join(5)
    assert admitted == list(range(8))
    assert peak[0] == 2
    assert told[7][0] == 6 and told[7] == sorted(told[7], reverse=True)   # its place only moves forward
    assert gate.running == 0 and gate.waiting == 0


def test_a_run_stopped_while_waiting_leaves_the_queue():
    gate = Gate(1)
    with gate.held():
        def stopped(position):
            raise KeyboardInterrupt("the visitor left")

        with pytest.raises(KeyboardInterrupt):
            with gate.held(stopped):
                pass
        assert gate.waiting == 0
    with gate.held():
        assert gate.running == 1


def test_a_free_place_wakes_only_the_head_of_the_queue(monkeypatch):
    """20 runs queue behind one; as each leaves, only the next one wakes. With one condition woken
    for every change, the k-th admission woke all 20 - k waiters (210 wake-ups in all), each taking
    the interpreter from the run doing the work."""
    wakes, hold = [0], threading.Event()   # hold's own condition is not counted

    class Counting(threading.Condition):
        def wait(self, timeout=None):
            result = super().wait(timeout)
            wakes[0] += 1
            return result

    monkeypatch.setattr(threading, "Condition", Counting)
    gate, queued = Gate(1), 20
    # poll of a minute: no waiter wakes for its note during the test, only for its turn
    admitted, lock = [], threading.Lock()

    def run(i):
        with gate.held(poll=60.0):
            with lock:
                admitted.append(i)
            if i == 0:
                hold.wait(5)

    threads = []
    for i in range(queued + 1):
        before = gate.waiting + gate.running
        threads.append(threading.Thread(target=run, args=(i,)))
        threads[-1].start()
        deadline = time.monotonic() + 5
        while gate.waiting + gate.running == before and time.monotonic() < deadline:
            time.sleep(0.001)
    time.sleep(0.05)   # every waiter asleep on its condition
    wakes[0] = 0
    hold.set()
    for thread in threads:
        thread.join(10)
    assert admitted == list(range(queued + 1))
    assert wakes[0] <= queued          # each waiter woke once, for its turn
