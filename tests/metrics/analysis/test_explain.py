"""metrics.explain: the per-rank arithmetic equals the leaderboard's kernels, bit for bit."""
from __future__ import annotations

from math import log2
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metrics
from metrics.analysis import explain as ex
from metrics.errors import MetricsError
from metrics.evaluation import evaluate_ranked
from metrics.ranking import rank

LEGAL = Path(__file__).resolve().parents[3] / "ndcg_lab" / "sample_data" / "legal"


def _qrels(rows):
    return metrics.read_qrels(pd.DataFrame(rows, columns=["qid", "docno", "label"]))


def _run(rows, name="sys"):
    return metrics.read_run(pd.DataFrame(rows, columns=["qid", "docno", "score"]), name=name)


@pytest.fixture(scope="module")
def small():
    """q1 retrieves a(2) b(unjudged) c(0) d(1); the qrels also hold e(3), never retrieved."""
    qrels = _qrels([("q1", "a", 2), ("q1", "c", 0), ("q1", "d", 1), ("q1", "e", 3), ("q2", "x", 1)])
    run = _run([("q1", "a", 4.0), ("q1", "b", 3.0), ("q1", "c", 2.0), ("q1", "d", 1.0), ("q2", "y", 1.0)])
    return qrels, run, rank(run, qrels)


def test_rows_show_their_arithmetic_linear_gain(small):
    _, _, ranked = small
    frame = ex.explain(ranked, "q1", "nDCG@4")
    assert frame["rank"].tolist() == [1, 2, 3, 4]
    assert frame["docno"].tolist() == ["a", "b", "c", "d"]
    assert frame["status"].astype(str).tolist() == ["judged", "unjudged", "judged", "judged"]
    assert frame["grade"].isna().tolist() == [False, True, False, False]
    assert frame["gain"].tolist() == [2.0, 0.0, 0.0, 1.0]
    assert frame["discount"].tolist() == pytest.approx([1 / log2(2), 1 / log2(3), 1 / log2(4), 1 / log2(5)])
    dcg = [2 / log2(2), 2 / log2(2), 2 / log2(2), 2 / log2(2) + 1 / log2(5)]
    assert frame["dcg"].tolist() == pytest.approx(dcg)
    # ideal: e(3), a(2), d(1); c (grade 0) has no gain and is not in the ideal ranking
    assert frame["ideal_grade"].tolist()[:3] == [3, 2, 1] and pd.isna(frame["ideal_grade"].iloc[3])
    idcg = [3 / log2(2), 3 / log2(2) + 2 / log2(3), 3 / log2(2) + 2 / log2(3) + 1 / log2(4)]
    assert frame["idcg"].tolist() == pytest.approx(idcg + [idcg[-1]])
    assert frame["ndcg"].iloc[-1] == pytest.approx((2 + 1 / log2(5)) / (3 + 2 / log2(3) + 1 / log2(4)))
    assert frame.attrs["measure"] == "nDCG@4" and frame.attrs["qid"] == "q1"


def test_exponential_gain(small):
    _, _, ranked = small
    frame = ex.explain(ranked, "q1", "nDCG(dcg='exp-log2')@2")
    assert frame["gain"].tolist() == [3.0, 0.0]          # 2^2 - 1, unjudged 0
    assert frame["ideal_gain"].tolist() == [7.0, 3.0]    # 2^3 - 1, 2^2 - 1
    assert frame["ndcg"].iloc[-1] == pytest.approx(3 / (7 + 3 / log2(3)))


def test_rows_past_the_end_of_the_run_keep_counting_idcg(small):
    _, _, ranked = small
    frame = ex.explain(ranked, "q2", "nDCG@3")
    assert frame["status"].astype(str).tolist() == ["unjudged", "not retrieved", "not retrieved"]
    assert frame["docno"].iloc[0] == "y" and frame["docno"].iloc[1:].isna().all()
    assert frame["idcg"].tolist() == [1.0, 1.0, 1.0]
    assert frame["ndcg"].tolist() == [0.0, 0.0, 0.0]


