"""Thirty teams submit to one class task within a minute: lost, over the cap, errors, time from
upload to score, server memory; and the README's screenshots of the task page.

    python bench/bench_tasks.py                       # 30 teams, at most 10 browser contexts at once
    python bench/bench_tasks.py --teams 30 --bound 30
    python bench/bench_tasks.py --screenshots docs/screenshots

Starts `streamlit run app.py` on a fresh NDCG_LAB_HOME (the harness of tests/e2e), creates a task
of the legal sample with a cap of one submission per team, joins the teams, then drives one
headless Chromium with a Playwright context per team (tests/e2e/test_tasks.py ``rush``): each
opens its team link and submits its own run twice (the second is over the cap). "Upload to score"
is a try's time from choosing the file to the page's answer (the score, or the refusal). Lost: a
team whose first submission is not stored; over the cap: stored submissions beyond one per team
(both counted from the task's instructor view). Peak server RSS: the server process and its
children, sampled every 0.1 s. Prints a Markdown section for bench/RESULTS.md; asserts nothing.
Run it alone: `flock /work/team/bench.lock python bench/bench_tasks.py`.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.conftest import AppServer  # noqa: E402
from tests.e2e.test_load import PeakRSS  # noqa: E402
from tests.e2e.test_tasks import LEGAL, library, rush, rush_task  # noqa: E402


def start(home: str) -> AppServer:
    """The app on ``home``, its links built on its own address."""
    server = AppServer(home=Path(home))
    server.env["NDCG_LAB_PUBLIC_URL"] = f"{server.url}/"
    return server.start()


def bench(teams: int, bound: int) -> int:
    before = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="ndcg-lab-bench-tasks-") as home:
        server = start(home)
        try:
            tasks = library(server)
            links, team_links, runs = rush_task(tasks, teams, Path(home))
            started = time.perf_counter()
            with PeakRSS(server.process.pid) as rss:
                sessions = asyncio.run(rush(team_links, runs, bound))
            wall = time.perf_counter() - started
            stored = [s for s in tasks.open(links.instructor).view()["submissions"] if s["team"] is not None]
        finally:
            server.stop()
    per_team = {}
    for s in stored:
        per_team[s["team_name"]] = per_team.get(s["team_name"], 0) + 1
    lost = teams - len(per_team)
    over = sum(n - 1 for n in per_team.values() if n > 1)
    errors = sum(len(s["errors"]) for s in sessions) + sum(r == "other" for s in sessions for r in s["results"])
    first = sorted(s["seconds"][0] for s in sessions if s["seconds"])
    refused = sorted(s["seconds"][1] for s in sessions if len(s["seconds"]) > 1)
    print(f"## Class task: {teams} teams submit at once (at most {bound} browser contexts)\n")
    print(f"Command: `python bench/bench_tasks.py --teams {teams} --bound {bound}`.  ")
    print(f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.  ")
    print(f"Machine: {os.cpu_count()} cores, {platform.platform()}; Python {platform.python_version()}.  ")
    after = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"Load average (1/5/15 min) before the run: {before}; after: {after}.\n")
    print("| teams | lost | over the cap | errors | median s upload to score | slowest s | "
          "median s to the refusal | peak server RSS MiB | all teams done s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {teams} | {lost} | {over} | {errors} | {statistics.median(first):.1f} | {max(first):.1f} | "
          f"{statistics.median(refused):.1f} | {rss.peak / 2**20:.0f} | {wall:.1f} |")
    return 0


def screenshots(folder: Path) -> int:
    """The instructor's, a team's and the projector's page of a small task, in Chromium."""
    from playwright.sync_api import sync_playwright

    from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, open_app

    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ndcg-lab-shots-") as home:
        server = start(home)
        try:
            tasks = library(server)
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
    parser.add_argument("--bound", type=int, default=10, help="browser contexts open at once")
    parser.add_argument("--screenshots", type=Path, default=None, help="write the README's screenshots here")
    args = parser.parse_args(argv)
    if args.screenshots is not None:
        return screenshots(args.screenshots)
    return bench(args.teams, args.bound)


if __name__ == "__main__":
    raise SystemExit(main())
