"""Thirty teams submit to one class task within a minute: lost, over the cap, errors, time from
upload to score, server CPU and memory; and the README's screenshots of the task page.

    python bench/bench_tasks.py                          # 30 teams arriving over 60 s, in Chromium
    python bench/bench_tasks.py --mode socket            # the same, each team a websocket client, no browser
    python bench/bench_tasks.py --mode command           # the same, each team a `task submit` command
    python bench/bench_tasks.py --profile /tmp/server.txt   # py-spy of the server during the minute
    python bench/bench_tasks.py --code /path/to/other/checkout   # its app and commands, for a before/after
    python bench/bench_tasks.py --screenshots docs/screenshots

Starts `streamlit run app.py` on a fresh NDCG_LAB_HOME (the harness of tests/e2e), creates a task
of the legal sample with a cap of one submission per team and the bm25 baseline, joins the teams,
and gives each its own run (the dense run retagged). Arrivals: seeded uniform times over
``--window`` seconds, sorted (a class told "submit now").

``browser`` mode: one headless Chromium, a context per team whose team page is opened before the
minute starts (at most ``--loading`` pages loading at once, as students opening their links over
a few minutes would). At its arrival time a team chooses its file and presses Submit, then again
(the second is over the cap). Upload to score: from choosing the file to the score (or the
refusal) shown on that team's page. ``socket`` mode: each team is a session of Streamlit's own
protocol (bench/stclient.py) in this one asyncio process, its team page opened as in browser mode
(the link's path and query string; ``--loading`` at a time); at its arrival time it uploads its run
through the file_uploader's endpoint and sends the script run that presses Submit with the file in
the form. Upload to score: from asking for the upload URL to the arrival of the delta holding the
score (or the refusal); nothing is rendered, so this is the server's latency plus the client's
parsing of the messages, not what a student sees.

``command`` mode: no browser; at its arrival time each team runs ``python -m metrics task submit
TEAM_LINK RUN`` (the same task file the server holds; the second run is refused); upload to score
is the command's wall time, Python's start and imports included (their floor, ``python -m metrics
--help``, is measured in the same run).

Lost: a team whose first submission is not stored; over the cap: stored submissions beyond one
per team (both from the task's instructor view afterwards). Server: peak RSS of the server
process and its children (sampled every 0.1 s, from before the pages open to the end) and its
CPU seconds from the start of the minute to the last answer; the CPU of this process (in socket
mode, all the clients) over the same span. Prints a Markdown section for bench/RESULTS.md;
asserts nothing.
Run it alone: `python bench/bench_tasks.py`, with no other benchmark running on the machine.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil
import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from stclient import AppSession, Shown, file_state, pressed  # noqa: E402  (bench/, beside this file)

from metrics.tasks import views as task_views  # noqa: E402
from tests.e2e.helpers import CHROMIUM, CHROMIUM_ARGS, LEGAL, AppServer, errors_on, idle  # noqa: E402
from tests.e2e.servers import tasks_of  # noqa: E402
from tests.e2e.test_load import LOAD_TIMEOUT, PeakRSS  # noqa: E402
from tests.e2e.test_tasks import rush_task, submit_try  # noqa: E402

REFUSED = "used all 1 submissions"
STORED = "scored on the public topics"
RUN_LABEL = "Run file (TREC format)"
QUEUE_NOTE = "in the queue"


def outcome(answer: str) -> str:
    """What the team page's answer says: "stored", "refused" (over a cap of one) or "other"."""
    return "stored" if STORED in answer else "refused" if REFUSED in answer else "other"


def the_answer(shown: list) -> Shown | None:
    """The answer to a press among what its run showed (bench/stclient.py's ``Shown``): the alert
    that says stored or refused, else the first alert or exception. The admission queue's note
    ("You are number N in the queue") is never the answer, whatever element draws it."""
    said = [s for s in shown if s.kind in ("alert", "exception") and QUEUE_NOTE not in s.text]
    return next((s for s in said if outcome(s.text) != "other"), said[0] if said else None)


def start(home: str, code: Path = ROOT) -> AppServer:
    """The app (of the checkout ``code``) on ``home``, its links built on its own address."""
    server = AppServer(home=Path(home), app=str(code / "app.py"))
    server.env["NDCG_LAB_PUBLIC_URL"] = f"{server.url}/"
    return server.start()


