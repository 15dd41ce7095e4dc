"""The Judgments page in AppTest on the legal sample: chart, strategy table, warnings and the TSV export."""
from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.runtime import memory_media_file_storage
from streamlit.runtime.media_file_storage import MediaFileKind

import metrics
from metrics import store
from metrics.analysis import judgments as J
from metrics.ranking import rank
from ndcg_lab.ui.charts import DATA_LABEL
from tests.conftest import baseline_box

ROOT = Path(__file__).resolve().parents[2]
LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"
PAGE = "views/judgments.py"
TAB = "judgments_tab"   # the page's tabs: only the open one is computed (session state: its label)


@pytest.fixture
def downloads(monkeypatch):
    """Every file handed to a download button: [(data bytes, mimetype, file name)]."""
    seen = []
    original = memory_media_file_storage.MemoryMediaFileStorage.load_and_get_id

    def record(self, path_or_data, mimetype, kind, filename=None):
        if kind != MediaFileKind.DOWNLOADABLE:   # the page's icon
            return original(self, path_or_data, mimetype, kind, filename)
        data = path_or_data.encode() if isinstance(path_or_data, str) else path_or_data
        seen.append((bytes(data), mimetype, filename))
        return original(self, path_or_data, mimetype, kind, filename)

    monkeypatch.setattr(memory_media_file_storage.MemoryMediaFileStorage, "load_and_get_id", record)
    return seen


@pytest.fixture
def app(open_app):
    return open_app(PAGE)


def legal_ranked():
    qrels = metrics.read_qrels(LEGAL / "qrels.txt")
    return qrels, {p.stem: rank(metrics.read_run(p), qrels) for p in sorted(LEGAL.glob("*.run"))}


def plotly_values(value) -> list:
    """A plotly JSON array: a list, or {"dtype", "bdata"} (base64, plotly >= 6)."""
    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).tolist()
    return list(value)


def charts(at) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def test_page_shows_judged_curve_strategy_table_and_warning(app):
    figures = charts(app)
    judged = [f for f in figures if f["layout"].get("yaxis", {}).get("title", {}).get("text") == "Judged@k"]
    assert judged, "no Judged@k chart"
    assert sorted(t["name"] for t in judged[0]["data"]) == ["bm25", "bm25_ce", "bm25_qe", "dense"]
    # each line is the engine's mean Judged@k over the queries
    engine = metrics.means(metrics.evaluate(LEGAL / "qrels.txt", sorted(LEGAL.glob("*.run")),
                                            ["Judged@1", "Judged@10", "Judged@50"]))
    for trace in judged[0]["data"]:
        line = dict(zip(plotly_values(trace["x"]), plotly_values(trace["y"])))
        for k in (1, 10, 50):
            assert line[k] == pytest.approx(engine.loc[trace["name"], f"Judged@{k}"], abs=1e-12), (trace["name"], k)

    table = app.table[0].value
    assert "condensed (judged only)" in table.columns and "rank (condensed)" in table.columns
    # the sidebar's default gain is exponential: the condensed column is the engine's judged_only nDCG@10
    measure = "nDCG(dcg='exp-log2',judged_only=True)@10"
    engine = metrics.means(metrics.evaluate(LEGAL / "qrels.txt", sorted(LEGAL.glob("*.run")), [measure]))[measure]
    for system, value in engine.items():
        assert table.loc[system, "condensed (judged only)"] == f"{value:.4f}"
    # a rank change: dense climbs over bm25_qe once unjudged documents are dropped
    assert table.loc["dense", "rank (condensed)"] == "3 ▲1"
    assert table.loc["bm25_qe", "rank (condensed)"] == "4 ▼1"

    warnings = [w.value for w in app.warning]
    assert any(w.startswith("**dense**: Judged@10 = 0.862") for w in warnings), warnings


def test_without_proxy_the_page_says_how_to_add_one(app):
    store.Workspace(store.default_path()).set_proxy("legal", None)  # the sample comes with one
    app.run()
    assert not app.exception, app.exception
    assert any("no proxy judgments" in i.value for i in app.info)
    assert "inferred (proxy labels)" not in app.table[0].value.columns


def test_inferred_column_with_the_sample_proxy(tmp_path, monkeypatch, open_app):
    proxy = LEGAL / "proxy.txt"
    if not proxy.exists():
        pytest.skip("ndcg_lab/sample_data/legal/proxy.txt is absent")
    monkeypatch.setenv("NDCG_LAB_HOME", str(tmp_path))
    # store the samples and the proxy before the app opens the workspace (as the sample loader would)
    from ndcg_lab.ui import state
    with store.Workspace(store.default_path()) as ws:
        for sample in state.samples():
            ws.replace_collection(sample.name, **sample.read())
        ws.set_proxy("legal", metrics.read_qrels(proxy))
    at = open_app(PAGE, home=tmp_path)
    table = at.table[0].value
    column = "inferred (proxy: proxy.txt)"
    measure = "nDCG(dcg='exp-log2')@10"
    engine = metrics.means(metrics.evaluate(LEGAL / "qrels.txt", sorted(LEGAL.glob("*.run")), [measure],
                                            inferred=proxy))[measure]
    for system, value in engine.items():
        assert table.loc[system, column] == f"{value:.4f}"
    # proxy labels for dense's unjudged documents lift it over bm25_qe
    assert table.loc["dense", "rank (inferred)"] == "3 ▲1"
    assert any(c.value.startswith("Proxy: 917 labels") for c in at.caption)
    assert not any("no proxy judgments" in i.value for i in at.info)


