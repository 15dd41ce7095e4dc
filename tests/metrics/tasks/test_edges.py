"""The task's edges in the library: method lines (stored with a submission, bounded, shown to the
other teams only on the final standings), a task file of the first schema still readable, groups
and significance markers in every standings export, and the message when no instructor key is set."""
from __future__ import annotations

import json
import re
from dataclasses import asdict
from io import StringIO

import duckdb
import pandas as pd
import pytest

from metrics import MetricsError, settings
from metrics.tasks import SubmissionRefused, Tasks, views
from metrics.tasks.submissions import METHOD_LIMIT
from metrics.tasks.task import SCHEMA_VERSION
from tests.metrics.tasks.conftest import LEGAL, make_task

DENSE = (LEGAL / "dense.run").read_bytes()
CE = (LEGAL / "bm25_ce.run").read_bytes()


def test_a_method_line_is_stored_with_its_submission_as_one_line_of_plain_text(tasks, legal):
    team = tasks.open(tasks.join(legal.join, "Alpha"))
    hostile = "  **BM25** <script>x</script>\n =HYPERLINK(\"http://e.org\")  "
    sid = team.submit(DENSE, "dense", "dense.run", hostile)
    [mine] = views.view(team).submissions
    assert (mine.id, mine.method) == (sid, '**BM25** <script>x</script> =HYPERLINK("http://e.org")')
    assert team.submit(CE, "ce", "ce.run") and views.view(team).submissions[1].method is None


def test_a_method_line_over_the_limit_is_refused_and_does_not_count(tasks, legal):
    team = tasks.open(tasks.join(legal.join, "Alpha"))
    with pytest.raises(SubmissionRefused, match=f"method line has {METHOD_LIMIT + 1} characters"):
        team.submit(DENSE, "dense", "dense.run", "x" * (METHOD_LIMIT + 1))
    assert views.view(team).allowance.used == 0
    team.submit(DENSE, "dense", "dense.run", "x" * METHOD_LIMIT)
    assert views.view(team).submissions[0].method == "x" * METHOD_LIMIT


def test_other_teams_see_a_method_line_only_on_the_final_standings_after_the_release(tasks, legal, clock):
    alpha = tasks.open(tasks.join(legal.join, "Alpha"))
    beta = tasks.open(tasks.join(legal.join, "Beta"))
    alpha.submit(DENSE, "dense", "dense.run", "dense retrieval, e5")
    beta.submit(CE, "ce", "ce.run", "BM25 then a cross-encoder")
    projector = tasks.open(legal.projector)

    def seen(access) -> str:
        data = views.view(access)
        return json.dumps(asdict(data)) + views.export_board(data, "csv") + views.export_board(data, "json")

    assert "cross-encoder" not in seen(alpha) and "cross-encoder" not in seen(projector)
    assert "cross-encoder" in seen(beta)                              # its own
    assert "cross-encoder" in seen(tasks.open(legal.instructor))     # the preview
    clock.now += 8 * 86400
    assert "cross-encoder" not in seen(alpha)                         # closed, not released
    tasks.open(legal.instructor).release()
    final = views.view(alpha).final_board
    assert {e.name: e.method for e in final.rows} == {"Alpha": "dense retrieval, e5",
                                                      "Beta": "BM25 then a cross-encoder", "baseline: bm25": None}
    table = pd.read_csv(StringIO(views.export_board(views.view(projector), "csv")), comment="#", index_col="name")
    assert table.loc["Beta", "method"] == "BM25 then a cross-encoder"


def _as_first_schema(path) -> None:
    """Turn a task file into the layout of schema 1 (no method column, schema 1 in meta)."""
    con = duckdb.connect(str(path))
    con.execute("ALTER TABLE submissions DROP COLUMN method")
    con.execute("UPDATE meta SET value = '1' WHERE key = 'schema'")
    con.close()