def arrivals(teams: int, window: float, seed: int) -> list[float]:
    """Seconds after the start at which each team submits: seeded, uniform over ``window``, sorted."""
    return sorted(float(x) for x in np.random.default_rng(seed).uniform(0.0, window, teams))


def load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


SERVER: list[psutil.Process] = []


def cpu_of() -> float:
    """CPU seconds (user + system) of the server process so far."""
    times = SERVER[0].cpu_times()
    return times.user + times.system


async def the_minute(teams: list, runs: list[Path], at: list[float], tries: int, started: list, attempt,
                     finish=None) -> list[dict]:
    """The minute: its start recorded in ``started``, then each team (a page, a session, a link)
    waits for its arrival time and makes ``tries`` attempts in a row. ``attempt(team, run)()`` gives
    (seconds, "stored" | "refused" | "other", the answer's text if known); ``finish(team)`` the
    errors found afterwards (exception boxes)."""
    started.append((time.perf_counter(), load(), cpu_of(), time.process_time()))
    t0 = time.perf_counter()

    async def team_tries(team, run: Path, when: float) -> dict:
        out = {"results": [], "seconds": [], "answers": [], "errors": [], "arrival": when}
        once = attempt(team, run)
        await asyncio.sleep(max(0.0, t0 + when - time.perf_counter()))
        for _ in range(tries):
            seconds, result, answer = await once()
            out["seconds"].append(seconds)
            out["results"].append(result)
            out["answers"].append(answer)
            out["done"] = time.perf_counter() - t0
        if finish is not None:
            out["errors"] += await finish(team)
        return out

    return await asyncio.gather(*(team_tries(team, run, when) for team, run, when in zip(teams, runs, at)))


async def opened_first(links: list[str], loading: int, open_one) -> list:
    """Every team page opened before the minute, ``loading`` at a time (``open_one(link)``)."""
    gate = asyncio.Semaphore(loading)

    async def gated(link):
        async with gate:
            return await open_one(link)

    return await asyncio.gather(*(gated(link) for link in links))


async def browser_class(links: list[str], runs: list[Path], at: list[float], loading: int, tries: int,
                        started: list) -> list[dict]:
    """Every team page opened first (``loading`` at a time); then each team submits at its time."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)

        async def opened(link):
            context = await browser.new_context(viewport={"width": 1200, "height": 900})
            context.set_default_timeout(120_000)
            page = await context.new_page()
            await page.goto(link, wait_until="domcontentloaded")
            await idle(page, LOAD_TIMEOUT)
            return page

        def attempt(page, run):
            async def once():
                return (*await submit_try(page, run), "")
            return once

        try:
            pages = await opened_first(links, loading, opened)
            return await the_minute(pages, runs, at, tries, started, attempt, errors_on)
        finally:
            await browser.close()


async def socket_class(links: list[str], runs: list[Path], at: list[float], loading: int, tries: int,
                       started: list) -> list[dict]:
    """As ``browser_class``, each team a websocket session of Streamlit's protocol (bench/stclient.py):
    at its time it uploads its run through the file_uploader's endpoint and sends the Submit press."""

    def attempt(session: AppSession, run: Path):
        data = run.read_bytes()

        async def once():
            since = session.mark()
            began = time.perf_counter()
            try:
                upload = await session.upload(run.name, data)
                await session.rerun([file_state(session.widget_id("file_uploader", RUN_LABEL), [upload]),
                                     pressed(session.widget_id("button", "Submit"))])
                await session.idle()
            except (TimeoutError, OSError, requests.RequestException) as exc:  # a lost session
                return time.perf_counter() - began, "other", f"{type(exc).__name__}: {exc}"
            answer = the_answer(session.shown[since:])
            if answer is None:
                return time.perf_counter() - began, "other", "no answer shown"
            return answer.at - began, outcome(answer.text), answer.text
        return once

    async def exceptions(session: AppSession) -> list[str]:
        return [s.text for s in session.shown if s.kind == "exception"]

    sessions = await opened_first(links, loading, lambda link: AppSession(link, timeout=300).open())
    try:
        return await the_minute(sessions, runs, at, tries, started, attempt, exceptions)
    finally:
        await asyncio.gather(*(session.close() for session in sessions))


