"""ndcg_lab.ui.compare: the Compare page's cached tests and tables against a second route (scipy's paired t
test and Holm's correction written out over ``metrics.evaluate`` of the sample files), and its text
helpers on hand-made frames."""
from __future__ import annotations

import pandas as pd
import pytest
from scipy import stats as scipy_stats
from streamlit.testing.v1 import AppTest

import metrics
from ndcg_lab.ui import compare
from tests.conftest import assert_ok
from tests.ui.conftest import LEGAL

RUNS = {path.stem: path for path in sorted(LEGAL.glob("*.run"))}
QRELS = LEGAL / "qrels.txt"


def per_query(measure: str) -> pd.DataFrame:
    frame = metrics.evaluate(QRELS, RUNS, [measure])
    return frame.pivot(index="qid", columns="system", values="value")


def test_comparison_is_a_paired_t_test_with_holm(legal):
    sel, _ = legal
    rows = compare.comparison(sel, ("AP",), "bm25", ("bm25_ce", "dense"), "t", "holm", 0, 1000, 1000, 0.0, 0.05)
    values = per_query("AP")
    p = {s: scipy_stats.ttest_rel(values[s], values["bm25"]).pvalue for s in ("bm25_ce", "dense")}
    low, high = sorted(p, key=p.get)
    holm = {low: min(1.0, 2 * p[low])}
    holm[high] = min(1.0, max(holm[low], p[high]))
    got = rows.set_index("system")
    for system in ("bm25_ce", "dense"):
        delta = values[system] - values["bm25"]
        assert got.loc[system, "mean"] == pytest.approx(values[system].mean())
        assert got.loc[system, "baseline_mean"] == pytest.approx(values["bm25"].mean())
        assert got.loc[system, "diff"] == pytest.approx(delta.mean())
        assert got.loc[system, "p_value"] == pytest.approx(p[system], rel=1e-6)
        assert got.loc[system, "p_adjusted"] == pytest.approx(holm[system], rel=1e-6)
        assert got.loc[system, "effect_size"] == pytest.approx(delta.mean() / delta.std(ddof=1))
        assert (got.loc[system, "wins"], got.loc[system, "losses"]) == ((delta > 0).sum(), (delta < 0).sum())


def test_means_table_puts_the_baseline_first(legal):
    sel, _ = legal
    rows = compare.comparison(sel, ("AP", "RR"), "bm25", ("dense",), "t", "holm", 0, 1000, 1000, 0.0, 0.05)
    table = compare.means_table(rows, "bm25")
    expected = metrics.means(metrics.evaluate(QRELS, RUNS, ["AP", "RR"]))
    assert list(table.index) == ["bm25", "dense"] and list(table.columns) == ["AP", "RR"]
    assert table.to_numpy() == pytest.approx(expected.loc[["bm25", "dense"], ["AP", "RR"]].to_numpy())


def test_cutoff_means_are_measure_means_at_each_cutoff(legal):
    sel, _ = legal
    table = compare.cutoff_means(sel, "nDCG(dcg='exp-log2')", 20)
    assert list(table.columns) == ["@1", "@3", "@5", "@10", "@20"]
    expected = metrics.means(metrics.evaluate(QRELS, RUNS, [f"nDCG(dcg='exp-log2')@{k}" for k in (1, 3, 5, 10, 20)]))
    assert table.to_numpy() == pytest.approx(expected.loc[list(table.index)].to_numpy())


def test_with_systems_and_run_names(legal):
    sel, _ = legal
    narrowed = compare.with_systems(sel, ["dense", "bm25", "dense", "missing"])
    assert narrowed.system_names == ["dense", "bm25"]
    assert dict(narrowed.systems)["dense"] == dict(sel.systems)["dense"]
    assert sorted(compare.run_names(sel)) == sorted(RUNS)


def test_canonical_measures_expand_trec_names_and_report_errors():
    good, errors = compare.canonical_measures(["P.5,10", " nDCG(dcg='exp-log2')@10 ", "P@5", "bogus@"])
    assert good == ["P@5", "P@10", "nDCG(dcg='exp-log2')@10"]
    assert len(errors) == 1 and errors[0].startswith("bogus@: ")
    levels, _ = compare.canonical_measures(["iprec_at_recall"])
    assert len(levels) == 11


def test_suggested_measures_start_with_the_common_ones_in_the_gain():
    names = compare.suggested_measures("exp-log2")
    assert names[0] == metrics.with_gain("nDCG@10", "exp-log2") and "dcg='exp-log2'" in names[0]
    assert len(names) == len(set(names)) and "Bpref" in names and "P.5,10" in names
    assert compare.profile_family("P@10", "exp-log2") == "P"
    assert compare.profile_family("not a measure", "exp-log2") == metrics.with_gain("nDCG", "exp-log2")


def comparison_rows() -> pd.DataFrame:
    return pd.DataFrame({"system": ["ce"], "mean": [0.5], "baseline_mean": [0.4], "diff": [0.1], "rel_diff": [0.25],
                         "diff_ci_low": [0.05], "diff_ci_high": [0.15], "p_value": [0.0123], "p_adjusted": [0.0246],
                         "effect_size": [0.8], "wins": [30], "ties": [5], "losses": [15], "marker": ["▲"]})


