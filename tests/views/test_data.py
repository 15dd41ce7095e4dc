"""views/data.py: a large run is streamed and the page says so."""
from __future__ import annotations

import metrics
from tests.conftest import ROOT, assert_ok

LEGAL = ROOT / "sample_data" / "legal"


def test_data_page_streams_a_large_run_and_says_so(monkeypatch, open_app):
    monkeypatch.setenv("NDCG_LAB_STREAMING_BYTES", "1000")
    monkeypatch.setenv("NDCG_LAB_DATA_ROOTS", str(ROOT / "sample_data"))
    at = open_app("views/data.py")
    at.text_input(key="large_run_path").input(str(LEGAL / "bm25.run"))
    next(b for b in at.button if b.label == "Evaluate with the streaming engine").click().run()
    assert_ok(at)
    assert any("with the **streaming** engine in" in s.value for s in at.success)
    shown = next(t.value for t in at.table if "engine" in t.value.columns)
    assert shown.loc[0, "engine"] == "streaming" and shown.loc[0, "name"] == "bm25"
    expected = metrics.means(metrics.evaluate(LEGAL / "qrels.txt", LEGAL / "bm25.run",
                                              ["nDCG(dcg=exp-log2)@10", "AP"]))
    assert shown.loc[0, "nDCG(dcg=exp-log2)@10"] == f"{expected.iloc[0, 0]:.4f}"
    assert shown.loc[0, "AP"] == f"{expected.iloc[0, 1]:.4f}"
