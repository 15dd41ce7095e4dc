"""ndcg_lab.ui.scale: the streaming threshold, error messages about server files without their text, and a
large run scored by the streaming engine with the same means as ``metrics.evaluate`` in memory."""
from __future__ import annotations

import os

import pytest
from streamlit.testing.v1 import AppTest

import metrics
from metrics import engines
from ndcg_lab.ui import scale
from tests.conftest import assert_ok
from tests.ui.conftest import LEGAL


def test_threshold_reads_the_setting_and_falls_back_on_a_bad_one(monkeypatch):
    monkeypatch.setenv("NDCG_LAB_STREAMING_BYTES", "1e6")
    assert scale.threshold() == 1_000_000
    monkeypatch.setenv("NDCG_LAB_STREAMING_BYTES", "lots")
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert scale.threshold() == total // 16 == engines.memory_threshold()


def test_server_error_keeps_file_line_and_problem_but_no_quoted_text():
    exc = metrics.MetricsError("expected 6 columns, found 4: '1 Q0 secret-doc 1'", source="/data/run.txt", line=12,
                               fix="check the line \"secret-doc\"")
    text = scale.server_error(exc)
    assert "secret-doc" not in text
    assert "/data/run.txt" in text and "12" in text and "expected 6 columns, found 4" in text
    assert str(metrics.MetricsError("expected 6 columns, found 4", source="/data/run.txt", line=12,
                                    fix="check the line")) == text
    only_quoted = scale.server_error(metrics.MetricsError("'abc'", source="f"))
    assert "the file could not be read" in only_quoted and "abc" not in only_quoted


def test_measures_use_the_sidebar_gain(legal):
    sel, _ = legal
    suite = scale.measures(sel)
    assert len(suite) == len(metrics.DEFAULT_MEASURES)
    assert all("exp-log2" in m for m in suite if m.startswith("nDCG"))
    assert [m for m in suite if not m.startswith("nDCG")] == [m for m in metrics.DEFAULT_MEASURES
                                                              if not m.startswith("nDCG")]


def _evaluate_script(sel, path):
    import streamlit as st

    from ndcg_lab.ui import scale, state

    st.session_state["result"] = scale.evaluate_large(path, sel, state.workspace(), name="dense.run")
    scale.section(sel, state.workspace())


def test_a_large_run_is_streamed_with_the_in_memory_means(legal):
    sel, _ = legal
    path = str(LEGAL / "dense.run")
    at = AppTest.from_function(_evaluate_script, kwargs={"sel": sel, "path": path}, default_timeout=120)
    at.run()
    assert_ok(at)
    result = at.session_state["result"]
    expected = metrics.means(metrics.evaluate(LEGAL / "qrels.txt", {"dense": path}, scale.measures(sel)))
    assert result["engine"] == "streaming" and result["collection"] == "legal"
    assert result["queries"] == 50 and result["size"] == os.path.getsize(path)
    assert result["buckets"] == 0      # its queries come one after another: read and scored in one pass
    assert result["means"].iloc[0].to_dict() == pytest.approx(expected.iloc[0].to_dict())
    assert at.session_state["_data_messages"][0][0] == "success"
    assert "(one pass, 50 queries)" in at.session_state["_data_messages"][0][1]
    (table,) = at.table
    assert table.value.iloc[0]["file"] == "dense.run"
    assert table.value.iloc[0]["AP"] == f"{expected['AP'].iloc[0]:.4f}"


def test_a_bad_large_run_is_reported_not_raised(legal, tmp_path):
    sel, _ = legal
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 d1\n")
    at = AppTest.from_function(_evaluate_script, kwargs={"sel": sel, "path": str(bad)}, default_timeout=120)
    at.run()
    assert_ok(at)
    assert at.session_state["result"] is None
    kind, text = at.session_state["_data_messages"][0]
    assert kind == "error" and "bad.run" in text
