"""Query explorer page (AppTest): the per-rank table renders and its last nDCG is the library's value."""
from __future__ import annotations

from pathlib import Path

import pytest

import metrics

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "ndcg_lab" / "app.py")
LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"


@pytest.fixture
def app(open_app, shared_home):
    return open_app(home=shared_home)


@pytest.fixture(scope="module")
def board():
    """nDCG@10 with exponential gain (the sidebar's default) for every legal run and query, from metrics."""
    runs = {path.stem: path for path in sorted(LEGAL.glob("*.run"))}
    frame = metrics.evaluate(LEGAL / "qrels.txt", runs, ["nDCG(dcg='exp-log2')@10"])
    return frame.set_index(["system", "qid"])["value"]


def _per_rank(at):
    tables = [t.value for t in at.table if "nDCG@rank" in t.value.columns]
    assert tables, "no per-rank table on the page"
    return tables[0]


def test_default_query_rows_and_last_ndcg(app, board):
    at = app.switch_page("views/query.py").run()
    assert not at.exception, at.exception
    qid = at.selectbox(key="qe_qid").value
    focus = at.selectbox(key="qe_focus").value
    table = _per_rank(at)
    assert table["rank"].tolist() == list(range(1, 11))
    assert table["docno"].str.startswith("LEG-").all()
    assert table["nDCG@rank"].iloc[-1] == board[(focus, qid)]  # exact, not approx
    assert any("identical to the leaderboard" in m.value for m in at.markdown)
    # hardest first: the default query has the lowest mean over the selected systems
    means = board.groupby(level="qid").mean()
    assert means[qid] == pytest.approx(means.min())


def test_link_from_the_compare_page(app, board):
    app.session_state["query_qid"] = "7"
    app.session_state["query_systems"] = ["bm25_ce", "dense"]
    at = app.switch_page("views/query.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="qe_qid").value == "7"
    assert at.multiselect(key="qe_systems").value == ["bm25_ce", "dense"]
    assert _per_rank(at)["nDCG@rank"].iloc[-1] == board[("bm25_ce", "7")]
    assert at.query_params["qid"] == "7"  # the page keeps its URL shareable


def test_query_param_search_and_difference_order(app):
    app.query_params["qid"] = "12"
    at = app.switch_page("views/query.py").run()
    assert at.selectbox(key="qe_qid").value == "12"
    at.radio(key="qe_order").set_value("difference").run()
    assert not at.exception, at.exception
    at.selectbox(key="qe_focus").select(at.selectbox(key="qe_focus").options[-1]).run()
    at.slider(key="qe_k").set_value(5).run()
    assert not at.exception, at.exception
    assert len(_per_rank(at)) == 5
    at.text_input(key="qe_search").input("zzzz-no-such-topic").run()
    assert not at.exception
    assert any("No query id or topic" in w.value for w in at.warning)


def test_the_whole_collection_heatmap_draws_every_shown_system_in_one_chart(app):
    import json

    at = app.switch_page("views/query.py").run()
    at.multiselect(key="qe_systems").set_value(["bm25_ce", "dense", "bm25"]).run()
    assert not at.exception, at.exception
    (heat,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if "qe_heatmap" in c.proto.id]
    assert [t["name"] for t in heat["data"]] == ["bm25_ce", "dense", "bm25"]
    assert {t["type"] for t in heat["data"]} == {"heatmap"}
    assert len({tuple(t["y"]) for t in heat["data"]}) == 1     # the same query rows in every column


SECTION_COLUMNS = {"qt_disagree": "spread", "qt_found": "matched", "qt_overlap": "unique_relevant",
                   "qt_unique": "relevant"}


def _frame(at, key):
    """The query-text table ``key`` (found by the column only it has)."""
    (found,) = [d.value for d in at.dataframe if SECTION_COLUMNS[key] in d.value.columns]
    return found


def test_query_text_section(app, board):
    import numpy as np
    import pandas as pd

    at = app.switch_page("views/query.py").run()
    assert not at.exception, at.exception
    assert any(m.value.startswith("**nDCG") and "against query length" in m.value for m in at.markdown)
    topics = pd.read_csv(LEGAL / "topics.tsv", sep="\t", dtype=str)
    # disagreement: spread = max - min over the selected systems, recomputed from metrics' values
    disagree = _frame(at, "qt_disagree")
    systems = [s for s in disagree.columns if s in set(board.index.get_level_values("system"))]
    wide = board.unstack("system")[systems]
    spread = (wide.max(axis=1) - wide.min(axis=1)).sort_values(ascending=False)
    top = disagree.iloc[0]
    assert top["spread"] == pytest.approx(spread.iloc[0])
    assert top["text"] == topics.set_index("qid").loc[top["qid"], "text"]
    # search: whole words, every word
    at.text_input(key="qt_words").input("parking lot").run()
    found = _frame(at, "qt_found")
    expected = topics[topics["text"].str.contains(r"\bparking\b", case=False)
                      & topics["text"].str.contains(r"\blot\b", case=False)]
    assert sorted(found["qid"]) == sorted(expected["qid"]) and len(found) >= 1
    # overlap: a document counted unique is in exactly one shown system's top 10
    unique = _frame(at, "qt_unique")
    shown = at.multiselect(key="qe_systems").value
    tops = {s: metrics.read_run(LEGAL / f"{s}.run").table.to_pandas() for s in shown}
    row = unique.iloc[0]
    holders = []
    for s, t in tops.items():
        q = t[t["qid"] == row["qid"]].sort_values(["score", "docno"], ascending=False).head(10)
        holders += [s] if row["docno"] in set(q["docno"]) else []
    assert holders == [row["system"]]
    assert np.isfinite(_frame(at, "qt_overlap")["unique"]).all()


def test_a_long_list_of_unique_documents_shows_its_first_rows_and_downloads_them_all(app, monkeypatch):
    """Past :data:`ndcg_lab.ui.tables.SHOWN_ROWS` rows (set to 5 here: 7M-line runs have 125,548)
    the page shows the first rows, says so, and offers them all as CSV."""
    import ndcg_lab.ui.tables

    at = app.switch_page("views/query.py").run()
    whole = _frame(at, "qt_unique")
    assert len(whole) > 5 and not [b for b in at.get("download_button") if "qt_unique_csv" in b.proto.id]
    monkeypatch.setattr(ndcg_lab.ui.tables, "SHOWN_ROWS", 5)
    at.run()
    assert not at.exception, at.exception
    assert _frame(at, "qt_unique").equals(whole.iloc[:5])
    assert any(f"The first 5 of {len(whole):,} are shown" in c.value and f"CSV holds all {len(whole):,}" in c.value
               for c in at.caption)
    assert [b for b in at.get("download_button") if "qt_unique_csv" in b.proto.id]