async def command_class(links: list[str], runs: list[Path], at: list[float], tries: int, env: dict,
                        started: list) -> list[dict]:
    """Each team runs ``python -m metrics task submit`` at its time (``tries`` times in a row)."""

    def attempt(link: str, run: Path):
        async def once():
            began = time.perf_counter()
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "metrics", "task", "submit", link, str(run), cwd=env["PYTHONPATH"], env=env,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            stdout, stderr = await process.communicate()
            seconds = time.perf_counter() - began
            text = stdout.decode() + stderr.decode()
            result = "refused" if REFUSED in text else "stored" if process.returncode == 0 else "other"
            return seconds, result, text.strip().splitlines()[-1] if text.strip() else f"exit {process.returncode}"
        return once

    return await the_minute(links, runs, at, tries, started, attempt)


def command_floor(env: dict, times: int = 3) -> float:
    """Median wall seconds of ``python -m metrics --help``: a command's start and imports."""
    seconds = []
    for _ in range(times):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-m", "metrics", "--help"], cwd=env["PYTHONPATH"], env=env, capture_output=True,
                       check=True)
        seconds.append(time.perf_counter() - began)
    return statistics.median(seconds)


def bench(teams: int, window: float, seed: int, mode: str, loading: int, tries: int, profile: Path | None,
          code: Path) -> int:
    before = load()
    at = arrivals(teams, window, seed)
    started: list = []
    floor = None
    with tempfile.TemporaryDirectory(prefix="ndcg-lab-bench-tasks-") as home:
        server = start(home, code)
        spy = None
        try:
            tasks = tasks_of(server)
            links, team_links, runs = rush_task(tasks, teams, Path(home), baseline=True)
            env = {**os.environ, "NDCG_LAB_HOME": home, "NDCG_LAB_PUBLIC_URL": f"{server.url}/",
                   "PYTHONPATH": str(code)}
            if mode == "command":
                floor = command_floor(env)
            SERVER[:] = [psutil.Process(server.process.pid)]
            if profile is not None:
                spy = subprocess.Popen(["py-spy", "record", "--format", "raw", "--rate", "100", "--subprocesses",
                                        "--output", str(profile), "--pid", str(server.process.pid)],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            with PeakRSS(server.process.pid) as rss:
                if mode == "browser":
                    sessions = asyncio.run(browser_class(team_links, runs, at, loading, tries, started))
                elif mode == "socket":
                    sessions = asyncio.run(socket_class(team_links, runs, at, loading, tries, started))
                else:
                    sessions = asyncio.run(command_class(team_links, runs, at, tries, env, started))
                cpu = cpu_of() - started[0][2]
                client_cpu = time.process_time() - started[0][3]
                during = load()
            if spy is not None:
                spy.send_signal(signal.SIGINT)
                spy.wait(timeout=60)
            stored = [s for s in task_views.view(tasks.open(links.instructor)).submissions if s.team is not None]
        finally:
            if spy is not None and spy.poll() is None:
                spy.kill()
            server.stop()
    per_team: dict = {}
    for s in stored:
        per_team[s.team_name] = per_team.get(s.team_name, 0) + 1
    lost = teams - len(per_team)
    over = sum(n - 1 for n in per_team.values() if n > 1)
    errors = sum(len(s["errors"]) for s in sessions) + sum(r == "other" for s in sessions for r in s["results"])
    first = sorted(s["seconds"][0] for s in sessions if s["seconds"])
    refused = sorted(s["seconds"][1] for s in sessions if len(s["seconds"]) > 1)
    wall = max(s.get("done", 0.0) for s in sessions)
    what = {"browser": "in Chromium, every team page open before the minute",
            "socket": "each a websocket session of Streamlit's protocol, no browser, every page open before the minute",
            "command": "each a `task submit` command, no browser"}[mode]
    print(f"## Class task: {teams} teams arriving over {window:g} s ({what})\n")
    command = f"python bench/bench_tasks.py --teams {teams} --window {window:g} --seed {seed} --mode {mode}"
    print(f"Command: `{command}" + (f" --loading {loading}" if mode != "command" else "")
          + ("" if code == ROOT else f" --code {code}") + "`.  ")
    print(f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.  ")
    print(f"Machine: {os.cpu_count()} cores, {platform.platform()}; Python {platform.python_version()}.  ")
    print(f"Load average (1/5/15 min): before {before}; when the minute started {started[0][1]}; at its end "
          f"{during}; after {load()}.  ")
    print(f"This process's CPU in the minute (the bench{', its clients' if mode == 'socket' else ''}): "
          f"{client_cpu:.1f} s.\n")
    print("| mode | teams | lost | over the cap | errors | median s upload to score | slowest s | "
          "median s to the refusal | all done s | server CPU s | peak server RSS MiB |"
          + (" command floor s |" if floor is not None else ""))
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if floor is not None else ""))
    label = mode if code == ROOT else f"{mode} ({code})"
    print(f"| {label} | {teams} | {lost} | {over} | {errors} | {statistics.median(first):.2f} | {max(first):.2f} | "
          f"{statistics.median(refused) if refused else float('nan'):.2f} | {wall:.1f} | {cpu:.1f} | "
          f"{rss.peak / 2**20:.0f} |" + (f" {floor:.2f} |" if floor is not None else ""))
    found = sorted({e for s in sessions for e in s["errors"]}
                   | {a for s in sessions for r, a in zip(s["results"], s["answers"]) if r == "other" and a})
    if found:
        print("\nErrors (distinct): " + "; ".join(e[:200] for e in found[:5]))
    return 0


