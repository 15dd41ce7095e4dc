"""metrics.store.live: a live check keeps counts only, one transaction per answer, and closes by itself."""
from __future__ import annotations

import threading

import duckdb
import pytest

from metrics.store.live import CODE_ALPHABET, CheckClosed, LiveChecks


class Clock:
    def __init__(self):
        self.now = 1_000.0

    def __call__(self):
        return self.now


def test_answers_are_counted_and_the_check_closes_by_itself(tmp_path):
    clock = Clock()
    live = LiveChecks(tmp_path, clock=clock)
    check, key = live.open("TOKEN", minutes=2)
    assert len(check.code) == 6 and set(check.code) <= set(CODE_ALPHABET)
    assert live.get(check.code.lower()).token == "TOKEN"
    assert live.is_teacher(check.code, key) and not live.is_teacher(check.code, "guess")
    for answer in ("0.61", "0.39", "0.61"):
        live.answer(check.code, answer)
    assert live.counts(check.code) == {"0.61": 2, "0.39": 1}
    clock.now += 121
    with pytest.raises(CheckClosed, match="closed"):
        live.answer(check.code, "0.61")
    assert live.counts(check.code) == {"0.61": 2, "0.39": 1}
    with pytest.raises(CheckClosed, match="no live check has the code 'NOPE00'"):
        live.get("nope00")
    with pytest.raises(Exception, match="1 to 120 minutes"):
        live.open("T", minutes=0)


def test_concurrent_answers_are_all_counted_and_nothing_names_who_answered(tmp_path):
    live = LiveChecks(tmp_path)
    check, key = live.open("TOKEN")
    threads = [threading.Thread(target=lambda i=i: live.answer(check.code, "A" if i % 3 else "B"))
               for i in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert live.counts(check.code) == {"A": 20, "B": 10}
    live.close_now(check.code)
    assert not live.get(check.code).is_open()
    live.close()
    con = duckdb.connect(str(tmp_path / "live.duckdb"), read_only=True)
    columns = {row[0] for row in con.execute("SELECT column_name FROM information_schema.columns").fetchall()}
    assert columns == {"code", "token", "key_hash", "opened", "closes", "answer", "n"}
    assert key not in str(con.execute("SELECT * FROM live_check").fetchall())   # only its hash is stored
