"""ndcg_lab.ui.where: the pair the page opens on and the detected depth, on the legal sample's workspace."""
from __future__ import annotations

import dataclasses

from ndcg_lab.ui import where


def test_default_pair_is_the_reranking(legal):
    sel, _ = legal
    names = list(where.digests(sel))
    assert set(names) == {"bm25", "bm25_ce", "bm25_qe", "dense"}
    assert where.default_pair(sel, names) == ("bm25", "bm25_ce")
    assert where.detected_depth(sel, "bm25", "bm25_ce") == 100
    assert where.detected_depth(sel, "bm25", "dense") is None
    assert where.default_pair(sel, ["dense", "bm25_qe"]) == ("dense", "bm25_qe")   # none detected: the first two
    # bm25_ce holds bm25's top 100 and bm25 holds bm25_ce's: the baseline is the first stage
    assert where.detected_depth(sel, "bm25_ce", "bm25") == 100
    assert where.default_pair(dataclasses.replace(sel, baseline="bm25_ce"), names) == ("bm25_ce", "bm25")


def test_share_text():
    assert where.share_text(0.12596) == "12.6%" and where.share_text(float("nan")) == "n/a"


def test_a_share_that_rounds_to_zero_reads_without_a_minus_sign():
    # -0.0004 of the headroom is -0.04%, which rounds to 0.0% at one decimal: no "-0.0%"
    assert where.share_text(-0.0004) == "0.0%" and where.share_text(-0.0006) == "-0.1%"
    assert where.percent(-0.0004, sign=True) == "+0.0%" and where.percent(0.0126, sign=True) == "+1.3%"
    assert where.share_text(-0.0) == "0.0%"
