"""views/data.py: a large run is streamed and the page says so."""
from __future__ import annotations

from pathlib import Path

import metrics


def test_data_page_streams_a_large_run_and_says_so(monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("NDCG_LAB_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("NDCG_LAB_STREAMING_BYTES", "1000")
    root = Path(__file__).resolve().parents[2]
    at = AppTest.from_file(str(root / "app.py"), default_timeout=120).run()
    at.switch_page("views/data.py").run()
    assert not at.exception
    at.text_input(key="large_run_path").input(str(root / "sample_data" / "legal" / "bm25.run"))
    next(b for b in at.button if b.label == "Evaluate with the streaming engine").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("with the **streaming** engine in" in s.value for s in at.success)
    shown = next(t.value for t in at.table if "engine" in t.value.columns)
    assert shown.loc[0, "engine"] == "streaming" and shown.loc[0, "name"] == "bm25"
    expected = metrics.means(metrics.evaluate(root / "sample_data" / "legal" / "qrels.txt",
                                              root / "sample_data" / "legal" / "bm25.run",
                                              ["nDCG(dcg=exp-log2)@10", "AP"]))
    assert shown.loc[0, "nDCG(dcg=exp-log2)@10"] == f"{expected.iloc[0, 0]:.4f}"
    assert shown.loc[0, "AP"] == f"{expected.iloc[0, 1]:.4f}"
