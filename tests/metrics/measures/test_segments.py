"""metrics.measures.segments: per-query scans restart at every query, against plain numpy loops."""
from __future__ import annotations

import numpy as np

from metrics.measures.segments import lookup_at, segment_accumulate, segment_count, segment_reverse_max


def _segments(rng, n):
    query = np.sort(rng.integers(0, 30, size=n))
    return query, rng.normal(size=n)


def test_segment_accumulate_restarts_at_each_query():
    rng = np.random.default_rng(3)
    query, values = _segments(rng, 400)
    running = segment_accumulate(query, values)
    product = segment_accumulate(query, 1 - values / 10, np.multiply)
    for q in np.unique(query):
        inside = query == q
        assert running[inside].tolist() == np.cumsum(values[inside]).tolist()  # identical floats
        assert product[inside].tolist() == np.cumprod(1 - values[inside] / 10).tolist()
    whole = np.round(values * 10)
    assert segment_accumulate(query, whole).tolist() == [
        float(np.sum(whole[(query == q) & (np.arange(400) <= i)])) for i, q in enumerate(query)]


def test_segment_count_reverse_max_and_lookup():
    rng = np.random.default_rng(4)
    query, values = _segments(rng, 300)
    flags = values > 0
    before = segment_count(query, flags, inclusive=False)
    best = segment_reverse_max(query, values)
    for i, q in enumerate(query):
        same = query == q
        assert before[i] == int(np.sum(flags[same & (np.arange(300) < i)]))
        assert best[i] == values[same & (np.arange(300) >= i)].max()
    pos = np.concatenate([np.arange(c) * 2 for c in np.bincount(query)])  # positions 0, 2, 4, ... per query
    found = lookup_at(query, pos, values, np.array([query[0], query[0], query[0]]), np.array([-1, 0, 3]))
    assert found.tolist() == [0.0, values[0], values[1]]
