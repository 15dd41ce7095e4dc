"""A sidebar ``Selection`` over the legal sample without the app: a workspace file holding the
sample's qrels, proxy, topics and runs, opened the way an operator opens one (``NDCG_LAB_HOME`` and
``streamlit run app.py -- --workspace PATH``), so the cached glue of ``ndcg_lab.ui`` reads it
through the session's own workspace manager, exactly as a page calls it."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import streamlit as st

import metrics
from metrics.io.topics import read_topics
from metrics.store import Workspace
from ndcg_lab.ui import state

LEGAL = Path(__file__).resolve().parents[2] / "ndcg_lab" / "sample_data" / "legal"


@pytest.fixture
def legal(tmp_path, monkeypatch):
    """(Selection of every legal run, bm25 the baseline, exponential gain; the session's Workspace)."""
    path = tmp_path / "workspace.duckdb"
    made = Workspace(path)
    try:
        made.create_collection("legal", metrics.read_qrels(LEGAL / "qrels.txt"),
                               proxy=metrics.read_qrels(LEGAL / "proxy.txt"),
                               topics=read_topics(LEGAL / "topics.tsv"))
        for run in sorted(LEGAL.glob("*.run")):
            made.add_run("legal", metrics.read_run(run), name=run.stem)
    finally:
        made.close()
    monkeypatch.setenv("NDCG_LAB_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("NDCG_LAB_MODE", raising=False)
    monkeypatch.setattr(sys, "argv", ["app.py", "--workspace", str(path)])
    st.cache_data.clear()
    st.cache_resource.clear()
    ws = state.workspace()
    info = {c.name: c for c in ws.collections()}["legal"]
    sel = state.Selection(scope=f"workspace:{tmp_path}", collection="legal", qrels_digest=info.qrels.digest,
                          proxy_digest=info.proxy.digest if info.proxy else None,
                          systems=tuple((r.name, r.digest) for r in sorted(ws.runs("legal"), key=lambda r: r.name)),
                          baseline="bm25", gain="exp-log2")
    yield sel, ws
    state.manager().close()
    st.cache_data.clear()
    st.cache_resource.clear()
