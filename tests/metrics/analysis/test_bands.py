"""metrics.analysis.bands: the DCG@k difference by rank band and grade (hand arithmetic), the documents
only one run retrieves, recall curves, rescued queries, and the legal sample's re-ranker and expansion."""
from __future__ import annotations

from math import log2
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metrics
from metrics.analysis import bands as bd
from metrics.errors import MetricsError
from tests.metrics.analysis.lists import qrels_of, run_of

LEGAL = Path(__file__).resolve().parents[3] / "ndcg_lab" / "sample_data" / "legal"




@pytest.fixture(scope="module")
def hand():
    """q1: grades a=3 b=2 c=1 d=0 e=1. A ranks a x b y c, B ranks b a c e. q2: z=1, found by B only."""
    qrels = qrels_of([("q1", "a", 3), ("q1", "b", 2), ("q1", "c", 1), ("q1", "d", 0), ("q1", "e", 1),
                    ("q2", "z", 1)])
    a = run_of({"q1": ["a", "x", "b", "y", "c"], "q2": ["w"]}, "A")
    b = run_of({"q1": ["b", "a", "c", "e"], "q2": ["w", "z"]}, "B")
    return qrels, a, b


def test_bands_and_grades_by_hand(hand):
    result = bd.bands(*hand, k=5, edges=(1, 3))
    assert result.labels == ["1", "2-3", "4-5"]
    # A: a 3/log2(2) at 1, b 2/log2(4) at 3, c 1/log2(6) at 5
    # B: b 2/log2(2) at 1, a 3/log2(3) at 2, c 1/log2(4) at 3, e 1/log2(5) at 4
    q1 = result.by_band.loc["q1"]
    assert q1["1"] == pytest.approx(2 - 3)
    assert q1["2-3"] == pytest.approx(3 / log2(3) + 1 / 2 - 2 / 2)
    assert q1["4-5"] == pytest.approx(1 / log2(5) - 1 / log2(6))
    grades = result.by_grade.loc["q1"]
    assert list(result.by_grade.columns) == ["3", "2", "1", "total"]
    assert grades["3"] == pytest.approx(3 / log2(3) - 3)
    assert grades["2"] == pytest.approx(2 - 2 / 2)
    assert grades["1"] == pytest.approx(1 / 2 + 1 / log2(5) - 1 / log2(6))
    total = (2 + 3 / log2(3) + 1 / 2 + 1 / log2(5)) - (3 + 2 / 2 + 1 / log2(6))
    assert q1["total"] == pytest.approx(total)
    # q2: B's z at rank 2 gains 1/log2(3), in band 2-3 and grade 1
    assert result.by_band.loc["q2"].tolist() == pytest.approx([0, 1 / log2(3), 0, 1 / log2(3)])


def test_bands_add_up_to_the_engines_total(hand):
    qrels, a, b = hand
    result = bd.bands(qrels, a, b, k=4, edges=(1, 2, 3), gain="exp")
    engine = metrics.evaluate(qrels, [a, b], ["DCG(dcg='exp-log2')@4"]).pivot(index="qid", columns="system",
                                                                             values="value")
    assert result.by_band["total"].tolist() == (engine["B"] - engine["A"]).tolist()
    for table in (result.by_band, result.by_grade):
        parts = table.drop(columns="total")
        assert np.abs(parts.sum(axis=1) - table["total"]).max() < 1e-12
    assert result.means()["total"] == pytest.approx(result.by_band["total"].mean())


def test_only_one_run_retrieves(hand):
    result = bd.bands(*hand, k=3)
    rows = result.only_one.astype({"other_rank": "object"}).to_dict(orient="records")
    # within the top 3: B has c (A has it at 5) and q2's z; A has nothing B lacks (a, b are in B's top 3)
    assert [(r["qid"], r["docno"], r["grade"], r["run"], r["rank"]) for r in rows] == [
        ("q1", "c", 1, "B", 3), ("q2", "z", 1, "B", 2)]
    assert rows[0]["other_rank"] == 5 and pd.isna(rows[1]["other_rank"])


def test_recall_curves_and_rescued_queries(hand):
    result = bd.bands(*hand, k=4)
    recall = result.recall.pivot(index="k", columns="system", values="value")
    # q1 has 4 relevant (a b c e), q2 one (z). A: a at 1, b at 3; B: b a c e, z at 2
    assert recall.loc[1, "A"] == pytest.approx((1 / 4 + 0) / 2)
    assert recall.loc[3, "A"] == pytest.approx((2 / 4 + 0) / 2)
    assert recall.loc[4, "B"] == pytest.approx((4 / 4 + 1) / 2)
    assert result.rescued.to_dict(orient="records") == [{"qid": "q2", "relevant": 1, "found": 1, "first_rank": 2}]
    assert result.lost.empty


def test_bad_bands_are_refused(hand):
    with pytest.raises(MetricsError, match="increasing"):
        bd.bands(*hand, edges=(10, 3))
    with pytest.raises(MetricsError, match="k must be"):
        bd.bands(*hand, k=0)
    assert bd.band_labels(1000) == ["1-3", "4-10", "11-20", "21-100", "101-1000"]
    assert bd.band_labels(15) == ["1-3", "4-10", "11-15"]


def test_legal_reranker_gains_at_the_top_expansion_low_with_new_documents():
    qrels, bm25 = LEGAL / "qrels.txt", LEGAL / "bm25.run"
    ce = bd.bands(qrels, bm25, LEGAL / "bm25_ce.run")
    qe = bd.bands(qrels, bm25, LEGAL / "bm25_qe.run")
    ce_mean, qe_mean = ce.means(), qe.means()
    assert ce_mean["1-3"] > 0 and ce_mean["1-3"] > ce_mean["21-100"]
    assert qe_mean["1-3"] < 0 and qe_mean["11-20"] + qe_mean["21-100"] > 0
    assert ce.only_one.empty                                  # the same 100 documents, reordered
    assert (qe.only_one["run"] == "bm25_qe").sum() > 10 * (qe.only_one["run"] == "bm25").sum()
    engine = metrics.means(metrics.evaluate(qrels, [bm25, LEGAL / "bm25_qe.run"], ["DCG@100"]))["DCG@100"]
    assert qe_mean["total"] == pytest.approx(engine["bm25_qe"] - engine["bm25"], abs=1e-12)