def test_tsv_download_holds_the_training_triples(open_app, downloads):
    at = open_app(PAGE)
    assert not [name for _data, _mime, name in downloads if name.startswith("negatives-")]   # its tab is closed
    template = next(data for data, _m, name in downloads if name.startswith("judging-legal")).decode()
    assert template.startswith("# nDCG Lab judging template")
    downloads.clear()
    at.session_state[TAB] = "Hard negatives"
    at.run()
    assert not at.exception
    assert not [name for _data, _mime, name in downloads if name.startswith("judging-")]   # the first tab's
    files = {name: data for data, _mime, name in downloads}
    tsv = files["negatives-legal-top20-n10-g1.tsv"].decode()
    qrels, ranked = legal_ranked()
    assert tsv == J.training_set(qrels, ranked, depth=20, per_query=10, min_grade=1).to_tsv()
    assert tsv.startswith("qid\tpositive_docno\tnegative_docno\n1\t")

    # the options reach the export
    downloads.clear()
    at.number_input(key="neg_depth").set_value(5)
    at.number_input(key="neg_per_query").set_value(2)
    at.toggle(key="neg_unjudged").set_value(True)
    at.run()
    assert not at.exception
    files = {name: data for data, _mime, name in downloads}
    expected = J.training_set(qrels, ranked, depth=5, per_query=2, include_unjudged=True)
    assert files["negatives-legal-top5-n2-g1-unjudged.tsv"].decode() == expected.to_tsv()
    assert files["negatives-legal-top5-n2-g1-unjudged.jsonl"].decode() == expected.to_jsonl()


def test_ranks_are_lists_and_missing_ranks_are_empty(open_app, tmp_path):
    """A run named like a fused run (``rrf(k=60) of a, b``: a comma and a space) stays one item of
    the near misses' ranks list, which a joined text could not keep apart; a recall failure that
    no system retrieves shows an empty best_rank (a null drawn as "", not "None")."""
    at = open_app()
    fused = "rrf(k=60) of bm25, dense"
    other = tmp_path / "other.run"  # other content than bm25's: the workspace keeps one copy of a run
    other.write_text("".join((LEGAL / "bm25.run").read_text().splitlines(keepends=True)[:-1]))
    with store.Workspace(store.default_path()) as ws:
        ws.add_run("legal", metrics.read_run(other), name=fused)
    at.session_state[TAB] = "Hard negatives"
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    tables = {tuple(d.value.columns): d for d in at.dataframe}
    near = next(d for cols, d in tables.items() if "grade" in cols and "ranks" in cols)
    items = [item for ranks in near.value["ranks"] for item in ranks]
    assert any(item.startswith(fused + "@") for item in items)
    assert all(item.rsplit("@", 1)[0] in {"bm25", "bm25_ce", "bm25_qe", "dense", fused} for item in items)
    failures = next(d for cols, d in tables.items() if list(cols) == ["qid", "docno", "title", "grade", "best_rank"])
    assert failures.value["best_rank"].isna().any()           # documents no system retrieves
    chart_data = {id(d) for e in at.expander if e.label == DATA_LABEL for d in e.dataframe}   # the charts' own
    for frame in at.dataframe:
        if id(frame) not in chart_data:
            assert frame.proto.HasField("placeholder") and frame.proto.placeholder == ""


def test_the_data_page_marks_the_baseline_when_none_was_stored(open_app, tmp_path, monkeypatch):
    """A collection made from uploads has no stored baseline: the sidebar takes its first run, and
    the Data page's runs table marks that run "(baseline)"."""
    home = tmp_path / "ws"
    monkeypatch.setenv("NDCG_LAB_HOME", str(home))
    with store.Workspace(store.default_path()) as ws:
        ws.create_collection("mine", metrics.read_qrels(LEGAL / "qrels.txt"))
        for name in ("dense", "bm25"):
            ws.add_run("mine", metrics.read_run(LEGAL / f"{name}.run"), name=name)
        assert ws.baseline("mine") is None
    at = open_app("views/data.py", home=home)
    assert baseline_box(at).value == "dense"
    runs = next(t.value for t in at.table if "sha256" in t.value.columns)
    assert list(runs["name"]) == ["dense (baseline)", "bm25"]


def test_a_long_to_do_list_shows_its_first_rows_and_the_template_holds_them_all(open_app, downloads, monkeypatch):
    """Past :data:`ndcg_lab.ui.tables.SHOWN_ROWS` pairs (set to 4 here: 7M-line runs have about
    100,000 in their top 10) the list shows the highest ranked ones and says so; the judging
    template still holds every pair."""
    import ndcg_lab.ui.tables

    monkeypatch.setattr(ndcg_lab.ui.tables, "SHOWN_ROWS", 4)
    at = open_app(PAGE)
    assert not at.exception, at.exception
    (caption,) = [c.value for c in at.caption if "unjudged (query, document) pairs" in c.value]
    total = int(caption.split(" ", 1)[0].replace(",", ""))
    assert total > 4 and f"The first 4 of {total:,} are shown (the highest ranked" in caption
    (todo,) = [d.value for d in at.dataframe if "docno" in d.value.columns and len(d.value) == 4]
    template = next(data for data, _m, name in downloads if name.startswith("judging-legal")).decode()
    pairs = {tuple(line.split()[::2]) for line in template.splitlines() if line and not line.startswith("#")}
    assert len(pairs) == total and {tuple(p) for p in todo[["qid", "docno"]].astype(str).to_numpy()} < pairs
