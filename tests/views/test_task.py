"""AppTest of the Class task page: create from the legal sample (the instructor page with its
links), join with the join link, a team's page (its submission, the public board, no hidden
per-query value), the projector, and a link no task has."""
from __future__ import annotations

import pytest

from metrics import settings
from tests.views.class_tasks import LEGAL, legal_task, ok, texts

PAGE = "views/task.py"


@pytest.fixture
def task(tmp_path):
    home = tmp_path / "home"
    tasks, links = legal_task(home, "Legal **IR**", public_fraction=0.3, baselines=["bm25"])
    team = tasks.join(links.join, "[Alpha](http://x.org)")
    tasks.open(team).submit((LEGAL / "dense.run").read_bytes(), "dense", "dense.run")
    yield home, links, team, tasks
    tasks.close()


def test_create_from_the_sample_opens_the_instructor_page(open_app):
    at = open_app(PAGE)
    at.button(key="FormSubmitter:create_task-Create the task").click().run()
    ok(at)
    assert "task" in at.query_params
    assert [c.value.split("?")[0] for c in at.code[:3]] == ["http://localhost:8501/task"] * 3
    assert [c.value.rsplit("/", 2)[1] for c in at.code[3:]] == ["s"] * 2   # join and projector, short links
    assert "Public leaderboard" in texts(at) and "Final standings" in texts(at)


def test_join_then_the_team_page(open_app, task):
    home, links, team, tasks = task
    at = ok(open_app(PAGE, home=home, query_params={"task": links.tokens["join"]}))
    at.text_input[0].input("Beta")
    at.button(key="FormSubmitter:join-Join").click().run()
    ok(at)
    assert "Welcome" in texts(at) and "Team **Beta**" in texts(at)


def test_the_team_page_shows_its_run_on_public_topics_only(open_app, task):
    home, links, team, tasks = task
    at = ok(open_app(PAGE, home=home, query_params={"task": team.rsplit("=", 1)[1]}))
    page = texts(at)
    assert "Public leaderboard" in page and "Final standings" not in page
    assert "\\[Alpha\\]" in page  # the team's name is text, not a link
    snap = tasks.open(links.instructor).snapshot()
    per_query = at.table[1].value  # the per-query table of the latest submission
    assert set(per_query.index) == set(snap.public_qids)
    assert not set(per_query.index) & set(snap.hidden_qids)


def test_the_projector_and_an_unknown_link(open_app, task):
    home, links, team, tasks = task
    at = ok(open_app(PAGE, home=home, query_params={"task": links.tokens["projector"]}))
    board = "\n".join(h.proto.body for h in at.get("html"))        # the projector draws its own HTML
    assert "Public leaderboard" in board and "baseline: bm25" in board
    at = ok(open_app(PAGE, home=home, query_params={"task": "A" * 32}))
    assert "no task has this link" in texts(at) and not at.table


def test_the_instructor_page_with_submissions_and_after_the_release(open_app, task):
    home, links, team, tasks = task
    token = links.tokens["instructor"]
    at = ok(open_app(PAGE, home=home, query_params={"task": token}))
    page = texts(at)
    assert "Submissions (2)" in page and "preview" in page and "The class per topic" in page
    tasks.open(links.instructor).close()
    at = ok(open_app(PAGE, home=home, query_params={"task": token}))
    next(c for c in at.checkbox if c.label == "Release the qrels too").check().run()
    next(b for b in at.button if b.label == "Release the final standings").click().run()
    ok(at)
    assert "Released." in texts(at) and "preview" not in texts(at)
    at = ok(open_app(PAGE, home=home, query_params={"task": team.rsplit("=", 1)[1]}))
    assert "Final standings" in texts(at)
    next(b for b in at.button if b.label.startswith("Copy my runs")).click().run()
    ok(at)
    assert "Added the collection" in texts(at)


def test_in_shared_mode_a_team_copies_into_its_own_workspace(open_app, task, monkeypatch):
    home, links, team, tasks = task
    instructor = tasks.open(links.instructor)
    instructor.close()
    instructor.release(qrels=True)
    monkeypatch.setenv("NDCG_LAB_MODE", "shared")
    at = ok(open_app(PAGE, home=home, query_params={"task": team.rsplit("=", 1)[1]}))
    next(b for b in at.button if b.label.startswith("Copy my runs")).click().run()
    ok(at)
    assert "Added the collection" in texts(at) and "ws" in at.query_params
    from metrics.store import WorkspaceRegistry

    manager = WorkspaceRegistry(settings.load({"NDCG_LAB_HOME": str(home), "NDCG_LAB_MODE": "shared"}))
    try:
        ws = manager.open(at.query_params["ws"][0] if isinstance(at.query_params["ws"], list)
                          else at.query_params["ws"]).workspace
        assert [r.name for r in ws.runs("Legal **IR**")] == ["dense"]
    finally:
        manager.close()
