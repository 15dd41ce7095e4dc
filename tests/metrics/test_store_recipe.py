"""A fused run's recipe is kept with its content in the workspace, across an upgrade from schema 2."""
from __future__ import annotations

import duckdb

from metrics import io
from metrics.analysis import fusion
from metrics.store import Workspace
from metrics.store import tables as store_tables


def _runs():
    a = io.read_run(b"q1 Q0 d1 1 3.0 a\nq1 Q0 d2 2 2.0 a\nq2 Q0 d3 1 1.0 a\n", name="a")
    b = io.read_run(b"q1 Q0 d2 1 5.0 b\nq1 Q0 d4 2 4.0 b\nq2 Q0 d3 1 9.0 b\n", name="b")
    return a, b


def test_a_fused_run_keeps_its_recipe(tmp_path):
    a, b = _runs()
    fused, recipe = fusion.fuse([a, b], "rrf", k=10)
    qrels = io.read_qrels(b"q1 0 d2 1\nq2 0 d3 1\n")
    with Workspace(tmp_path / "ws.duckdb") as ws:
        ws.create_collection("c", qrels)
        ws.add_run("c", a)
        info = ws.add_run("c", fused, recipe=recipe)
        assert info.recipe == recipe.to_dict()
        assert fusion.Recipe.from_dict(info.recipe).digest == fused.digest
        listed = {r.name: r.recipe for r in ws.runs("c")}
        assert listed == {"a": None, "rrf": recipe.to_dict()}
        assert listed["rrf"]["inputs"] == [{"name": "a", "digest": a.digest}, {"name": "b", "digest": b.digest}]
        assert listed["rrf"]["params"]["k"] == 10.0


def test_a_schema_2_workspace_gains_the_recipe_column(tmp_path):
    path = tmp_path / "ws.duckdb"
    a, _ = _runs()
    with Workspace(path) as ws:
        ws.create_collection("c", io.read_qrels(b"q1 0 d2 1\n"))
        ws.add_run("c", a)
    con = duckdb.connect(str(path))
    con.execute("ALTER TABLE objects DROP COLUMN recipe")
    con.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    con.close()
    with Workspace(path, read_only=True) as ws:   # a reader cannot upgrade the file, but lists its runs
        assert [(r.name, r.recipe) for r in ws.runs("c")] == [("a", None)]
    with Workspace(path) as ws:
        assert [(r.name, r.recipe) for r in ws.runs("c")] == [("a", None)]
    con = duckdb.connect(str(path), read_only=True)
    assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall() == \
        [(str(store_tables.SCHEMA_VERSION),)]
    con.close()
