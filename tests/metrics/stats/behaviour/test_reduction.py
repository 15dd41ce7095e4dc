"""Qrels reductions: per-query shares, nesting, pool depth by hand, order agreement with the full qrels."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metrics
from metrics.stats.behaviour import keep_share, pool_depth, reduction_curves, tau_ap

LEGAL = Path(__file__).resolve().parents[4] / "ndcg_lab" / "sample_data" / "legal"
QRELS = str(LEGAL / "qrels.txt")
RUNS = [str(LEGAL / f"{n}.run") for n in ("bm25", "bm25_ce", "bm25_qe", "dense")]


def pairs(qrels) -> set:
    df = qrels.df
    return set(zip(df["qid"].astype(str), df["docno"].astype(str)))


def test_keep_share_per_query_and_nested():
    full = metrics.read_qrels(QRELS).df
    sizes = full.groupby("qid").size()
    small, large = keep_share(QRELS, 30, seed=5), keep_share(QRELS, 50, seed=5)
    kept = small.df.groupby("qid").size()
    # each query keeps ceil(30% of its judgments): 15 judgments -> 5, 40 -> 12
    assert (kept == np.ceil(sizes * 0.3 - 1e-9).astype(int)).all()
    assert pairs(small) <= pairs(large) <= pairs(metrics.read_qrels(QRELS))
    assert pairs(keep_share(QRELS, 30, seed=5)) == pairs(small)
    assert pairs(keep_share(QRELS, 30, seed=6)) != pairs(small)


def test_keep_share_keeps_one_judgment_at_least():
    qrels = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["a", "b", "c"], "rel": [1, 0, 2]})
    assert keep_share(qrels, 1, seed=0).df.groupby("qid").size().tolist() == [1, 1]


def test_pool_depth_by_hand():
    qrels = pd.DataFrame({"qid": ["1"] * 4, "docno": ["a", "b", "c", "d"], "rel": [1, 0, 2, 1]})
    run_x = pd.DataFrame({"qid": ["1"] * 3, "docno": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    run_y = pd.DataFrame({"qid": ["1"] * 3, "docno": ["d", "c", "a"], "score": [3.0, 2.0, 1.0]})
    # top 1 of x is a, top 1 of y is d: the judged part of that pool is {a, d}
    assert pairs(pool_depth(qrels, {"x": run_x, "y": run_y}, 1)) == {("1", "a"), ("1", "d")}
    assert pairs(pool_depth(qrels, {"x": run_x, "y": run_y}, 2)) == {("1", "a"), ("1", "b"), ("1", "c"),
                                                                       ("1", "d")}


def test_reduction_curves_on_the_legal_sample():
    out = reduction_curves(QRELS, RUNS, keep=(30, 100), seed=0)
    tau = out["tau"].set_index(["level", "measure"])
    assert (tau.loc[100, "tau"] == 1.0).all() and (tau.loc[100, "tau_ap"] == 1.0).all()
    # the 30% row: means equal a direct evaluation of the reduced qrels, tau_ap against the full order
    reduced = metrics.means(metrics.evaluate(keep_share(QRELS, 30, seed=0), RUNS, ["Bpref"]))
    full = metrics.means(metrics.evaluate(QRELS, RUNS, ["Bpref"]))
    got = out["means"].query("level == 30 and measure == 'Bpref'").set_index("system")["mean"]
    np.testing.assert_allclose(got.reindex(reduced.index).to_numpy(), reduced["Bpref"].to_numpy())
    assert tau.loc[(30, "Bpref"), "tau_ap"] == pytest.approx(tau_ap(full["Bpref"], reduced["Bpref"]))
    assert out["settings"]["seed"] == 0 and out["settings"]["judgments"] == 1360


def test_reduction_needs_one_kind():
    with pytest.raises(metrics.MetricsError):
        reduction_curves(QRELS, RUNS)
