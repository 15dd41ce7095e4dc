"""The Measure behaviour page in AppTest: the legal sample (its proxy as a second judge) and the web sample."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats as sst

import metrics
from metrics.stats.behaviour import label_agreement

ROOT = Path(__file__).resolve().parents[2]
LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"
PAGE = "views/behaviour.py"
TAB = "behaviour_tab"   # the page's tabs: only the open one is computed (session state: its label)
EXP10 = "nDCG(dcg='exp-log2')@10"


def charts(at) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


@pytest.fixture(scope="module")
def legal_means():
    runs = sorted(LEGAL.glob("*.run"))
    return metrics.means(metrics.evaluate(LEGAL / "qrels.txt", runs, [EXP10, "AP", "RR", "R@100", "P@10"]))


def test_legal_page_shows_every_view_and_the_library_tau(open_app, legal_means):
    at = open_app(PAGE)
    assert [t.label for t in at.tabs] == ["Agreement", "Discriminative power", "Topic-set size",
                                          "Incomplete judgments", "Two qrels"]
    tau = at.table[0].value
    expected = sst.kendalltau(legal_means[EXP10], legal_means["R@100"]).statistic
    assert tau.loc[EXP10, "R@100"] == f"{expected:.3f}"
    ranks = at.table[1].value
    assert ranks.loc["bm25_ce", EXP10] == 1
    assert len(charts(at)) == 4   # the open tab alone: 2 heatmaps, 2 scatters
    assert not at.metric          # the two-qrels tab is not computed while another is open
    drawn = {"Discriminative power": 1, "Topic-set size": 1, "Incomplete judgments": 1, "Two qrels": 1}
    for label, count in drawn.items():   # ASL, swaps, reduction, confusion: each when its tab is opened
        at.session_state[TAB] = label
        at.run()
        assert not at.exception, label
        assert len(charts(at)) == count, label
    # the two-qrels tab: the sample's proxy labels are judge B
    agreement = label_agreement(LEGAL / "qrels.txt", LEGAL / "proxy.txt")
    values = {m.label: m.value for m in at.metric}
    assert values["Pairs judged by both"] == f"{agreement['shared']:,}"
    assert values["Weighted κ (linear)"] == f"{agreement['kappa_linear']:.3f}"


def test_switching_the_scatter_measure_updates_the_caption(open_app, legal_means):
    at = open_app(PAGE)
    at.selectbox(key="beh_scatter_b").select("RR").run()
    assert not at.exception
    caption = next(c.value for c in at.caption if c.value.startswith("Mean per system under"))
    expected = sst.kendalltau(legal_means[EXP10], legal_means["RR"]).statistic
    assert f"τ-b = {expected:.3f}" in caption


def test_seed_changes_the_power_result_and_is_shown(open_app):
    at = open_app(PAGE)
    at.session_state[TAB] = "Discriminative power"
    at.run()
    at.number_input(key="beh_seed").set_value(5).run()
    assert not at.exception
    assert any("seed 5" in c.value for c in at.caption)


def test_web_sample_renders_without_a_second_judge(open_app):
    at = open_app(run=False)
    at.session_state["collection"] = "web"
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["collection"] == "web"
    assert at.table[1].value.shape[0] == 3   # hybrid, lexical, neural
    at.session_state[TAB] = "Two qrels"
    at.run()
    assert any("has a single qrels" in i.value for i in at.info)


def test_more_pairs_than_points_draw_their_density_and_its_table(open_app, tmp_path):
    """Beyond MAX_POINTS (system, query) pairs the per-query scatter is their density, the chart's
    data table its matrix of counts, not a row per pair."""
    import numpy as np

    from metrics.report.figures.behaviour import MAX_POINTS
    from ndcg_lab.ui.charts import DATA_LABEL
    from tests.views.many_queries import home_of_two_runs

    n = MAX_POINTS // 2 + 1
    # "a" finds the relevant document at rank 1 everywhere; "b" at rank 1 or 2 in turn
    home = home_of_two_runs(tmp_path, n, 2)
    at = open_app(PAGE, home=home)
    density = next(c for c in at.get("plotly_chart") if c.proto.id and "beh_query_scatter" in c.proto.id)
    spec = json.loads(density.proto.spec)
    assert [t["type"] for t in spec["data"]] == ["heatmap"]
    assert spec["layout"]["title"]["text"] == f"{2 * n:,} (system, query) pairs of 2 systems, drawn as their density"
    # nDCG@10 and AP are 1 where the document is at rank 1 (every query of a, the even queries of b)
    # and 1 / log2(3) and 1/2 at rank 2 (the odd queries of b)
    tables = [d.value for e in at.expander if e.label == DATA_LABEL for d in e.dataframe]
    counts = next(t for t in tables if t.shape == (40, 41)).iloc[:, 1:].to_numpy(dtype=float)
    assert np.nansum(counts) == 2 * n and np.nanmax(counts) == n + (n + 1) // 2
    assert sorted(counts[~np.isnan(counts)].astype(int)) == [n // 2, n + (n + 1) // 2]
