"""Work beside the main thread (metrics.beside): large inputs take the threaded path, small ones the
inline one; both give the same rankings (the judged-docno probe of metrics.ranking.rank). The threaded
path is forced here with ``LARGE = 0`` on small generated runs, and counted, so these tests fail if it
is not taken."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import metrics.beside
from metrics import io, stats
from metrics.ranking import rank
from tests.metrics.threads import force_threads


def run_text(seed: int, *, duplicates: bool = False, misordered: bool = False) -> bytes:
    rng = np.random.default_rng(seed)
    lines = []
    for q in rng.permutation(40):
        n = int(rng.integers(1, 30))
        docs = rng.choice(200, size=n, replace=False)
        scores = np.round(np.sort(rng.random(n))[::-1] * 8) / 8   # ties
        for r, (d, s) in enumerate(zip(docs, scores), start=1):
            lines.append(f"q{q} Q0 d{d} {r} {s} tag")
        if duplicates and n > 2:
            lines.append(f"q{q} Q0 d{docs[0]} {n + 1} 0.0 tag")
    if misordered:   # the rank column against the scores
        lines += ["q7x Q0 d1 1 0.1 tag", "q7x Q0 d2 2 0.9 tag"]
    return ("\n".join(lines) + "\n").encode()


def qrels_text(seed: int) -> bytes:
    rng = np.random.default_rng(seed + 1)
    return "".join(f"q{q} 0 d{d} {int(rng.integers(0, 5))}\n"
                   for q in range(45) for d in rng.choice(200, size=20, replace=False)).encode()


def both(fn):
    """(inline result, threaded result, the work started on threads) of ``fn()``."""
    inline = fn()
    with pytest.MonkeyPatch.context() as mp:
        started = force_threads(mp)
        return inline, fn(), started


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("duplicates", [False, True])
@pytest.mark.parametrize("misordered", [False, True])
def test_rankings_are_the_same_with_the_probe_on_a_second_thread(seed, duplicates, misordered):
    text, qrels = run_text(seed, duplicates=duplicates, misordered=misordered), io.read_qrels(qrels_text(seed))

    def read_and_rank():
        run = io.read_run(text, on_duplicate="first")
        return run, rank(run, qrels)

    (run_a, ranked_a), (run_b, ranked_b), started = both(read_and_rank)
    assert started == ["is_in"]
    assert run_a.table.equals(run_b.table)
    assert run_a.findings == run_b.findings
    kinds = {f.kind for f in run_a.findings}
    assert ("duplicates" in kinds) == duplicates and "ties" in kinds
    assert ("rank_order" in kinds) == misordered
    for field in ("offsets", "rel", "judged", "score", "ideal_offsets", "ideal_rel", "missing"):
        np.testing.assert_array_equal(getattr(ranked_a, field), getattr(ranked_b, field))
    assert ranked_a.docnos().array().equals(ranked_b.docnos().array())


def test_beside_gives_the_value_or_the_error_inline_and_threaded(threaded):
    assert metrics.beside.beside(10**9, sum, [1, 2, 3]).result() == 6
    with pytest.raises(ZeroDivisionError):
        metrics.beside.beside(10**9, lambda: 1 / 0).result()
    assert len(threaded) == 2
    metrics.beside.LARGE = 1 << 20   # the inline path; the fixture restores the module after the test
    assert metrics.beside.beside(3, sum, [1, 2]).result() == 3
    with pytest.raises(ZeroDivisionError):
        metrics.beside.beside(3, lambda: 1 / 0).result()
    assert len(threaded) == 2


def _ahead_threads() -> int:
    return sum(t.name == "ndcg-lab-ahead" for t in threading.enumerate())


def _blocks(n: int, fail_at: int | None = None):
    def make():
        for i in range(n):
            if i == fail_at:
                raise ValueError(f"block {i}")
            yield np.full(3, i)
    return make


@pytest.mark.parametrize("rows", [10, 10**9])   # made here, and made ahead on a second thread
def test_ahead_gives_the_items_in_order_and_the_error_in_its_place(rows):
    before = _ahead_threads()
    items = metrics.beside.ahead(rows, _blocks(3 * metrics.beside.AHEAD))
    first = next(items)
    assert _ahead_threads() == before + (rows > metrics.beside.LARGE)
    assert [first.tolist(), *(x.tolist() for x in items)] == [[i] * 3 for i in range(3 * metrics.beside.AHEAD)]
    assert _ahead_threads() == before
    got = []
    with pytest.raises(ValueError, match="block 5"):
        for x in metrics.beside.ahead(rows, _blocks(9, fail_at=5)):
            got.append(int(x[0]))
    assert got == [0, 1, 2, 3, 4]


def test_ahead_stops_its_thread_when_the_caller_stops_early():
    before = _ahead_threads()
    items = metrics.beside.ahead(10**9, _blocks(10**6))   # more than it may make ahead: it waits
    assert int(next(items)[0]) == 0
    time.sleep(0.2)
    assert _ahead_threads() == before + 1
    items.close()
    assert _ahead_threads() == before


def test_bootstrap_draws_made_ahead_are_the_draws_made_here(monkeypatch):
    """The seeded resamples drawn on a second thread, a few blocks ahead, are the ones drawn in the
    caller's thread: the same means, intervals and p-values to the bit."""
    rng = np.random.default_rng(4)
    values, diffs = rng.random((300, 3)), rng.normal(size=(300, 2))
    here = (stats.bootstrap_means(values, resamples=700, seed=9),
            stats.bootstrap_pvalues(diffs, resamples=700, seed=9))
    monkeypatch.setattr(metrics.beside, "LARGE", 0)
    spawned = []
    real = metrics.beside.threading.Thread
    monkeypatch.setattr(metrics.beside.threading, "Thread",
                        lambda *a, **k: spawned.append(k.get("name")) or real(*a, **k))
    ahead = (stats.bootstrap_means(values, resamples=700, seed=9),
             stats.bootstrap_pvalues(diffs, resamples=700, seed=9))
    assert spawned.count("ndcg-lab-ahead") == 2   # the module is threading itself: count only these
    assert all(np.array_equal(x, y) for x, y in zip(here, ahead))
