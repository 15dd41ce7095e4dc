"""ndcg_lab.ui.fusion: the Fusion page's cached glue gives what ``metrics.analysis.fusion.fuse`` and
``metrics.evaluate`` give on the sample files read directly (a second route past the workspace)."""
from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pytest
import streamlit as st

import metrics
from metrics.analysis import fusion as library
from ndcg_lab.ui import fusion
from tests.ui.conftest import LEGAL

QRELS = LEGAL / "qrels.txt"
FILES = {name: LEGAL / f"{name}.run" for name in ("bm25", "dense")}


def inputs(sel) -> tuple:
    return tuple((n, d) for n, d in sel.systems if n in FILES)


def table_of(run) -> pd.DataFrame:
    return run.table.to_pandas()[["qid", "docno", "score"]].sort_values(["qid", "docno"]).reset_index(drop=True)


def test_fused_run_equals_the_library_on_the_files(legal):
    sel, _ = legal
    result = fusion.fused(sel, inputs(sel), "rrf", k=20, depth=50)
    direct = library.fuse([metrics.read_run(p, name=n) for n, p in FILES.items()], "rrf", k=20, depth=50)
    pd.testing.assert_frame_equal(table_of(result.run), table_of(direct.run))
    assert result.recipe.label() == fusion.label(result.recipe) == direct.recipe.label()
    assert fusion.label(result.recipe).startswith("rrf(")


def test_comparison_means_and_the_references(legal):
    sel, _ = legal
    measures = ["nDCG(dcg='exp-log2')@10", "AP"]
    means, versus = fusion.comparison(sel, inputs(sel), "combsum", measures, norm="minmax")
    fused_run = library.fuse([metrics.read_run(p, name=n) for n, p in FILES.items()], "combsum", norm="minmax").run
    name = means.index[0]
    expected = metrics.means(metrics.evaluate(QRELS, {name: fused_run, **FILES}, measures))
    assert list(means.index) == [name, "bm25", "dense"]   # fused first; bm25 is the baseline and an input
    for measure in measures:
        assert means[measure].to_dict() == pytest.approx(expected.loc[list(means.index), measure].to_dict())
    best = expected.loc[["bm25", "dense"], measures[0]].idxmax()
    assert sorted(set(versus["against"])) == sorted({"baseline: bm25", f"best input: {best}"})
    assert len(versus) == 2 * len(measures)


def test_store_keeps_the_recipe_once(legal):
    sel, ws = legal
    result = fusion.fused(sel, inputs(sel), "rrf")
    first = fusion.store(sel, result)
    again = fusion.store(sel, result)
    assert first.name == fusion.label(result.recipe)
    assert [r.name for r in ws.runs("legal")].count(first.name) == 1 and again.digest == first.digest


def test_sweep_over_k_is_the_mean_of_each_fused_run(legal):
    sel, _ = legal
    curve, folds = fusion.sweep(sel, inputs(sel), "rrf", "k", [10, 60], "AP")
    assert curve["k"].tolist() == [10.0, 60.0]
    for k, value in zip(curve["k"], curve["value"]):
        run = library.fuse([metrics.read_run(p, name=n) for n, p in FILES.items()], "rrf", k=k).run
        assert value == pytest.approx(metrics.means(metrics.evaluate(QRELS, {"f": run}, ["AP"]))["AP"].iloc[0])
    assert folds is not None


def test_sessions_of_other_workspaces_share_the_pool_and_the_fused_run(legal):
    """Keyed on the inputs' names and content digests, not the workspace: a session of another
    workspace with the same runs gets the same objects (one pool and one fused run per server)."""
    import dataclasses

    sel, _ = legal
    other = dataclasses.replace(sel, scope=f"{sel.scope}-another-workspace")
    assert fusion.pool(other, inputs(sel), 50) is fusion.pool(sel, inputs(sel), 50)
    assert fusion.fused(other, inputs(sel), "rrf", k=20) is fusion.fused(sel, inputs(sel), "rrf", k=20)


def test_the_pool_reads_rankings_that_hold_every_line_and_the_runs_otherwise(legal, monkeypatch):
    """Every query of the legal runs is judged, so their rankings hold every line: the pool reads
    no run. Judgments that leave a query out make the rankings partial: the runs are read then,
    and the pool is the same."""
    import dataclasses

    from metrics.store import Workspace

    sel, ws = legal
    read = []
    real = Workspace.load_run
    monkeypatch.setattr(Workspace, "load_run", lambda self, *a, **k: read.append(a[1]) or real(self, *a, **k))
    whole = fusion.pool(sel, inputs(sel), 50)
    assert read == []
    qrels = metrics.read_qrels(QRELS)
    dropped = qrels.table["qid"][0].as_py()
    partial = qrels.table.filter(pa.compute.not_equal(qrels.table["qid"], dropped)).to_pandas()
    ws.create_collection("partial", metrics.read_qrels(partial.rename(columns={"rel": "label"})))
    for name, path in FILES.items():
        ws.add_run("partial", metrics.read_run(path), name=name)
    info = {c.name: c for c in ws.collections()}["partial"]
    other = dataclasses.replace(sel, collection="partial", qrels_digest=info.qrels.digest, proxy_digest=None,
                                systems=tuple((r.name, r.digest) for r in ws.runs("partial")))
    st.cache_resource.clear()
    again = fusion.pool(other, inputs(other), 50)
    assert sorted(read) == sorted(FILES)
    # the candidates may be numbered in another order (a dictionary's codes follow the rows' order,
    # file order or ranked order); every fused run is the same
    for method in ("rrf", "combmnz", "bordafuse", "condorcet"):
        assert library.fuse(again, method).run.table.equals(library.fuse(whole, method).run.table), method
