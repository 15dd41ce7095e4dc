"""Class tasks in Chromium against a real server: the whole course of a task, a leak crawl of
everything a team link and the projector reach (able to catch a planted leak), and five teams
submitting at once (the 30-team version is bench/bench_tasks.py).

The links are built on NDCG_LAB_PUBLIC_URL, set to the test server's address. The close is moved
a few seconds ahead through the library (as a script of the teacher would), then passes.
"""
from __future__ import annotations

import asyncio
import io as stdlib_io
import re
import time
from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import expect

import metrics
from metrics.tasks import TaskDefinition, Tasks
from metrics.tasks import views as task_views
from tests.e2e.helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    LEADERBOARD,
    LEGAL,
    TIMEOUT,
    errors_on,
    go_to,
    idle,
    main,
    new_visitor,
    open_app,
    run_async,
    submit,
    wait_for_app,
)
from tests.e2e.servers import public_server, tasks_of  # noqa: F401  (the fixture `server`)
from tests.metrics.tasks.leaks import secrets_of

pytestmark = pytest.mark.visitor(timezone="Europe/Paris")   # visitor(): one person each, in Paris time


def join(page, link: str, name: str) -> str:
    open_app(page, link)
    main(page).get_by_label("Team name").fill(name)
    main(page).get_by_role("button", name="Join").click()
    wait_for_app(page)
    expect(main(page)).to_contain_text("Welcome", timeout=TIMEOUT)
    return page.url


def download(page, button: str) -> str:
    with page.expect_download(timeout=TIMEOUT) as event:
        main(page).get_by_role("button", name=button).click()
    return Path(event.value.path()).read_text()


def hidden_means(runs: dict, hidden: set, measure: str = "nDCG@10") -> dict:
    """Means on the hidden topics by metrics.evaluate on the original files (independent of the task)."""
    qrels = metrics.read_qrels(LEGAL / "qrels.txt")
    frame = metrics.evaluate(qrels, {name: metrics.read_run(path) for name, path in runs.items()}, [measure])
    frame = frame[frame["qid"].isin(hidden)]
    return frame.groupby("system")["value"].mean().to_dict()


def test_a_class_task_from_creation_to_the_copy_into_a_workspace(server, visitor):
    teacher = visitor()
    open_app(teacher, f"{server.url}/task")
    main(teacher).get_by_label("Submissions per team in all (0: no cap)").fill("1")
    main(teacher).get_by_role("button", name="Create the task").click()
    wait_for_app(teacher)
    expect(main(teacher)).to_contain_text("The task is created", timeout=TIMEOUT)
    codes = main(teacher).locator('[data-testid="stCode"]')
    instructor, join_link, projector = (codes.nth(i).inner_text().strip() for i in range(3))
    assert all(u.startswith(f"{server.url}/task?task=") for u in (instructor, join_link, projector))

    alpha, beta = visitor(), visitor()
    join(alpha, join_link, "Alpha")
    join(beta, join_link, "Beta")
    submit(alpha, LEGAL / "dense.run")
    expect(main(alpha)).to_contain_text("scored on the public topics: nDCG(dcg='exp-log2')@10", timeout=TIMEOUT)
    submit(beta, LEGAL / "bm25_ce.run")
    expect(main(beta)).to_contain_text("scored on the public topics", timeout=TIMEOUT)
    submit(alpha, LEGAL / "bm25_qe.run")  # the third submission, over Alpha's cap of one
    expect(main(alpha)).to_contain_text("submission refused: the team has used all 1 submissions", timeout=TIMEOUT)
    expect(main(alpha)).to_contain_text("no further submission is allowed", timeout=TIMEOUT)

    # the public board of a team shows both teams and the baseline, times in Paris time
    alpha.reload()
    wait_for_app(alpha)
    board = main(alpha).locator('[data-testid="stTable"]').filter(has_text="baseline: bm25").first
    for name in ("Alpha", "Beta", "◀ you"):
        expect(board).to_contain_text(name, timeout=TIMEOUT)
    expect(board).to_contain_text("Europe/Paris", timeout=TIMEOUT)

    # the close passes (moved a few seconds ahead)
    tasks = tasks_of(server)
    tasks.open(instructor).set_close(time.time() + 3)
    time.sleep(4)
    alpha.reload()
    wait_for_app(alpha)
    expect(main(alpha)).to_contain_text("Status: closed", timeout=TIMEOUT)
    assert main(alpha).locator('input[type="file"]').count() == 0

    # release with the qrels; the final standings and their CSV are right
    open_app(teacher, instructor)
    main(teacher).get_by_text("Release the qrels too").click()
    wait_for_app(teacher)
    main(teacher).get_by_role("button", name="Release the final standings").click()
    wait_for_app(teacher)
    expect(main(teacher)).to_contain_text("Released", timeout=TIMEOUT)
    csv = pd.read_csv(stdlib_io.StringIO(download(teacher, "Final standings (CSV)")), comment="#", index_col="name")
    hidden = set(tasks.open(instructor).snapshot().hidden_qids)
    expected = hidden_means({"Alpha": LEGAL / "dense.run", "Beta": LEGAL / "bm25_ce.run",
                             "baseline: bm25": LEGAL / "bm25.run"}, hidden, "nDCG(dcg='exp-log2')@10")
    column = "nDCG(dcg='exp-log2')@10"
    assert list(csv.index) == sorted(expected, key=expected.get, reverse=True)
    for name, value in expected.items():
        assert csv.loc[name, column] == pytest.approx(value, abs=1e-12)
    beta.reload()
    wait_for_app(beta)
    expect(main(beta)).to_contain_text("Final standings", timeout=TIMEOUT)

    # Alpha copies its run and the released qrels into its workspace; the Leaderboard shows them
    alpha.reload()
    wait_for_app(alpha)
    main(alpha).get_by_role("button", name="Copy my runs and the released qrels into my workspace").click()
    wait_for_app(alpha)
    expect(main(alpha)).to_contain_text("Added the collection", timeout=TIMEOUT)
    go_to(alpha, wait_for_app, "Leaderboard")
    expect(main(alpha)).to_contain_text("Collection Class task", timeout=TIMEOUT)
    expect(main(alpha).locator(LEADERBOARD).first).to_contain_text("dense", timeout=TIMEOUT)


