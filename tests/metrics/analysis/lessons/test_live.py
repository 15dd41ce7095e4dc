"""metrics.store.live: one answer per device, none after the reveal or the close, and nothing kept
that names who answered."""
from __future__ import annotations

import sqlite3
import threading

import pytest

from metrics.errors import MetricsError
from metrics.store.live import CODE_ALPHABET, CheckClosed, LiveChecks, Tally

PHONE_A, PHONE_B = "a" * 32, "b" * 32


class Clock:
    def __init__(self):
        self.now = 1_000.0

    def __call__(self):
        return self.now


def test_one_answer_per_device_and_the_check_closes_by_itself(tmp_path):
    clock = Clock()
    live = LiveChecks(tmp_path, clock=clock)
    check, key = live.open("TOKEN", minutes=2)
    assert len(check.code) == 6 and set(check.code) <= set(CODE_ALPHABET)
    assert live.get(check.code.lower()).token == "TOKEN"
    assert live.is_teacher(check.code, key) and not live.is_teacher(check.code, "guess")
    assert live.answer(check.code, PHONE_A, "0.61", True)
    assert live.answer(check.code, PHONE_B, "0.39", False)
    assert not live.answer(check.code, PHONE_A, "0.39", False)       # a second answer changes nothing
    assert live.tally(check.code) == [Tally("0.39", 1, False), Tally("0.61", 1, True)]
    assert live.has_answered(check.code, PHONE_A) and not live.has_answered(check.code, "c" * 32)
    clock.now += 121
    with pytest.raises(CheckClosed, match="closed"):
        live.answer(check.code, "c" * 32, "0.61", True)
    assert live.counts(check.code) == {"0.39": 1, "0.61": 1}
    with pytest.raises(CheckClosed, match="no live check has the code 'NOPE00'"):
        live.get("nope00")
    with pytest.raises(MetricsError, match="1 to 120 minutes"):
        live.open("T", minutes=0)
    with pytest.raises(MetricsError, match="no device id"):
        live.answer(check.code, "", "0.61", True)


def test_no_answer_after_the_reveal(tmp_path):
    live = LiveChecks(tmp_path)
    check, _ = live.open("TOKEN")
    assert live.answer(check.code, PHONE_A, "0.5", False)
    live.reveal(check.code)
    revealed = live.get(check.code)
    assert revealed.revealed is not None and not revealed.is_open() and revealed.seconds_left() == 0
    with pytest.raises(CheckClosed, match="closed"):
        live.answer(check.code, PHONE_B, "0.7", True)
    assert live.counts(check.code) == {"0.5": 1}


def test_two_processes_share_the_file(tmp_path):
    """A second LiveChecks on the same home (another server process) sees and counts the same check."""
    first, second = LiveChecks(tmp_path), LiveChecks(tmp_path)
    check, key = first.open("TOKEN")
    assert second.is_teacher(check.code, key)
    assert second.answer(check.code, PHONE_A, "1", True)
    assert not first.answer(check.code, PHONE_A, "2", False)
    assert first.counts(check.code) == {"1": 1}


def test_concurrent_answers_are_all_counted_and_nothing_names_who_answered(tmp_path):
    live = LiveChecks(tmp_path)
    check, key = live.open("TOKEN")
    threads = [threading.Thread(target=lambda i=i: live.answer(check.code, f"device-{i:012d}",
                                                               "A" if i % 3 else "B", i % 3 == 0))
               for i in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert live.counts(check.code) == {"A": 20, "B": 10}
    live.close_now(check.code)
    assert not live.get(check.code).is_open()
    live.close()
    con = sqlite3.connect(tmp_path / "live.sqlite3")
    columns = {row[1] for table in ("live_check", "live_answer")
               for row in con.execute(f"PRAGMA table_info({table})").fetchall()}
    assert columns == {"code", "token", "key_hash", "opened", "closes", "revealed", "device_hash", "answer",
                       "correct"}
    stored = str([con.execute(f"SELECT * FROM {table}").fetchall() for table in ("live_check", "live_answer")])
    assert key not in stored and "device-" not in stored   # only hashes of the key and the devices
