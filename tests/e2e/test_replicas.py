"""Two app processes behind nginx (``ndcg-lab app --replicas 2``) in Chromium: whichever process
answers, nothing is lost.

- the owner of a workspace on one process and its read-only link on the other see each other's
  writes at their next run;
- a team's two members on the two processes submit to a task with a cap of one: one run stored,
  one refused;
- a process SIGKILLed while its visitor uploads: the browser reconnects through nginx to the other
  process by itself (no reload), keeps its workspace and its read-only link, finds every stored
  run whole on disk (the one sent at the kill kept whole or not at all), and stores the run it
  uploads the moment it is back;
- a live check answered through both processes: each phone counted once, whichever process it
  comes back through, and the projector on one process follows the answers given on the other;
- a short link made on one process opens through the other;
- a team's run file held by a process killed before the Submit: after the reconnect the press
  asks for the file again, nothing is stored, and the file chosen again is stored once.

Each browser is pinned to a process by the proxy's own affinity cookie
(:meth:`tests.e2e.replicas.Deployment.pin`, read back from nginx's access log).
"""
from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from metrics import settings
from metrics.analysis import lessons
from metrics.analysis.lessons import from_spec
from metrics.store.live import LiveChecks
from metrics.store.workspaces import WorkspaceRegistry
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
    no_exception,
    open_app,
    runs_table,
    upload,
    variant_run,
    wait_for_app,
    workspace_links,
)
from tests.e2e.replicas import deployment_fixture  # noqa: F401  (the fixture `deployment`)
from tests.e2e.test_classroom import SPEC, answer, sent_already
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


CONNECTION = '[data-testid="stApp"]'


def connection_state(page) -> str:
    return page.locator(CONNECTION).get_attribute("data-test-connection-state") or ""


def stored_runs(deployment, token: str) -> dict[str, int]:
    """{run name: rows} of the workspace of ``token``, read from the home as a process of the
    deployment reads it (taking turns on the file); every run loaded whole."""
    config = settings.load({"NDCG_LAB_HOME": str(deployment.home), "NDCG_LAB_MODE": "shared",
                            "NDCG_LAB_DEPLOYMENT": f"port{deployment.port}"})
    registry = WorkspaceRegistry(config)
    try:
        workspace = registry.open(token).workspace
        return {run.name: len(workspace.load_run(c.name, run.name))
                for c in workspace.collections() for run in workspace.runs(c.name)}
    finally:
        registry.close()


def test_a_killed_process_its_visitor_reconnects_to_the_other_and_keeps_the_workspace(deployment, visitor, tmp_path):
    first, second = deployment.ports
    page, reader = visitor(), visitor()
    deployment.pin(page, first)
    token = arrive(page, deployment.url)
    go_to(page, wait_for_app, "Data")
    upload(page, wait_for_app, RUNS_LABEL, [variant_run(LEGAL / "bm25.run", tmp_path, "before.run")])
    link = workspace_links(page)[1]
    page.evaluate("window.ndcgLabSamePage = true")       # gone if the browser loads the page again
    during = variant_run(LEGAL / "dense.run", tmp_path, "during.run")
    box = page.locator('[data-testid="stFileUploader"]').filter(has_text=RUNS_LABEL)
    box.locator('input[type="file"]').set_input_files(str(during))
    deployment.kill(first)                                # while the upload is sent and stored
    # Streamlit's frontend loses its websocket, asks nginx for the health check and the websocket
    # again: its own process refuses, nginx sends both to the other one, which runs the page
    # again from the address (the token), and the cookie follows it.
    page.wait_for_function(f"document.querySelector('{CONNECTION}')"
                           ".getAttribute('data-test-connection-state') !== 'CONNECTED'", timeout=TIMEOUT)
    page.wait_for_function(f"document.querySelector('{CONNECTION}')"
                           ".getAttribute('data-test-connection-state') === 'CONNECTED'", timeout=TIMEOUT)
    # Another run at once: its rerun may stop the new session's first run before that run draws
    # the uploader, so the session does not know the widget and Streamlit calls no on_change
    # (the page stores what it left: ui/ingest.store_left).
    after = variant_run(LEGAL / "bm25_qe.run", tmp_path, "after.run")
    upload(page, wait_for_app, RUNS_LABEL, [after])
    assert page.evaluate("window.ndcgLabSamePage === true")   # reconnected, not reloaded
    assert connection_state(page) == "CONNECTED"
    assert deployment.served_by(next(c["value"] for c in page.context.cookies() if c["name"] == COOKIE)) == second
    assert TOKEN_IN_URL.search(page.url).group(1) == token
    expect(runs_table(page)).to_contain_text("before", timeout=TIMEOUT)
    lines = {name: len(path.read_text().splitlines())
             for name, path in [("before", tmp_path / "before.run"), ("during", during)]}
    stored = stored_runs(deployment, token)   # the run sent at the kill: kept whole, or not at all
    assert stored["before"] == lines["before"]
    assert stored.get("during", lines["during"]) == lines["during"]
    expect(runs_table(page)).to_contain_text("after", timeout=TIMEOUT)
    open_app(reader, link)                                  # the read-only link, from before the kill
    expect(main(reader)).to_contain_text("read-only link", timeout=TIMEOUT)
    go_to(reader, wait_for_app, "Data")
    expect(runs_table(reader)).to_contain_text("before", timeout=TIMEOUT)
    expect(runs_table(reader)).to_contain_text("after", timeout=TIMEOUT)
    assert stored_runs(deployment, token)["after"] == len(after.read_text().splitlines())