def crawl(page, url: str, *, downloads: bool = False) -> list[str]:
    """Every text a visitor of ``url`` can reach: the HTML (text, attributes, hover titles) with
    every expander open and every tooltip hovered, each download's content, and the messages of a
    malformed and an over-the-cap submission (on a team page). ``downloads``: the page has download
    buttons (a team page), so the crawl waits for the first one before it reads anything."""
    open_app(page, url)
    if downloads:   # drawn last: an idle page under load may not have them yet
        expect(main(page).locator('[data-testid="stDownloadButton"]').first).to_be_visible(timeout=TIMEOUT)
    texts = []
    for summary in main(page).locator("summary").all():
        summary.click()
        wait_for_app(page)
    for icon in page.locator('[data-testid="stTooltipIcon"], [data-testid="stTooltipHoverTarget"]').all():
        try:
            icon.hover(timeout=2_000)
            texts.append(page.locator('[data-testid="stTooltipContent"]').all_inner_texts().__str__())
        except Exception:  # noqa: BLE001 - a tooltip that moved away has nothing to read
            pass
    texts += [page.content(), main(page).inner_text()]
    for button in main(page).locator('[data-testid="stDownloadButton"] button').all():
        with page.expect_download(timeout=TIMEOUT) as event:
            button.click()
        texts.append(Path(event.value.path()).read_text(errors="replace"))
    if main(page).locator('input[type="file"]').count():
        bad = Path(page.context.tmp) / "bad.run"
        bad.write_text("1 Q0 LEG-1 1 nan t\n")
        for path in (bad, LEGAL / "bm25_qe.run"):
            submit(page, path)
            texts += [page.content(), main(page).inner_text()]
    return texts


def test_no_hidden_judgment_or_score_reaches_a_team_or_the_projector(server, visitor, tmp_path):
    tasks = tasks_of(server)
    links = tasks.create(TaskDefinition(title="Leak hunt", closes=time.time() + 3600, measures=("nDCG@10", "AP"),
                                        total=2, dev_qrels=True, seed=5),
                         topics=LEGAL / "topics.tsv", qrels=LEGAL / "qrels.txt",
                         baselines=[("bm25", LEGAL / "bm25.run")])
    team = tasks.join(links.join, "Alpha")
    tasks.open(tasks.join(links.join, "Beta")).submit((LEGAL / "bm25_ce.run").read_bytes(), "ce", "ce.run",
                                                      "Betasecret cross-encoder method")
    tasks.open(team).submit((LEGAL / "dense.run").read_bytes(), "dense", "dense.run", "Alpha dense method")
    alpha = tasks.open(team).team
    page = visitor()
    page.context.tmp = str(tmp_path)
    for phase in ("open", "closed"):
        for url in (team, links.projector):
            texts = crawl(page, url, downloads=url == team)
            # after the crawl: its own submission included; Beta's method line (and Alpha's, for the projector)
            secret = secrets_of(tasks.open(links.instructor), alpha if url == team else None)
            assert secret.docnos and secret.numbers and "Betasecret cross-encoder method" in secret.methods
            found = [f for text in texts for f in secret.find(text)]
            assert found == [], f"{phase}, {url}: {found[:5]}"
            if url == team:  # the crawl did read the downloads: the dev set's public judgments are there
                assert re.search(r"^\S+ 0 LEG-\d+ \d", "\n".join(texts), re.MULTILINE)
        tasks.open(links.instructor).close()
    # the crawl is able to fail: a hidden per-query value planted in the team page is caught
    open_app(page, team)
    secret = secrets_of(tasks.open(links.instructor), alpha)   # the team's own (its method line is its own)
    planted = next(iter(sorted(secret.numbers)))
    page.evaluate("(text) => { const p = document.createElement('p'); p.textContent = text;"
                  " document.querySelector('[data-testid=\"stMain\"]').appendChild(p); }", f"topic 9: {planted}")
    assert secret.find(page.content()) == [f"hidden per-query value {planted}"]


