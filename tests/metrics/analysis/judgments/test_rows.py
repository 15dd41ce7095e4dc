"""metrics.analysis.judgments.rows: the stacked top depth of every system, its grouping per
(query, document), and the checks every judgments function shares."""
from __future__ import annotations

import numpy as np
import pytest

from metrics.analysis import judgments as J
from metrics.analysis.judgments.rows import group, stack
from metrics.errors import MetricsError


def test_bad_parameters_are_metrics_errors(qrels, runs):
    with pytest.raises(MetricsError, match="depth must be a whole number >= 1"):
        J.hard_negatives(runs, depth=0)
    with pytest.raises(MetricsError, match="min_grade"):
        J.training_set(qrels, runs, min_grade=0)
    with pytest.raises(MetricsError, match="per_query"):
        J.training_set(qrels, runs, per_query=0)
    with pytest.raises(MetricsError, match="depth must be a whole number >= 1, got None"):
        J.recall_failures(qrels, runs, depth=None)
    with pytest.raises(MetricsError, match="per_query must be a whole number >= 1, got None"):
        J.training_set(qrels, runs, per_query=None)
    with pytest.raises(MetricsError, match="not a Ranked"):
        J.hard_negatives({"A": "run.txt"})
    with pytest.raises(MetricsError, match="no systems"):
        J.first_unjudged({})


def test_stack_keeps_the_top_depth_of_every_system(runs):
    rows = stack(runs, 3)
    assert rows.systems == ["A", "B"] and rows.qids.tolist() == ["1", "2"]
    assert rows.system.tolist() == [0] * 6 + [1] * 6
    assert rows.query.tolist() == [0, 0, 0, 1, 1, 1] * 2
    assert rows.rank.tolist() == [1, 2, 3] * 4
    assert rows.docno.to_pylist() == ["d2", "d1", "u1", "a2", "u2", "a1", "u1", "d4", "d1", "a3", "a1", "u3"]
    assert rows.judged.tolist() == [True, True, False, True, False, True, False, True, True, True, True, False]
    # unjudged above the system's first relevant document: u2 (A q2, a1 at 3), u1 (B q1, d1 at 3)
    assert np.flatnonzero(rows.above_relevant).tolist() == [4, 6]
    assert rows.retrieved.tolist() == [[5, 3], [4, 3]]   # list lengths before the depth cut


def test_group_pools_a_document_across_systems(runs):
    rows = stack(runs, 3)
    table = group(rows, ~rows.judged).to_pydict()
    # u1 is A@3 and B@1: best rank 1, two systems; then q2's u2 (A@2) before u3 (B@3)
    assert table["qid"] == ["1", "2", "2"] and table["docno"] == ["u1", "u2", "u3"]
    assert table["best_rank"] == [1, 2, 3] and table["n_systems"] == [2, 1, 1]
    assert table["ranks_text"] == ["A@3, B@1", "A@2", "B@3"]
    assert table["above_relevant"] == [True, True, False]
    assert table["grade"] == [None, None, None]