def test_a_live_check_answered_through_both_processes_counts_each_phone_once(deployment, visitor):
    first, second = deployment.ports
    checks = LiveChecks(deployment.home)
    check, _key = checks.open(lessons.encode([from_spec(SPEC)]), minutes=30)
    room = visitor()
    deployment.pin(room, second)
    open_app(room, f"{deployment.url}/learn?live={check.code}&view=projector")
    expect(room.locator(".pj-status")).to_contain_text("0 answers", timeout=TIMEOUT)
    phones = []
    for count, (port, value) in enumerate([(first, "0.70"), (second, "0.704"), (first, "70%")], start=1):
        phone = visitor()
        deployment.pin(phone, port)
        answer(phone, deployment, check.code, value)
        phones.append(phone)
        # the projector on the second process redraws by itself: nothing is clicked on it
        expect(room.locator(".pj-status")).to_contain_text(f"{count} answer", timeout=TIMEOUT)
    deployment.pin(phones[0], second)              # the first phone again, now through the other process
    open_app(phones[0], f"{deployment.url}/learn?live={check.code}")
    sent_already(phones[0])
    tally = {(t.answer, t.n, t.correct) for t in checks.tally(check.code)}
    checks.close()
    assert tally == {("0.7", 2, True), ("0.704", 1, False)}
    expect(room.locator(".pj-status")).to_contain_text("3 answers", timeout=TIMEOUT)


def test_a_short_link_made_on_one_process_opens_through_the_other(deployment, visitor):
    first, second = deployment.ports
    maker, reader = visitor(), visitor()
    deployment.pin(maker, first)
    open_app(maker, f"{deployment.url}/learn?lesson=sandbox")
    main(maker).get_by_text("Short link and QR code: this sandbox").click()
    url = main(maker).locator('[data-testid="stExpander"] [data-testid="stCode"] code').last.text_content().strip()
    assert url.startswith(f"{deployment.url}/s/")
    route = deployment.pin(reader, second)
    open_app(reader, url)
    assert urlsplit(reader.url).path == "/learn"
    assert parse_qs(urlsplit(reader.url).query) == parse_qs(urlsplit(maker.url).query)
    assert deployment.served_by(route) == second
    no_exception(reader)


def up(deployment, port: int) -> None:
    """Until the process on ``port`` answers its health check (the supervisor restarts a killed one)."""
    for _ in range(600):
        if deployment._healthy(port):
            return
        time.sleep(0.2)
    raise AssertionError(f"the process on {port} did not come back")


def test_a_team_whose_process_dies_before_its_submit_is_asked_for_the_file_again(deployment, visitor, tmp_path):
    first, second = deployment.ports
    tasks = Tasks(settings.load({"NDCG_LAB_HOME": str(deployment.home), "NDCG_LAB_PUBLIC_URL": f"{deployment.url}/"}))
    links, team_links, runs = rush_task(tasks, 1, tmp_path)
    page = visitor()
    up(deployment, first)                        # started again after an earlier test's kill
    deployment.pin(page, first)
    open_app(page, team_links[0])
    form = main(page).locator('[data-testid="stForm"]')
    form.locator('input[type="file"]').set_input_files(str(runs[0]))
    expect(form.locator('[data-testid="stFileChipName"]')).to_have_count(1, timeout=TIMEOUT)
    expect(form.locator('[data-testid="stFileChipIconSpinner"]')).to_have_count(0, timeout=TIMEOUT)
    page.evaluate("window.ndcgLabSamePage = true")
    deployment.kill(first)                       # the file is in the dead process's memory only
    page.wait_for_function(f"document.querySelector('{CONNECTION}')"
                           ".getAttribute('data-test-connection-state') !== 'CONNECTED'", timeout=TIMEOUT)
    page.wait_for_function(f"document.querySelector('{CONNECTION}')"
                           ".getAttribute('data-test-connection-state') === 'CONNECTED'", timeout=TIMEOUT)
    wait_for_app(page)
    form.get_by_role("button", name="Submit").click()
    wait_for_app(page)
    expect(main(page)).to_contain_text("Choose a run file first", timeout=TIMEOUT)   # the file died with its process
    no_exception(page)
    assert [s for s in task_views.view(tasks.open(links.instructor)).submissions if s.team is not None] == []
    submit(page, runs[0])                         # chosen again: stored by the live process
    expect(main(page)).to_contain_text("scored on the public topics", timeout=TIMEOUT)
    assert page.evaluate("window.ndcgLabSamePage === true")
    assert deployment.served_by(next(c["value"] for c in page.context.cookies() if c["name"] == COOKIE)) == second
    stored = [s for s in task_views.view(tasks.open(links.instructor)).submissions if s.team is not None]
    assert [s.team_name for s in stored] == ["T0"]