def test_no_cutoff_covers_every_relevant_document():
    qrels = _qrels([("q", d, 1) for d in "abcde"])
    ranked = rank(_run([("q", "a", 2.0), ("q", "z", 1.0)]), qrels)
    frame = ex.explain(ranked, "q", "nDCG")
    assert len(frame) == 5  # max(2 retrieved, 5 relevant)
    expected = evaluate_ranked(ranked, ["nDCG"])["nDCG"][0]
    assert frame["ndcg"].iloc[-1] == expected


def test_judged_only_condenses_the_rows(small):
    _, _, ranked = small
    frame = ex.explain(ranked, "q1", "nDCG(judged_only=True)@3")
    assert frame["docno"].tolist() == ["a", "c", "d"]
    assert frame["ndcg"].iloc[-1] == evaluate_ranked(ranked, ["nDCG(judged_only=True)@3"])[
        "nDCG(judged_only=True)@3"][0]


def test_inferred_rows_are_labelled(small):
    qrels, run, _ = small
    proxy = _qrels([("q1", "b", 3)])
    ranked = rank(run, qrels, inferred=proxy)
    frame = ex.explain(ranked, "q1", "nDCG@4")
    assert frame["status"].astype(str).tolist()[1] == "inferred"
    assert frame["grade"].iloc[1] == 3 and frame["gain"].iloc[1] == 3.0
    assert frame["ndcg"].iloc[-1] == evaluate_ranked(ranked, ["nDCG@4"])["nDCG@4"][0]


def test_titles_from_docs(small):
    _, _, ranked = small
    frame = ex.explain(ranked, "q1", "nDCG@2", docs=pd.DataFrame({"docno": ["a"], "title": ["Alpha"]}))
    assert frame["title"].iloc[0] == "Alpha" and pd.isna(frame["title"].iloc[1])
    other = ex.explain(ranked, "q1", "nDCG@2", docs={"b": "Beta"})["title"]
    assert pd.isna(other.iloc[0]) and other.iloc[1] == "Beta"


def test_errors_name_the_problem(small):
    _, _, ranked = small
    with pytest.raises(MetricsError, match="not among the evaluated queries"):
        ex.explain(ranked, "nope")
    with pytest.raises(MetricsError, match="nDCG, DCG or IDCG"):
        ex.explain(ranked, "q1", "AP")


@pytest.fixture(scope="module")
def legal():
    qrels = metrics.read_qrels(LEGAL / "qrels.txt")
    runs = [metrics.read_run(path) for path in sorted(LEGAL.glob("*.run"))]
    return qrels, runs


@pytest.mark.parametrize("gain", ["linear", "exp"])
@pytest.mark.parametrize("cutoff", [10, None])
def test_last_ndcg_equals_the_leaderboard_exactly(legal, gain, cutoff):
    """Every query of every legal run: explain's last nDCG@k == metrics.evaluate's value (not approx)."""
    qrels, runs = legal
    measure = metrics.with_gain("nDCG" if cutoff is None else f"nDCG@{cutoff}", gain)
    board = metrics.evaluate(qrels, runs, [measure])
    for run in runs:
        ranked = rank(run, qrels)
        expected = board[board["system"] == run.name].set_index("qid")["value"]
        via_ranked = evaluate_ranked(ranked, [measure])[measure]
        for i, qid in enumerate(ranked.qids):
            last = ex.explain(ranked, qid, measure)["ndcg"].iloc[-1]
            assert last == expected[qid] == via_ranked[i], (run.name, qid, measure)


def test_dcg_and_idcg_columns_equal_their_measures(legal):
    qrels, runs = legal
    ranked = rank(runs[0], qrels)
    values = evaluate_ranked(ranked, ["DCG(dcg='exp-log2')@10", "IDCG(dcg='exp-log2')@10"])
    for i, qid in enumerate(ranked.qids[:10]):
        frame = ex.explain(ranked, qid, "nDCG(dcg='exp-log2')@10")
        assert frame["dcg"].iloc[-1] == values["DCG(dcg='exp-log2')@10"][i]
        assert frame["idcg"].iloc[-1] == values["IDCG(dcg='exp-log2')@10"][i]
        assert frame["contribution"].to_numpy() == pytest.approx(frame["gain"] * frame["discount"])


