"""head_rows: the top of every list from the offsets, equal to the pass over every row it replaces."""
from __future__ import annotations

import numpy as np
import pytest

from metrics.analysis.heads import head_rows
from metrics.ordering import offsets_of, positions


@pytest.mark.parametrize("depth", [None, 0, 1, 3, 10])
def test_every_query_gives_the_rows_of_positions_below_the_depth(depth):
    offsets = offsets_of(np.array([4, 0, 1, 7, 3, 0]))
    rows, which, pos = head_rows(offsets, depth)
    every = positions(offsets)
    query = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    keep = np.ones(len(every), bool) if depth is None else every < depth
    assert rows.tolist() == np.flatnonzero(keep).tolist()
    assert which.tolist() == query[keep].tolist()
    assert pos.tolist() == every[keep].tolist()


def test_chosen_queries_come_in_their_order_with_repeats():
    offsets = offsets_of(np.array([4, 0, 2, 3]))   # rows 0-3, none, 4-5, 6-8
    rows, which, pos = head_rows(offsets, 2, np.array([3, 0, 1, 3]))
    assert rows.tolist() == [6, 7, 0, 1, 6, 7]
    assert which.tolist() == [0, 0, 1, 1, 3, 3]
    assert pos.tolist() == [0, 1, 0, 1, 0, 1]
