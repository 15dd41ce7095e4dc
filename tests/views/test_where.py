"""Where it differs (AppTest): the detected pair, the headroom share and the band means are the library's;
a pair that is no re-ranking is said so, and can be declared one; the Query explorer's two-run view."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import metrics
from metrics.analysis import explain
from metrics.analysis.bands import bands
from metrics.analysis.headroom import headroom
from tests.conftest import assert_ok
from tests.metrics.threads import force_threads

ROOT = Path(__file__).resolve().parents[2]
LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"
NDCG10 = "nDCG(dcg='exp-log2')@10"   # the sidebar's default gain


@pytest.fixture
def page(open_app, shared_home):
    return open_app("views/where.py", home=shared_home)


def _metric(at, label: str) -> str:
    (value,) = [m.value for m in at.metric if m.label == label]
    return value


def test_detected_pair_and_the_librarys_share(page):
    assert page.selectbox(key="where_a::legal").value == "bm25"
    assert page.selectbox(key="where_b::legal::bm25").value == "bm25_ce"
    expected = headroom(LEGAL / "qrels.txt", LEGAL / "bm25.run", LEGAL / "bm25_ce.run", measure=NDCG10)
    assert _metric(page, "Share of the headroom reached") == f"{100 * expected.summary['share']:.1f}%"
    assert _metric(page, "Oracle of the top 100") == f"{expected.summary['oracle']:.4f}"
    assert any("re-ranks bm25's top **100** (detected" in c.value for c in page.caption)
    assert any("relative to the first stage" in m.value for m in page.markdown)
    assert not any("5-15" in m.value for m in page.markdown)   # no unsourced benchmark band
    split = bands(LEGAL / "qrels.txt", LEGAL / "bm25.run", LEGAL / "bm25_ce.run", gain="exp")
    by_band = [t.value for t in page.table if list(t.value.columns) == ["B − A"]][0]
    assert by_band["B − A"].tolist() == [f"{v:+.4f}" for v in split.means("band")]


def test_the_bands_computed_beside_the_headroom_are_the_librarys(open_app, shared_home, monkeypatch):
    """For large runs the rank bands are computed on a second thread, in the script run's context,
    while the page computes the headroom (forced here for the sample): the page shows the same
    bands and headroom, and a bad band edge is still said in the page."""
    started = force_threads(monkeypatch)
    at = open_app("views/where.py", home=shared_home)
    assert "in_this_run" in started
    expected = headroom(LEGAL / "qrels.txt", LEGAL / "bm25.run", LEGAL / "bm25_ce.run", measure=NDCG10)
    assert _metric(at, "Share of the headroom reached") == f"{100 * expected.summary['share']:.1f}%"
    split = bands(LEGAL / "qrels.txt", LEGAL / "bm25.run", LEGAL / "bm25_ce.run", gain="exp")
    by_band = [t.value for t in at.table if list(t.value.columns) == ["B − A"]][0]
    assert by_band["B − A"].tolist() == [f"{v:+.4f}" for v in split.means("band")]
    at.text_input(key="where_edges").set_value("3,ten").run()
    assert_ok(at)
    assert [e.value for e in at.error] == ["Band edges are whole numbers separated by commas, e.g. 3,10,20,100."]
    assert _metric(at, "Share of the headroom reached") == f"{100 * expected.summary['share']:.1f}%"


def test_a_pair_that_is_no_reranking_can_be_declared_one(page):
    page.selectbox(key="where_b::legal::bm25").set_value("dense").run()
    assert_ok(page)
    assert any("it is no re-ranking of it" in c.value for c in page.caption)
    assert not [m for m in page.metric if m.label == "Share of the headroom reached"]
    page.toggle(key="where_declare::bm25::dense").set_value(True).run()
    assert_ok(page)
    expected = headroom(LEGAL / "qrels.txt", LEGAL / "bm25.run", LEGAL / "dense.run", depth=100, measure=NDCG10)
    assert _metric(page, "Share of the headroom reached") == f"{100 * expected.summary['share']:.1f}%"
    assert any(f"On {expected.summary['outside']} queries dense's top 100" in c.value for c in page.caption)


def test_query_explorer_two_run_waterfall(open_app, shared_home):
    at = open_app("views/query.py", home=shared_home)
    qid = at.selectbox(key="qe_qid").value
    pickers = [s for s in at.selectbox if s.label in ("Run A", "Run B")]
    a, b = (p.value for p in pickers)
    pickers[1].set_value(pickers[0].options[2]).run()     # another run as B: the figure follows
    assert_ok(at)
    b = at.selectbox(key=pickers[1].key).value
    (chart,) = [c for c in at.get("plotly_chart") if "qe_pair_waterfall" in c.proto.id]
    spec = json.loads(chart.proto.spec)
    diff = [t for t in spec["data"] if t["type"] == "waterfall"][0]
    qrels = metrics.read_qrels(LEGAL / "qrels.txt")
    frames = [explain.explain(metrics.rank_run(qrels, LEGAL / f"{n}.run"), qid, NDCG10) for n in (a, b)]
    assert diff["y"][-1] == pytest.approx(frames[1]["dcg"].iloc[-1] - frames[0]["dcg"].iloc[-1], abs=1e-12)


def test_run_names_are_plain_text(open_app, tmp_path):
    """A run named like Markdown shows letter for letter in the page's sentences."""
    from metrics.store import Workspace
    from ndcg_lab.ui.text import md

    hostile = "ce **x** [a](http://e.com) <b>"
    home = tmp_path / "home"
    home.mkdir()
    ws = Workspace(home / "workspace.duckdb")
    ws.create_collection("mine", metrics.read_qrels(LEGAL / "qrels.txt"))
    ws.add_run("mine", metrics.read_run(LEGAL / "bm25.run"), name="bm25")
    ws.add_run("mine", metrics.read_run(LEGAL / "bm25_ce.run"), name=hostile)
    ws.close()
    at = open_app("views/where.py", home=home)
    texts = [e.value for e in (*at.caption, *at.markdown)]
    assert any(md(hostile) in t for t in texts), texts[:3]
    assert not any(hostile in t for t in texts)
    assert at.selectbox(key="where_b::mine::bm25").value == hostile
