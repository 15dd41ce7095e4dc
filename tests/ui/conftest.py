"""A sidebar ``Selection`` over the legal sample without the app: a private workspace holding the
sample's qrels, proxy, topics and runs, reached by ``ndcg_lab.ui.state.workspace`` (patched), so the cached
glue of ``ui`` runs exactly as a page calls it."""
from __future__ import annotations

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
    """(Selection of every legal run, bm25 the baseline, exponential gain; the Workspace)."""
    ws = Workspace(tmp_path / "workspace.duckdb")
    ws.create_collection("legal", metrics.read_qrels(LEGAL / "qrels.txt"),
                         proxy=metrics.read_qrels(LEGAL / "proxy.txt"),
                         topics=read_topics(LEGAL / "topics.tsv"))
    infos = [ws.add_run("legal", metrics.read_run(path), name=path.stem) for path in sorted(LEGAL.glob("*.run"))]
    monkeypatch.setattr(state, "workspace", lambda: ws)
    st.cache_data.clear()
    st.cache_resource.clear()
    info = {c.name: c for c in ws.collections()}["legal"]
    sel = state.Selection(scope=f"workspace:{tmp_path}", collection="legal", qrels_digest=info.qrels.digest,
                          proxy_digest=info.proxy.digest if info.proxy else None,
                          systems=tuple((r.name, r.digest) for r in infos), baseline="bm25", gain="exp-log2")
    yield sel, ws
    st.cache_data.clear()
    st.cache_resource.clear()
