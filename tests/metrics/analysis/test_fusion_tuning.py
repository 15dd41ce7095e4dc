"""Fusion sweeps and fold-based tuning: the grid, the tidy frame, seeded folds, held-out reporting."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import metrics
from metrics import MetricsError
from metrics.analysis.fusion import fuse
from metrics.analysis.fusion_tuning import split_queries, sweep, tune_on_folds, weight_grid

LEGAL = Path(__file__).resolve().parents[3] / "ndcg_lab" / "sample_data" / "legal"
QRELS = str(LEGAL / "qrels.txt")
RUNS = [str(LEGAL / "bm25.run"), str(LEGAL / "dense.run")]


def test_weight_grid_is_the_simplex_on_a_step():
    assert weight_grid(2, 0.25) == [(0.0, 1.0), (0.25, 0.75), (0.5, 0.5), (0.75, 0.25), (1.0, 0.0)]
    assert weight_grid(3, 0.5) == [(0.0, 0.0, 1.0), (0.0, 0.5, 0.5), (0.0, 1.0, 0.0), (0.5, 0.0, 0.5),
                                   (0.5, 0.5, 0.0), (1.0, 0.0, 0.0)]
    with pytest.raises(MetricsError, match="does not divide 1"):
        weight_grid(2, 0.3)


def test_sweep_over_k_equals_fusing_and_evaluating_each_setting():
    frame = sweep(QRELS, RUNS, k=[1, 60], measures=["nDCG@10", "AP"])
    assert list(frame.columns) == ["parameter", "setting", "measure", "value", "n_queries", "k"]
    assert frame["setting"].tolist() == ["1", "1", "60", "60"]
    for k in (1, 60):
        fused, _ = fuse(RUNS, "rrf", k=k)
        expected = metrics.means(metrics.evaluate(QRELS, [fused], ["nDCG@10", "AP"])).iloc[0]
        got = frame[frame["k"] == k].set_index("measure")["value"]
        assert got["nDCG@10"] == expected["nDCG@10"] and got["AP"] == expected["AP"]
    assert set(frame["n_queries"]) == {50}


def test_sweep_over_weights_names_a_column_per_run():
    frame = sweep(QRELS, RUNS, method_name="combsum", weights=[(0.0, 1.0), (1.0, 0.0)], measures=["nDCG@10"])
    assert frame["setting"].tolist() == ["0,1", "1,0"]
    assert frame[["w:bm25", "w:dense"]].values.tolist() == [[0.0, 1.0], [1.0, 0.0]]
    # all weight on one run under min-max gives that run's order back (a weight of 0 adds nothing)
    alone = metrics.means(metrics.evaluate(QRELS, RUNS, ["nDCG@10"]))["nDCG@10"]
    assert frame["value"].tolist() == pytest.approx([alone["dense"], alone["bm25"]], abs=1e-12)


def test_per_query_sweep_has_a_row_per_setting_query_and_measure():
    frame = sweep(QRELS, RUNS, k=[10, 60, 100], measures=["nDCG@10"], per_query=True)
    assert len(frame) == 3 * 50
    assert frame.groupby("setting")["qid"].nunique().tolist() == [50, 50, 50]


@pytest.mark.parametrize("kwargs, message", [
    ({}, "give one grid to sweep"),
    ({"k": [1], "weights": [(1, 1)]}, "give one grid to sweep"),
    ({"k": [1], "method_name": "combsum"}, "k is a parameter of rrf"),
    ({"k": []}, "the grid is empty"),
])
def test_sweep_errors(kwargs, message):
    with pytest.raises(MetricsError, match=message):
        sweep(QRELS, RUNS, **kwargs)


def test_split_queries_is_seeded_disjoint_and_order_free():
    qids = [f"q{i}" for i in range(11)]
    folds = split_queries(qids, seed=3)
    assert [len(f) for f in folds] == [6, 5]
    assert sorted(set(folds[0]) | set(folds[1])) == sorted(qids) and not set(folds[0]) & set(folds[1])
    again = split_queries(list(reversed(qids)) + qids, seed=3)       # order and repeats do not matter
    assert [f.tolist() for f in again] == [f.tolist() for f in folds]
    assert [f.tolist() for f in split_queries(qids, seed=4)] != [f.tolist() for f in folds]
    with pytest.raises(MetricsError, match="cannot split 1 queries into 2 folds"):
        split_queries(["q1"])


def test_tune_on_folds_chooses_on_one_fold_and_reports_on_the_other():
    # Setting "a" is best on q1, q2 (fold 1); "b" on q3, q4 (fold 2).
    values = {"a": {"q1": 0.9, "q2": 0.7, "q3": 0.1, "q4": 0.3}, "b": {"q1": 0.5, "q2": 0.5, "q3": 0.6, "q4": 0.8}}
    frame = pd.DataFrame([{"parameter": "k", "setting": s, "qid": q, "measure": "AP", "value": v}
                          for s, per in values.items() for q, v in per.items()])
    out = tune_on_folds(frame, "AP", [["q1", "q2"], ["q3", "q4"]]).set_index("fold")
    # fold 1 is reported with the setting tuned on fold 2 ("b": mean 0.7 there), and vice versa
    assert out.loc["1", "setting"] == "b" and out.loc["1", "tuned_value"] == pytest.approx((0.6 + 0.8) / 2)
    assert out.loc["1", "reported_value"] == pytest.approx((0.5 + 0.5) / 2)
    assert out.loc["2", "setting"] == "a" and out.loc["2", "reported_value"] == pytest.approx((0.1 + 0.3) / 2)
    assert out.loc["cross-validated", "reported_value"] == pytest.approx((0.5 + 0.5 + 0.1 + 0.3) / 4)
    # in-sample: "b" has mean 0.6 over all four, "a" 0.5
    assert out.loc["in-sample", "setting"] == "b"
    assert out.loc["in-sample", "reported_value"] == pytest.approx(0.6)
    with pytest.raises(MetricsError, match="the sweep has no measure 'nDCG@10'"):
        tune_on_folds(frame, "nDCG@10", [["q1"], ["q2"]])