def test_ideal_ranking_and_unretrieved(small):
    qrels, _, ranked = small
    ideal = ex.ideal_ranking(qrels, "q1", "nDCG", ranked=ranked)
    assert ideal["docno"].tolist() == ["e", "a", "d"]
    assert ideal["grade"].tolist() == [3, 2, 1]
    assert ideal["retrieved_rank"].isna().tolist() == [True, False, False]
    assert ideal["retrieved_rank"].tolist()[1:] == [1, 4]
    assert ideal["idcg"].iloc[-1] == pytest.approx(3 + 2 / log2(3) + 1 / log2(4))
    assert ex.explain(ranked, "q1", "nDCG@3")["idcg"].iloc[-1] == pytest.approx(ideal["idcg"].iloc[-1])

    missed = ex.unretrieved(qrels, ranked, "q1")
    assert missed["docno"].tolist() == ["e"] and missed["grade"].tolist() == [3]
    below = ex.unretrieved(qrels, ranked, "q1", depth=2)
    assert below["docno"].tolist() == ["e", "d"] and below["retrieved_rank"].tolist()[1] == 4
    assert ex.unretrieved(qrels, ranked, "q1", rel_level=3)["docno"].tolist() == ["e"]


def test_relevance_matrix(small):
    _, _, ranked = small
    matrix = ex.relevance_matrix(ranked, depth=5)
    assert matrix.qids.tolist() == ["q1", "q2"]
    np.testing.assert_array_equal(matrix.status[0], [1, 2, 1, 1, 0])
    np.testing.assert_array_equal(matrix.grade[0, [0, 2, 3]], [2, 0, 1])
    assert np.isnan(matrix.grade[0, 1]) and np.isnan(matrix.grade[0, 4])
    assert matrix.docno[0, :4].tolist() == ["a", "b", "c", "d"]
    assert ex.relevance_matrix(ranked, depth=2, qids=["q2", "q1"]).qids.tolist() == ["q2", "q1"]
    assert matrix.frame().shape == (2, 5)


def test_order_queries():
    frame = pd.DataFrame({"system": ["A", "A", "A", "B", "B", "B"], "qid": ["1", "2", "10"] * 2,
                          "measure": "nDCG@10", "value": [0.5, 0.1, 0.9, 0.5, 0.9, 0.2]})
    hardest = ex.order_queries(frame, "nDCG@10")
    assert hardest["mean"].tolist() == pytest.approx([0.5, 0.5, 0.55])
    assert hardest.index.tolist() == ["1", "2", "10"]  # ties in query id order, 2 before 10
    by_diff = ex.order_queries(frame, by="difference", pair=("A", "B"))
    assert by_diff.index.tolist() == ["2", "10", "1"]
    assert by_diff["difference"].tolist() == pytest.approx([-0.8, 0.7, 0.0])
    assert ex.order_queries(frame, by="qid").index.tolist() == ["1", "2", "10"]
    with pytest.raises(MetricsError):
        ex.order_queries(frame, by="difference")


def test_a_query_the_run_lacks_is_all_not_retrieved():
    qrels = _qrels([("q1", "a", 1), ("q2", "b", 2)])
    ranked = rank(_run([("q1", "a", 1.0)]), qrels)  # q2 missing: scored 0 (trec_eval -c)
    frame = ex.explain(ranked, "q2", "nDCG@3")
    assert frame["status"].astype(str).tolist() == ["not retrieved"] * 3
    assert frame["idcg"].tolist() == [2.0, 2.0, 2.0] and frame["ndcg"].tolist() == [0.0, 0.0, 0.0]
    assert ex.unretrieved(qrels, ranked, "q2")["docno"].tolist() == ["b"]