def test_a_task_file_of_the_first_schema_is_migrated_when_opened_and_keeps_its_submissions(tmp_path, clock):
    home = {"NDCG_LAB_HOME": str(tmp_path)}
    tasks = Tasks(settings.load(home), clock=clock)
    links = make_task(tasks)
    team_link = tasks.join(links.join, "Alpha")
    sid = tasks.open(team_link).submit(DENSE, "dense", "dense.run")
    before = views.view(tasks.open(links.instructor)).board
    path = tasks.open(links.instructor).task.path
    tasks.close()
    _as_first_schema(path)
    con = duckdb.connect(str(path))
    assert "method" not in [c[0] for c in con.execute("DESCRIBE submissions").fetchall()]
    con.close()

    again = Tasks(settings.load(home), clock=clock)
    try:
        data = views.view(again.open(links.instructor))
        assert data.board.rows == before.rows   # the same board, read from the migrated file
        assert [(s.id, s.method) for s in data.submissions if s.team is not None] == [(sid, None)]
        again.open(team_link).submit(CE, "ce", "ce.run", "a line")
        assert [s.method for s in views.view(again.open(team_link)).submissions] == [None, "a line"]
        meta = again.open(links.instructor).task.meta()
        assert meta["schema"] == SCHEMA_VERSION == 2
    finally:
        again.close()


def test_every_standings_export_carries_the_groups_and_the_markers(tasks, legal, clock):
    tasks.open(tasks.join(legal.join, "Alpha")).submit(DENSE, "dense", "dense.run")
    tasks.open(tasks.join(legal.join, "Beta")).submit(CE, "ce", "ce.run")
    clock.now += 8 * 86400
    instructor = tasks.open(legal.instructor)
    instructor.release()
    data = views.view(instructor)
    rows = {e.name: e for e in data.final_board.rows}
    # independently of the board: the neighbour test puts Beta apart from the rows below it
    assert rows["Beta"].marker == "▲" and rows["Beta"].group != rows["Alpha"].group
    latex = views.export_board(data, "latex")
    for name, row in rows.items():
        assert re.search(rf"^{re.escape(name)} \[{row.group}\] & ", latex, re.MULTILINE), name
    assert re.search(r"^Beta \[A\] & \\textbf\{[\d.]+\}\$\^\{\\blacktriangle\}\$", latex, re.MULTILINE)
    assert '% baseline: "bm25"' in latex and "% groups: " in latex
    parsed = json.loads(views.export_board(data, "json"))
    assert parsed["markers"] == {"Beta": {"nDCG@10": "▲"}}
    assert parsed["groups"] == {n: r.group for n, r in rows.items()}
    assert parsed["stamp"]["baseline"] == "bm25" and "groups" in parsed["stamp"]
    for fmt, sep in (("csv", ","), ("tsv", "\t")):
        table = pd.read_csv(StringIO(views.export_board(data, fmt)), comment="#", sep=sep, index_col="name")
        assert table["group"].to_dict() == {n: r.group for n, r in rows.items()}
        assert table["vs baseline"].fillna("").to_dict() == {n: r.marker for n, r in rows.items()}


def test_with_no_instructor_key_set_create_says_so_and_how_to_set_one(tmp_path):
    tasks = Tasks(settings.load({"NDCG_LAB_HOME": str(tmp_path), "NDCG_LAB_TASKS": "key"}))
    assert tasks.key_unset()
    with pytest.raises(MetricsError) as caught:
        make_task(tasks)
    text = str(caught.value)
    assert "no instructor key is set" in text and "NDCG_LAB_INSTRUCTOR_KEY='" in text
    keyed = Tasks(settings.load({"NDCG_LAB_HOME": str(tmp_path), "NDCG_LAB_TASKS": "key",
                                 "NDCG_LAB_INSTRUCTOR_KEY": "k" * 20}))
    assert not keyed.key_unset()
    with pytest.raises(MetricsError, match="needs the instructor key"):
        make_task(keyed)
    tasks.close()
    keyed.close()
