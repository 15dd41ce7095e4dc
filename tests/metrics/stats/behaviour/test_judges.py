"""Two qrels: label agreement on shared pairs and the system order under each."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metrics
from metrics import stats
from metrics.stats.behaviour import label_agreement, system_shift, weighted_kappa

LEGAL = Path(__file__).resolve().parents[4] / "ndcg_lab" / "sample_data" / "legal"
QRELS, PROXY = str(LEGAL / "qrels.txt"), str(LEGAL / "proxy.txt")
RUNS = [str(LEGAL / f"{n}.run") for n in ("bm25", "bm25_ce", "dense")]


def test_label_agreement_by_hand():
    a = pd.DataFrame({"qid": ["1", "1", "1", "2"], "docno": ["x", "y", "z", "w"], "rel": [0, 1, 2, 1]})
    b = pd.DataFrame({"qid": ["1", "1", "2", "2"], "docno": ["x", "y", "w", "v"], "rel": [0, 2, 1, 0]})
    out = label_agreement(a, b, threshold=1)
    # shared: (1,x) 0/0, (1,y) 1/2, (2,w) 1/1; only in a: (1,z); only in b: (2,v)
    assert (out["shared"], out["only_a"], out["only_b"]) == (3, 1, 1)
    assert out["confusion"].loc[1, 2] == 1 and out["confusion"].to_numpy().sum() == 3
    assert out["binary_agreement"] == 1.0   # 0 | 0, 1 | 2 and 1 | 1 agree at threshold 1
    assert out["kappa_linear"] == pytest.approx(weighted_kappa([0, 1, 1], [0, 2, 1], "linear"))


def test_system_shift_on_the_legal_proxy():
    out = system_shift(QRELS, PROXY, RUNS, ["nDCG@10"], baseline="bm25")
    frame_a = metrics.evaluate(QRELS, RUNS, ["nDCG@10"])
    frame_b = metrics.evaluate(PROXY, RUNS, ["nDCG@10"])
    rows = out["means"].set_index("system")
    np.testing.assert_allclose(rows["mean_a"], metrics.means(frame_a)["nDCG@10"].reindex(rows.index))
    np.testing.assert_allclose(rows["shift"], (metrics.means(frame_b)["nDCG@10"] -
                                               metrics.means(frame_a)["nDCG@10"]).reindex(rows.index))
    # ranks 1 = best under each qrels: bm25_ce leads under the real qrels (0.5847 against 0.5319, 0.4921)
    assert rows["rank_a"].to_dict() == {"bm25_ce": 1, "bm25": 2, "dense": 3}
    assert sorted(rows["rank_b"]) == [1, 2, 3]
    tau = out["tau"].iloc[0]
    assert tau["tau"] == pytest.approx(stats.kendall_tau(rows["mean_a"], rows["mean_b"]))
    sig = out["significance"].set_index("system")
    expected = stats.compare(frame_b, "bm25", ["bm25_ce", "dense"], intervals=False).set_index("system")
    np.testing.assert_allclose(sig["p_b"], expected["p_adjusted"].reindex(sig.index))
    assert sig["changed"].tolist() == (sig["marker_a"] != sig["marker_b"]).tolist()
