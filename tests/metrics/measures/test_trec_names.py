"""metrics.measures.trec_names: trec_eval spellings as aliases, expansion of the ones that stand
for several, round trips."""
from __future__ import annotations

import pytest

from metrics.errors import MetricsError
from metrics.measures import expand, parse, trec_plan, with_gain


@pytest.mark.parametrize("trec, ours", [
    ("ndcg_cut.10", "nDCG@10"), ("ndcg", "nDCG"), ("map", "AP"), ("map_cut.5", "AP@5"), ("recip_rank", "RR"),
    ("P.5", "P@5"), ("recall.100", "R@100"), ("success.1", "Success@1"), ("bpref", "Bpref"), ("BPref", "Bpref"),
    ("iprec_at_recall.0.1", "IPrec@0.1"), ("iprec_at_recall..25", "IPrec@0.25"), ("num_q", "NumQ"),
    ("num_rel_ret", "NumRelRet"), ("set_P", "SetP"), ("set_relative_P", "SetP(relative=True)"),
    ("SetRelP", "SetP(relative=True)"), ("set_recall", "SetR"), ("set_map", "SetAP"), ("set_F", "SetF"),
    ("set_F.0.5", "SetF(beta=0.5)"), ("Rprec_mult.0.2", "Rprec_mult(mult=0.2)"), ("rbp", "RBP(p=0.9)"),
    ("rbp.p=0.5", "RBP(p=0.5)"), ("rbp_resid", "rbp_resid"), ("utility.2,-1,0,0", "utility(a=2)"),
    ("ndcg.1=3,2=9", "nDCG(gains={1:3,2:9})"), ("11pt_avg..25,.5", "11pt_avg(levels=(0.25,0.5))"),
    ("ndcg_cut.23.4", "nDCG@23"),  # trec_eval reads cutoffs with atol
    ("relative_P.5", "relative_P@5"), ("unj.5", "unj@5"), ("G.1=2", "G(gains={1:2})"), ("MAP", "AP"),
])
def test_trec_eval_spellings_are_aliases(trec, ours):
    assert str(parse(trec)) == ours


def test_names_that_stand_for_several_measures_expand():
    assert [str(m) for m in expand("P.5,10")] == ["P@5", "P@10"]
    assert [str(m) for m in expand("P")] == [f"P@{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    assert [str(m) for m in expand("success")] == ["Success@1", "Success@5", "Success@10"]
    assert len(expand("Rprec_mult")) == 10 and len(expand("iprec_at_recall")) == 11
    assert [str(m) for m in expand("nDCG@10")] == ["nDCG@10"]
    everything = expand("all_trec")
    assert len(everything) == 98  # all_trec's 100 values less runid and relstring (text)
    assert {str(m) for m in expand("official")} <= {str(m) for m in everything}
    with pytest.raises(MetricsError, match="stands for 2 measures"):
        parse("P.5,10")
    with pytest.raises(MetricsError, match="needs a cutoff"):
        parse("P")


def test_every_all_trec_measure_prints_back_to_itself():
    for measure in expand("all_trec") + expand("official") + expand("set"):
        assert str(parse(str(measure))) == str(measure)


def test_trec_eval_order_and_printed_names():
    plan = trec_plan(["P.10,5", "map", "iprec_at_recall.0.5,0.25", "ndcg_cut.10"])
    assert [v.printed for v in plan] == ["map", "iprec_at_recall_0.25", "iprec_at_recall_0.50", "P_5", "P_10",
                                         "ndcg_cut_10"]
    # the first -m with parameters wins; a nickname adds its measures with their defaults
    assert [v.printed for v in trec_plan(["P.5", "P.10", "official"]) if v.printed.startswith("P_")] == ["P_5"]
    # dcg, ideal_dcg and ndcg share trec_eval's parameter record
    shared = [(v.printed, str(v.measure)) for v in trec_plan(["dcg.1=2", "ndcg"])]
    assert shared == [("dcg_1=2", "DCG(gains={1:2})"), ("ndcg_1=2", "nDCG(gains={1:2})")]


def test_gain_rewrites_reach_every_ndcg_like_measure():
    assert with_gain("G", "exp") == "G(dcg='exp-log2')"
    assert with_gain("ndcg_rel", "exp") == "ndcg_rel(dcg='exp-log2')"
    assert with_gain("Rndcg", "exp") == "Rndcg(dcg='exp-log2')"
    assert with_gain("Bpref", "exp") == "Bpref"
