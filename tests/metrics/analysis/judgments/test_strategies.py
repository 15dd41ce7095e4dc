"""metrics.analysis.judgments.strategies: the leaderboard under each treatment of unjudged
documents, rank agreement, Judged@k warnings and proxy agreement, on the hand-built case of case.py."""
from __future__ import annotations

import pandas as pd
import pytest

import metrics
from metrics.analysis import judgments as J
from tests.metrics.analysis.judgments.case import LEGAL, RUNS, make_run


def test_strategy_table_ranks_and_changes():
    table = J.strategy_table({"zero": {"A": 0.5, "B": 0.4, "C": 0.3},
                              "condensed": {"A": 0.5, "B": 0.6, "C": 0.3}})
    got = {(r.strategy, r.system): (r.rank, r.change) for r in table.itertuples()}
    assert got[("zero", "A")] == (1, 0) and got[("zero", "B")] == (2, 0) and got[("zero", "C")] == (3, 0)
    # B overtakes A once unjudged documents are dropped: B up one place, A down one
    assert got[("condensed", "B")] == (1, 1) and got[("condensed", "A")] == (2, -1)
    assert got[("condensed", "C")] == (3, 0)
    assert list(table.columns) == ["system", "strategy", "value", "rank", "change"]


def test_strategy_table_ties_share_the_better_rank():
    table = J.strategy_table({"x": {"A": 0.5, "B": 0.5 + 1e-15, "C": 0.1}})
    assert list(table["rank"]) == [1, 1, 3]


def test_kendall_tau_between_strategies_by_hand():
    table = J.strategy_table({"zero": {"A": 0.5, "B": 0.4, "C": 0.3},
                              "condensed": {"A": 0.5, "B": 0.6, "C": 0.3}})
    agreement = J.rank_agreement(table)
    row = agreement.iloc[0]
    # pairs (A,C) and (B,C) agree, (A,B) swaps: tau = (2 - 1) / 3
    assert (row.strategy_a, row.strategy_b) == ("zero", "condensed")
    assert row.tau == pytest.approx(1 / 3)
    assert (row.systems, row.changed) == (3, 2)


def test_condensed_leaderboard_equals_the_engines_judged_only_measure():
    """The 'condensed' column is nDCG(judged_only=True)@10 of metrics.evaluate, exactly."""
    runs = sorted(str(p) for p in LEGAL.glob("*.run"))
    qrels = str(LEGAL / "qrels.txt")
    table = J.evaluate_strategies(qrels, runs, "nDCG@10")
    condensed = table[table["strategy"] == "condensed"].set_index("system")["value"]
    engine = metrics.means(metrics.evaluate(qrels, runs, ["nDCG(judged_only=True)@10"]))["nDCG(judged_only=True)@10"]
    assert condensed.to_dict() == engine.to_dict()
    zero = table[table["strategy"] == "zero"].set_index("system")["value"]
    assert zero.to_dict() == metrics.means(metrics.evaluate(qrels, runs, ["nDCG@10"]))["nDCG@10"].to_dict()


def test_legal_sample_changes_rank_between_strategies():
    runs = sorted(str(p) for p in LEGAL.glob("*.run"))
    proxy = LEGAL / "proxy.txt"
    table = J.evaluate_strategies(str(LEGAL / "qrels.txt"), runs, "nDCG(dcg='exp-log2')@10",
                                  proxy=str(proxy) if proxy.exists() else None)
    condensed = table[table["strategy"] == "condensed"].set_index("system")
    # dense retrieves the most unjudged documents: dropping them lifts it past bm25_qe
    assert condensed.loc["dense", "change"] == 1 and condensed.loc["bm25_qe", "change"] == -1
    if proxy.exists():
        inferred = table[table["strategy"] == "inferred"].set_index("system")
        assert inferred.loc["dense", "change"] == 1


def test_inferred_strategy_uses_proxy_labels(qrels):
    run = make_run("A", RUNS["A"])
    proxy = metrics.read_qrels(pd.DataFrame([("1", "u1", 3), ("1", "d1", 0)], columns=["qid", "docno", "label"]))
    table = J.evaluate_strategies(qrels, [run], "P@3", proxy=proxy)
    value = table.set_index("strategy")["value"]
    # q1 top 3 = d2 d1 u1: 1 relevant; the proxy adds u1 (its label for judged d1 is ignored)
    # q2 top 3 = a2 u2 a1: 1 relevant either way
    assert value["zero"] == pytest.approx((1 / 3 + 1 / 3) / 2)
    assert value["inferred"] == pytest.approx((2 / 3 + 1 / 3) / 2)


def test_judged_warnings_best_gap_and_median_gap():
    by_best = J.judged_warnings({"A": 0.95, "B": 0.94, "C": 0.80})
    assert list(by_best["system"]) == ["C"]
    assert by_best.iloc[0]["reason"] == "more than 0.1 below the best"
    assert by_best.iloc[0]["below_best"] == pytest.approx(0.15)
    by_median = J.judged_warnings({"A": 0.95, "B": 0.95, "C": 0.95, "D": 0.88})
    assert list(by_median["system"]) == ["D"]
    assert by_median.iloc[0]["reason"] == "more than 0.05 below the median"
    assert J.judged_warnings({"A": 0.90, "B": 0.86}).empty          # gaps 0.04 and 0.02
    assert J.judged_warnings({"A": 0.10}).empty                      # nothing to compare with


def test_legal_sample_flags_dense():
    runs = sorted(str(p) for p in LEGAL.glob("*.run"))
    judged = metrics.means(metrics.evaluate(str(LEGAL / "qrels.txt"), runs, ["Judged@10"]))["Judged@10"]
    assert list(J.judged_warnings(judged)["system"]) == ["dense"]



def test_proxy_agreement(qrels):
    proxy = metrics.read_qrels(pd.DataFrame(
        [("1", "u1", 2), ("1", "d1", 2), ("1", "d2", 1), ("1", "d4", 3), ("7", "x", 1)],
        columns=["qid", "docno", "label"]))
    got = J.proxy_agreement(qrels, proxy)
    # overlap d1 (same), d2 (one off), d4 (three off); u1 fills a gap; query 7 is not in the qrels
    assert got == {"labels": 5, "fills": 1, "overlap": 3, "exact": pytest.approx(1 / 3),
                   "within_one": pytest.approx(2 / 3)}
