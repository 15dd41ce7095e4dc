"""ndcg_lab.ui.curves: the Curves page's cached means equal ``metrics.evaluate`` of the sample files read
directly (a second route past the workspace and the caches); recall levels by hand."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metrics
from metrics.report.figures import curves as figures
from ndcg_lab.ui import caches, curves
from tests.ui.conftest import LEGAL

RUNS = {path.stem: path for path in sorted(LEGAL.glob("*.run"))}


def direct_means(measures: list[str]):
    return metrics.means(metrics.evaluate(LEGAL / "qrels.txt", RUNS, measures))


def test_recall_levels():
    assert curves.recall_levels(0.1) == (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    assert len(curves.recall_levels(0.01)) == 101 and curves.recall_levels(0.05)[1] == 0.05
    assert curves.recall_levels(0.02)[-1] == 1.0


def test_mean_curve_at_k_is_the_mean_of_the_measure_at_k(legal):
    sel, _ = legal
    mean, n_queries = curves.mean_curves(sel, "nDCG(dcg='exp-log2')", False)
    expected = direct_means([f"nDCG(dcg='exp-log2')@{k}" for k in (1, 5, 10, 20)])
    assert n_queries == 50
    for k in (1, 5, 10, 20):
        got = mean[mean["k"] == k].set_index("system")["value"]
        assert got.to_dict() == pytest.approx(expected[f"nDCG(dcg='exp-log2')@{k}"].to_dict())
    assert "low" not in mean.columns and "lo" not in mean.columns


def test_the_mean_without_a_band_equals_the_mean_of_the_per_query_curves_and_keeps_none(legal, monkeypatch):
    sel, _ = legal

    def kept(*args):
        raise AssertionError("the mean without a band read the cache of per-query curves")
    with monkeypatch.context() as patch:
        patch.setattr(caches, "_curve", kept)
        mean, n_queries = curves.mean_curves.__wrapped__(sel, "Judged", False)
    per_query = caches.curves(sel, "Judged")
    pd.testing.assert_frame_equal(mean, figures.mean_curves(per_query))   # the same values, dtypes and order
    assert n_queries == max(len(c) for c in per_query.values()) == 50
    banded, _ = curves.mean_curves.__wrapped__(sel, "Judged", True)
    assert banded["value"].tolist() == mean["value"].tolist()


def test_the_band_brackets_the_mean(legal):
    sel, _ = legal
    mean, _ = curves.mean_curves(sel, "nDCG(dcg='exp-log2')", True)
    low, high = [c for c in mean.columns if c not in ("system", "k", "value")]
    assert (mean[low] <= mean["value"] + 1e-12).all() and (mean["value"] <= mean[high] + 1e-12).all()
    again, _ = curves.mean_curves.__wrapped__(sel, "nDCG(dcg='exp-log2')", True)   # seeded: the same band
    assert again[low].tolist() == mean[low].tolist()


def test_precision_recall_equals_iprec_means(legal):
    sel, _ = legal
    levels = curves.recall_levels(0.1)
    mean, _ = curves.precision_recall(sel, levels, False)
    names = [str(metrics.parse_measure(f"IPrec@{x!r}")) for x in (0.0, 0.5, 1.0)]
    expected = direct_means(names)
    for level, name in zip((0.0, 0.5, 1.0), names):
        got = mean[np.isclose(mean["recall"], level)].set_index("system")["value"]
        assert got.to_dict() == pytest.approx(expected[name].to_dict())


def test_iprec_table_is_text_with_four_decimals(legal):
    sel, _ = legal
    table = curves.iprec_table(sel, 0.5)
    expected = direct_means([str(metrics.parse_measure("IPrec@0.5")), "11pt_avg"])
    assert table.index.name == "system" and list(table.index) == list(expected.index)
    for column in table.columns:
        assert table[column].tolist() == [f"{v:.4f}" for v in expected[column]]
