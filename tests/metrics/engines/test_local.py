"""metrics.engines.local: a run spread over files reads as one, duplicates across files named."""
from __future__ import annotations

import pandas as pd
import pytest

import metrics
from metrics.errors import MetricsError


def test_duplicate_across_files_names_both(tmp_path):
    (tmp_path / "a.txt").write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    (tmp_path / "b.txt").write_text("q2 Q0 d1 1 2.0 t\nq1 Q0 d2 1 0.5 t\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d2 1\nq2 0 d1 1\n")
    runs = {"sys": [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]}
    qrels = str(tmp_path / "qrels.txt")
    expected = "b.txt line 2: document 'd2' appears twice for query 'q1' (a.txt line 2 and line 2)"
    for engine in ("local", "streaming"):
        with pytest.raises(MetricsError) as caught:
            metrics.evaluate(qrels, runs, ["RR"], engine=engine, buckets=2)
        assert str(caught.value).startswith(expected)
    first = metrics.evaluate(qrels, runs, ["RR"], on_duplicate="first")
    assert first.set_index("qid")["value"].to_dict() == {"q1": 0.5, "q2": 1.0}
    pd.testing.assert_frame_equal(
        metrics.evaluate(qrels, runs, ["RR"], engine="streaming", buckets=2, on_duplicate="first"), first)