TEAMS = 5
ALERTS_JS = """() => Array.from(document.querySelectorAll('[data-testid="stMain"] [data-testid="stAlert"]'))
    .map(e => e.innerText).join('|')"""


async def submit_try(page, run: Path) -> tuple[float, str]:
    """Choose ``run`` in an open team page and press Submit: the seconds from choosing the file to
    the page's answer, and "stored", "refused" (over a cap of one) or "other"."""
    before = await page.evaluate(ALERTS_JS)
    started = time.perf_counter()
    form = page.locator('[data-testid="stMain"] [data-testid="stForm"]')
    await form.locator('input[type="file"]').set_input_files(str(run))
    await page.locator('[data-testid="stFileChipName"]').first.wait_for()
    await form.get_by_role("button", name="Submit").click()
    await page.wait_for_function(f"(before) => {{ const now = ({ALERTS_JS})(); "
                                 "return now !== '' && now !== before; }", arg=before, polling=50)
    seconds = time.perf_counter() - started
    await idle(page)
    text = await page.locator('[data-testid="stMain"]').inner_text()
    return seconds, ("stored" if "scored on the public topics" in text else
                     "refused" if "used all 1 submissions" in text else "other")


async def team_session(browser, link: str, run: Path, tries: int = 2) -> dict:
    """One team in a context of its own: open its link, submit ``run`` ``tries`` times (the cap
    is one). Per try: "stored", "refused" or "other", and the seconds from choosing the file to
    the page's answer; errors on the page."""
    context, page = await new_visitor(browser, 4 * TIMEOUT)     # every team at once on the server's one core
    out = {"results": [], "seconds": [], "errors": []}
    try:
        await page.goto(link, wait_until="domcontentloaded")
        await idle(page)
        for _ in range(tries):
            seconds, result = await submit_try(page, run)
            out["seconds"].append(seconds)
            out["results"].append(result)
        out["errors"] = await errors_on(page)
    finally:
        await context.close()
    return out


async def rush(links: list[str], runs: list[Path], bound: int) -> list[dict]:
    """Every team at once, at most ``bound`` browser contexts open together."""
    from playwright.async_api import async_playwright

    gate = asyncio.Semaphore(bound)

    async def one(browser, link, run):
        async with gate:
            return await team_session(browser, link, run)

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            return await asyncio.gather(*(one(browser, link, run) for link, run in zip(links, runs)))
        finally:
            await browser.close()


def rush_task(tasks: Tasks, teams: int, folder: Path, *, baseline: bool = False) -> tuple:
    """A task with a cap of one (and the bm25 baseline), ``teams`` teams, and a run of each's own
    (the dense run retagged)."""
    links = tasks.create(TaskDefinition(title="Rush", closes=time.time() + 3600, total=1),
                         topics=LEGAL / "topics.tsv", qrels=LEGAL / "qrels.txt",
                         baselines=[("bm25", LEGAL / "bm25.run")] if baseline else ())
    team_links = [tasks.join(links.join, f"T{i}") for i in range(teams)]
    runs = []
    for i in range(teams):
        path = folder / f"t{i}.run"
        path.write_text("".join(re.sub(r"\S+$", f"t{i}", line) + "\n"
                                for line in (LEGAL / "dense.run").read_text().splitlines()))
        runs.append(path)
    return links, team_links, runs


def test_five_teams_submit_at_once(server, tmp_path):
    tasks = tasks_of(server)
    links, teams, runs = rush_task(tasks, TEAMS, tmp_path)
    sessions = run_async(rush(teams, runs, bound=TEAMS))
    assert sorted(r for s in sessions for r in s["results"]) == ["refused"] * TEAMS + ["stored"] * TEAMS
    assert [s["errors"] for s in sessions if s["errors"]] == []
    stored = [s for s in task_views.view(tasks.open(links.instructor)).submissions if s.team is not None]
    assert sorted(s.team_name for s in stored) == [f"T{i}" for i in range(TEAMS)]
