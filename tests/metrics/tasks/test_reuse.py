"""What a class submitting at once does not repeat: opening the task file, parsing the stored
judgments, computing the board. Counted, not timed; and the shortcuts change no answer."""
from __future__ import annotations

import time

import duckdb
import pytest

import metrics
from metrics import io
from metrics.tasks import opened
from metrics.tasks import views as task_views
from tests.metrics.tasks.conftest import LEGAL, make_task

RUN = (LEGAL / "dense.run").read_bytes()


@pytest.fixture
def class_of_three(tasks, monkeypatch):
    monkeypatch.setattr(opened, "IDLE_CLOSE", 600.0, raising=False)  # a slow machine does not close it
    links = make_task(tasks, total=3)
    teams = [tasks.open(tasks.join(links.join, name)) for name in ("A", "B", "C")]
    teams[0].submit(RUN, "first", "a.run")
    task_views.view(teams[0])
    return tasks, links, teams


def test_submissions_and_team_pages_do_not_open_the_task_file_again(class_of_three, monkeypatch):
    tasks, links, teams = class_of_three
    connects = []
    real = duckdb.connect
    monkeypatch.setattr(duckdb, "connect", lambda *a, **k: connects.append(a) or real(*a, **k))
    teams[1].submit(RUN, "b", "b.run")
    task_views.view(teams[0])
    teams[2].submit(RUN, "c", "c.run")
    task_views.view(teams[1])
    task_views.view(tasks.open(links.projector))
    assert connects == []


def test_a_submission_does_not_parse_the_stored_judgments_again(class_of_three, monkeypatch):
    tasks, links, teams = class_of_three
    parsed = []
    real = io.read_qrels
    monkeypatch.setattr(io, "read_qrels", lambda src, *a, **k: (parsed.append(src) if isinstance(src, bytes)
                                                                 else None) or real(src, *a, **k))
    sid = teams[1].submit(RUN, "b", "b.run")
    assert parsed == []
    # the same numbers as a parse of the file: the team's public means against metrics.evaluate
    public = set(tasks.open(links.instructor).snapshot().public_qids)
    frame = metrics.evaluate(real(LEGAL / "qrels.txt"), {"b": metrics.read_run(LEGAL / "dense.run")},
                             ["nDCG@10", "AP"])
    expected = frame[frame["qid"].isin(public)].groupby("measure")["value"].mean()
    mine = next(s for s in task_views.view(teams[1]).submissions if s.id == sid)
    for measure in ("nDCG@10", "AP"):
        assert mine.means_public[measure] == pytest.approx(expected[measure], abs=1e-12)


def test_replaced_judgments_are_parsed_and_used(class_of_three):
    tasks, links, teams = class_of_three
    lines = (LEGAL / "qrels.txt").read_text().splitlines()
    public = set(tasks.open(links.instructor).snapshot().public_qids)
    fewer = "".join(line + "\n" for line in lines if not (line.split()[0] in public and line.split()[3] != "0"))
    tasks.open(links.instructor).replace_qrels(fewer.encode(), "fewer.txt", "no relevant public documents")
    sid = teams[1].submit(RUN, "b", "b.run")
    mine = next(s for s in task_views.view(teams[1]).submissions if s.id == sid)
    assert mine.means_public == {"nDCG@10": 0.0, "AP": 0.0}


def test_the_board_is_computed_once_per_change_for_every_page(class_of_three, monkeypatch):
    tasks, links, teams = class_of_three
    computed = []
    real = task_views.compare
    monkeypatch.setattr(task_views, "compare", lambda *a, **k: computed.append(1) or real(*a, **k))
    teams[1].submit(RUN, "b", "b.run")
    boards = [task_views.view(a).board for a in (teams[0], teams[1], tasks.open(links.projector), teams[2])]
    assert len(computed) == 1
    # each team's copy marks its own row, and marking one copy changes no other
    assert [[e.you for e in b.rows if e.kind == "team"] for b in boards[:2]] == [[True, False], [False, True]]
    assert not any(e.you for e in boards[2].rows)
    teams[2].submit(RUN, "c", "c.run")  # a change: computed again, once
    task_views.view(teams[0])
    task_views.view(teams[1])
    assert len(computed) == 2


def test_an_idle_task_file_is_closed(tasks, monkeypatch):
    monkeypatch.setattr(opened, "IDLE_CLOSE", 0.2)
    links = make_task(tasks, total=3)
    task = tasks.open(links.instructor).task
    assert opened.is_open(task._open_as)
    deadline = time.monotonic() + 30
    while opened.is_open(task._open_as) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not opened.is_open(task._open_as)
    con = duckdb.connect(str(task.path), read_only=True)  # closed: opened again read-only
    assert con.execute("SELECT count(*) FROM teams").fetchone() == (0,)
    con.close()
