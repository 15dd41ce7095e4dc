"""Two app processes behind nginx (``ndcg-lab app --replicas 2``) in Chromium: whichever process
answers, nothing is lost.

- the owner of a workspace on one process and its read-only link on the other see each other's
  writes at their next run;
- a team's two members on the two processes submit to a task with a cap of one: one run stored,
  one refused;
- a process SIGKILLed: its visitor's browser reconnects through nginx to the other process and
  keeps its workspace, and writes again.

Each browser is pinned to a process by the proxy's own affinity cookie
(:meth:`tests.e2e.replicas.Deployment.pin`, read back from nginx's access log).
"""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from metrics import settings
from metrics.tasks import Tasks
from metrics.tasks import views as task_views
from ndcg_lab.deploy.nginx import COOKIE
from tests.e2e.helpers import (
    LEGAL,
    RUNS_LABEL,
    TIMEOUT,
    TOKEN_IN_URL,
    arrive,
    arrive_with_run,
    go_to,
    main,
    open_app,
    runs_table,
    upload,
    variant_run,
    wait_for_app,
    workspace_links,
)
from tests.e2e.replicas import deployment_fixture  # noqa: F401  (the fixture `deployment`)
from tests.e2e.test_tasks import rush_task, submit

pytestmark = pytest.mark.visitor(timezone="Europe/Paris")


def test_the_owner_and_the_read_only_link_on_two_processes_see_each_others_writes(deployment, visitor, tmp_path):
    first, second = deployment.ports
    owner, teacher = visitor(), visitor()
    deployment.pin(owner, first)
    deployment.pin(teacher, second)
    arrive_with_run(owner, deployment.url, tmp_path, "lecture.run")
    view_token = TOKEN_IN_URL.search(workspace_links(owner)[1]).group(1)

    open_app(teacher, f"{deployment.url}/data?ws={view_token}")
    expect(main(teacher)).to_contain_text("read-only link", timeout=TIMEOUT)
    expect(runs_table(teacher)).to_contain_text("lecture", timeout=TIMEOUT)

    upload(owner, wait_for_app, RUNS_LABEL, [variant_run(LEGAL / "dense.run", tmp_path, "second.run")])
    expect(runs_table(owner)).to_contain_text("second", timeout=TIMEOUT)
    open_app(teacher, f"{deployment.url}/data?ws={view_token}")      # its next run, on the other process
    expect(runs_table(teacher)).to_contain_text("second", timeout=TIMEOUT)


def test_a_teams_members_on_two_processes_hit_the_cap_exactly(deployment, visitor, tmp_path):
    tasks = Tasks(settings.load({"NDCG_LAB_HOME": str(deployment.home), "NDCG_LAB_PUBLIC_URL": f"{deployment.url}/"}))
    links, team_links, runs = rush_task(tasks, 2, tmp_path)
    for team, link in enumerate(team_links):
        members = [visitor(), visitor()]
        for member, port in zip(members, deployment.ports):
            deployment.pin(member, port)
            open_app(member, link)
        for member in members:
            submit(member, runs[team])
        texts = sorted(main(m).inner_text() for m in members)
        assert sum("scored on the public topics" in t for t in texts) == 1
        assert sum("used all 1 submissions" in t for t in texts) == 1
    stored = [s for s in task_views.view(tasks.open(links.instructor)).submissions if s.team is not None]
    assert sorted(s.team_name for s in stored) == ["T0", "T1"]


def test_a_killed_process_its_visitor_goes_on_with_the_other_and_keeps_the_workspace(deployment, visitor, tmp_path):
    first, second = deployment.ports
    page = visitor()
    deployment.pin(page, first)
    token = arrive(page, deployment.url)
    go_to(page, wait_for_app, "Data")
    upload(page, wait_for_app, RUNS_LABEL, [variant_run(LEGAL / "bm25.run", tmp_path, "before.run")])
    deployment.kill(first)
    # The visitor's next load: nginx sends it to the live process (its own is down or starting
    # again), which opens the workspace from the token in the address; the cookie follows.
    open_app(page, page.url)
    expect(runs_table(page)).to_contain_text("before", timeout=TIMEOUT)
    assert deployment.served_by(next(c["value"] for c in page.context.cookies() if c["name"] == COOKIE)) == second
    upload(page, wait_for_app, RUNS_LABEL, [variant_run(LEGAL / "dense.run", tmp_path, "after.run")])
    expect(runs_table(page)).to_contain_text("after", timeout=TIMEOUT)
    assert TOKEN_IN_URL.search(page.url).group(1) == token
    open_app(page, f"{deployment.url}/data?ws={token}")
    expect(runs_table(page)).to_contain_text("before", timeout=TIMEOUT)
    expect(runs_table(page)).to_contain_text("after", timeout=TIMEOUT)