def test_display_table_cells():
    shown = compare.display_table(comparison_rows(), level=0.95)
    row = shown.loc["ce"]
    assert shown.index.name == "System"
    assert (row["Mean"], row["Baseline mean"], row["Δ"]) == ("0.5000", "0.4000", "+0.1000")
    assert row["95% CI of Δ"] == "[+0.0500, +0.1500]"
    assert row["Effect size d"] == "+0.800" and row["Wins / ties / losses"] == "30 / 5 / 15" and row["Sig."] == "▲"
    assert "25" in row["Δ %"] and "0.012" in row["p"]


def test_per_query_adds_topic_text_and_extremes_pick_the_largest_moves():
    frame = pd.DataFrame({"system": ["b"] * 3 + ["s"] * 3, "qid": ["1", "2", "3"] * 2, "measure": "AP",
                          "value": [0.1, 0.5, 0.4, 0.6, 0.2, 0.4]})
    rows = compare.per_query(frame, "AP", "b", "s", pd.DataFrame({"qid": [1, 2], "text": ["cat", "dog"]}))
    assert dict(zip(rows["qid"], rows["text"])) == {"1": "cat", "2": "dog", "3": ""}
    assert dict(zip(rows["qid"], rows["delta"])) == pytest.approx({"1": 0.5, "2": -0.3, "3": 0.0})
    helped = compare.extremes(rows, helped=True, count=5, baseline="b", system="s", tolerance=1e-9)
    assert helped.index.tolist() == ["1"] and helped.loc["1"].tolist() == ["cat", "0.1000", "0.6000", "+0.5000"]
    hurt = compare.extremes(rows, helped=False, count=5, baseline="b", system="s", tolerance=1e-9)
    assert hurt.index.tolist() == ["2"] and hurt.loc["2", "Δ"] == "-0.3000"
    assert set(compare.per_query(frame, "AP", "b", "s", None)["text"]) == {""}


class Event:
    def __init__(self, points):
        self.selection = type("Selection", (), {"points": points})()


def test_clicked_qid():
    assert compare.clicked_qid(Event([{"customdata": ["q7", 0.3]}])) == "q7"
    assert compare.clicked_qid({"selection": {"points": [{"x": "q2", "curve_number": 0}]}}) == "q2"
    assert compare.clicked_qid({"selection": {"points": [{"x": 3.5, "curve_number": 0}]}}) is None
    assert compare.clicked_qid({"selection": {"points": [{"x": "q2", "curve_number": 1}]}}) is None
    assert compare.clicked_qid({}) is None and compare.clicked_qid(None) is None


def test_tukey_is_the_two_way_studentised_range(legal):
    sel, _ = legal
    systems = ["bm25", "bm25_ce", "dense"]
    table = compare.tukey(sel, "AP", tuple(systems))
    x = per_query("AP")[systems].to_numpy()
    n, m = x.shape
    residual = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0) + x.mean()
    se = (residual ** 2).sum() / ((n - 1) * (m - 1)) / n
    for row in table.itertuples():
        a, b = systems.index(row.system_a), systems.index(row.system_b)
        diff = x[:, b].mean() - x[:, a].mean()
        assert row.diff == pytest.approx(diff)
        q = abs(diff) / se ** 0.5
        assert row.p_value == pytest.approx(scipy_stats.studentized_range.sf(q, m, (n - 1) * (m - 1)), rel=1e-6)
    assert len(table) == m * (m - 1) // 2


def _open_query_script():
    import streamlit as st

    from ndcg_lab.ui import compare

    switched: list[str] = []
    switch, st.switch_page = st.switch_page, switched.append   # record where it goes, stay on this script
    try:
        compare.open_query("chart", "q1", ["a", "b"])
        compare.open_query("chart", "q1", ["a", "b"])   # the same selection on the next rerun: nothing
        st.session_state["handled"] = "_cmp_clicked::chart" in st.session_state
        compare.open_query("chart", None, ["a", "b"])   # the selection cleared
        st.session_state["cleared"] = "_cmp_clicked::chart" not in st.session_state
        compare.open_query("chart", "q1", ["a", "b"])   # clicked again: opened again
    finally:
        st.switch_page = switch
    st.session_state["switched"] = switched


def test_open_query_acts_on_a_click_once():
    from ndcg_lab.ui import compare

    at = AppTest.from_function(_open_query_script)
    at.run()
    assert_ok(at)
    assert at.session_state["switched"] == [compare.QUERY_PAGE, compare.QUERY_PAGE]
    assert at.session_state["handled"] is True and at.session_state["cleared"] is True
    assert at.session_state["query_qid"] == "q1" and at.session_state["query_systems"] == ["a", "b"]


def test_significance_markers_are_the_comparison_markers(legal):
    sel, _ = legal
    markers = compare.significance(sel, ("AP",), "bm25", "t", "holm").set_index("system")["marker"]
    rows = compare.comparison(sel, ("AP",), "bm25", ("bm25_ce", "bm25_qe", "dense"), "t", "holm", 0, 1000, 1000,
                              0.0, 0.05).set_index("system")["marker"]
    assert markers.to_dict() == rows.to_dict()
    assert markers["bm25_ce"] == "▲"   # p = 9e-7 on the sample (scipy, above)