def screenshots(folder: Path) -> int:
    """The instructor's, a team's and the projector's page of a small task, in Chromium."""
    from playwright.sync_api import sync_playwright

    from tests.e2e.helpers import CHROMIUM, CHROMIUM_ARGS, open_app

    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ndcg-lab-shots-") as home:
        server = start(home)
        try:
            tasks = tasks_of(server)
            from metrics.tasks import TaskDefinition

            links = tasks.create(TaskDefinition(title="IR 101: legal retrieval", closes=time.time() + 3 * 86400,
                                                measures=("nDCG@10", "AP"), per_day=3, total=10,
                                                description="Rank the case law for each query. "
                                                            "Hidden topics decide the final standings."),
                                 topics=LEGAL / "topics.tsv", qrels=LEGAL / "qrels.txt",
                                 baselines=[("bm25", LEGAL / "bm25.run")])
            teams = {name: tasks.join(links.join, name) for name in ("Rankers", "Dense & Co", "QE fans")}
            for link, run in zip(teams.values(), ("bm25_ce", "dense", "bm25_qe")):
                tasks.open(link).submit((LEGAL / f"{run}.run").read_bytes(), run, f"{run}.run")
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
                context = browser.new_context(viewport={"width": 1400, "height": 1700}, timezone_id="Europe/Paris")
                page = context.new_page()
                for name, url in (("task-team", teams["Rankers"]), ("task-projector", links.projector),
                                  ("task-instructor", links.instructor)):
                    open_app(page, url)
                    page.wait_for_timeout(1500)  # tables paint after the script run ends
                    page.screenshot(path=str(folder / f"{name}.png"))
                    print(folder / f"{name}.png")
                browser.close()
        finally:
            server.stop()
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teams", type=int, default=30)
    parser.add_argument("--window", type=float, default=60.0, help="seconds over which the teams arrive")
    parser.add_argument("--seed", type=int, default=1, help="seed of the arrival times")
    parser.add_argument("--mode", choices=("browser", "socket", "command"), default="browser")
    parser.add_argument("--loading", type=int, default=4, help="team pages loading at once before the minute")
    parser.add_argument("--tries", type=int, default=2, help="submissions per team (the cap is one)")
    parser.add_argument("--profile", type=Path, default=None, help="py-spy's raw stacks of the server, here")
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose app and commands run")
    parser.add_argument("--screenshots", type=Path, default=None, help="write the README's screenshots here")
    args = parser.parse_args(argv)
    if args.screenshots is not None:
        return screenshots(args.screenshots)
    return bench(args.teams, args.window, args.seed, args.mode, args.loading, args.tries, args.profile,
                 args.code.resolve())


if __name__ == "__main__":
    raise SystemExit(main())
