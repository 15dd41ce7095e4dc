"""Descriptive measures are never tested; the correction family is every cell or each measure apart."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import metrics
from metrics import stats
from metrics.errors import MetricsError

LEGAL = Path(__file__).resolve().parents[3] / "ndcg_lab" / "sample_data" / "legal"
MEASURES = ["nDCG(dcg=exp-log2)@10", "AP", "Judged@10", "NumRet", "NumRel", "NumRelRet"]


@pytest.fixture(scope="module")
def legal_frame():
    runs = [LEGAL / f"{name}.run" for name in ("bm25", "bm25_ce", "dense")]
    return metrics.evaluate(LEGAL / "qrels.txt", runs, MEASURES)


@pytest.mark.parametrize("name", ["Judged@10", "NumRet", "NumRel", "NumRelRet", "NumQ", "unj@10", "num_ret",
                                  "NumRet(rel=1)", "IDCG@10"])
def test_counts_and_judged_shares_are_descriptive(name):
    assert stats.is_descriptive(name)


@pytest.mark.parametrize("name", ["nDCG@10", "AP", "P@10", "RR", "Bpref", "infAP", "R@100",
                                  "nDCG(judged_only=True)@10"])
def test_effectiveness_measures_are_not(name):
    assert not stats.is_descriptive(name)


def test_descriptive_measures_get_no_p_value_no_marker_and_join_no_family(legal_frame):
    table = stats.compare(legal_frame, "bm25", correction="holm")
    descriptive = table["measure"].isin(["Judged@10", "NumRet", "NumRel", "NumRelRet"])
    assert descriptive.sum() == 8
    assert table.loc[descriptive, "p_value"].isna().all() and table.loc[descriptive, "p_adjusted"].isna().all()
    assert (table.loc[descriptive, "marker"] == "").all() and not table.loc[descriptive, "significant"].any()
    # Holm by hand over the four tested cells only: sorted p times 4, 3, 2, 1, running maximum
    tested = table[~descriptive]
    p = tested["p_value"].to_numpy()
    order = np.argsort(p)
    by_hand = np.empty(4)
    by_hand[order] = np.minimum(np.maximum.accumulate(p[order] * np.array([4, 3, 2, 1])), 1)
    assert tested["p_adjusted"].to_numpy() == pytest.approx(by_hand)
    assert (table["family"] == "all").all()


def test_per_measure_family_adjusts_each_measure_over_its_systems(legal_frame):
    table = stats.compare(legal_frame, "bm25", measures=["nDCG(dcg=exp-log2)@10", "AP"], correction="bonferroni",
                          family="measure")
    # two systems per measure: Bonferroni multiplies by 2, not by the 4 cells of the table
    assert table["p_adjusted"].to_numpy() == pytest.approx(np.minimum(table["p_value"].to_numpy() * 2, 1))
    every = stats.compare(legal_frame, "bm25", measures=["nDCG(dcg=exp-log2)@10", "AP"], correction="bonferroni")
    assert every["p_adjusted"].to_numpy() == pytest.approx(np.minimum(every["p_value"].to_numpy() * 4, 1))
    assert (table["family"] == "measure").all()
    with pytest.raises(MetricsError, match="correction family"):
        stats.compare(legal_frame, "bm25", family="row")


def test_versus_baseline_states_the_family_and_skips_descriptive(legal_frame):
    rows = stats.versus_baseline(legal_frame, "bm25", family="measure")
    assert (rows["family"] == "measure").all()
    judged = rows[rows["measure"] == "Judged@10"]
    assert judged["p_value"].isna().all() and (judged["marker"] == "").all()
    ap = rows[rows["measure"] == "AP"]
    assert ap["p_holm"].to_numpy() == pytest.approx(stats.holm(ap["p_value"].to_numpy()))


def test_adjust_family_by_hand():
    p = [0.01, np.nan, 0.04, 0.02]
    # families {0.01, 0.04} and {0.02}; the NaN is left out and stays NaN
    out = stats.adjust_family(p, "bonferroni", ["a", "a", "a", "b"])
    assert out[0] == pytest.approx(0.02) and np.isnan(out[1]) and out[2] == pytest.approx(0.08)
    assert out[3] == pytest.approx(0.02)
    assert stats.family_label("holm", "measure") == "Holm over each measure apart, over its systems (as PyTerrier)"
    assert stats.family_label("none", "all") == "no correction"
