"""Sixteen concurrent visitors of a shared-mode server: errors, peak server RSS, time to a ready page,
beside a minimal Streamlit app (one ``st.table``) measured in the same run.

    python bench/bench_load.py                 # 16 sessions, NDCG_LAB_MODE=shared, and the minimal app
    python bench/bench_load.py --sessions 8 --mode personal

Starts `streamlit run app.py` on a fresh NDCG_LAB_HOME (the harness of tests/e2e), then drives 16
Playwright contexts of one headless Chromium at once (tests/e2e/test_load.py: each opens the app,
uploads a small run on the Data page, opens Leaderboard, Curves and Compare). Prints a Markdown
section for bench/RESULTS.md. "Ready" is a session's first screen, timed in the page from the
navigation's start to the leaderboard's table with the script run finished (tests/e2e/conftest.py
TABLE_SHOWN_JS, polled at every animation frame).

The peer is the least Streamlit can do to show the same table: an app whose script is one
``st.table`` of the legal sample's leaderboard (the default measures' means, as the Leaderboard
prints them), served by the same Streamlit, opened by as many new sessions at once. It runs first,
then our app with the visitors above, then (``--first-screens``) our app with visitors that only
open it, as the peer's do. Nothing is asserted here (tests/e2e/test_load.py asserts the memory
bound). Run it alone: `python bench/bench_load.py`.
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

from tests.e2e.helpers import CHROMIUM, CHROMIUM_ARGS, TABLE_SHOWN_JS, AppServer, new_visitor  # noqa: E402
from tests.e2e.test_load import LOAD_TIMEOUT, PeakRSS, sessions  # noqa: E402

MINIMAL_APP = '''import pandas as pd
import streamlit as st

st.table(pd.read_csv({table!r}, index_col=0, dtype=str))
'''


def leaderboard_csv(path: Path) -> Path:
    """The legal sample's leaderboard (default measures, exponential gain, 4 decimals) as CSV text."""
    import metrics

    legal = ROOT / "ndcg_lab" / "sample_data" / "legal"
    measures = [metrics.with_gain(m, "exp") for m in metrics.DEFAULT_MEASURES]
    table = metrics.means(metrics.evaluate(legal / "qrels.txt", {p.stem: p for p in sorted(legal.glob("*.run"))},
                                           measures))
    table.map(lambda value: f"{value:.4f}").to_csv(path)
    return path


async def first_screens(url: str, count: int) -> dict:
    """``count`` new sessions at once that open ``url`` and wait for its table: ready times, errors."""
    from playwright.async_api import async_playwright

    record: dict = {"ready": [], "errors": []}

    async def visitor(browser, i):
        context, page = await new_visitor(browser, LOAD_TIMEOUT)
        try:
            await page.goto(url, wait_until="commit")
            shown = await page.wait_for_function(TABLE_SHOWN_JS, arg="bm25_ce", polling="raf")
            record["ready"].append(await shown.json_value() / 1000)
            if await page.locator('[data-testid="stException"]').count():
                record["errors"].append(f"session {i}: an exception box")
        except Exception as exc:  # noqa: BLE001 - a failed session is counted, the others go on
            record["errors"].append(f"session {i}: {type(exc).__name__}: {str(exc)[:300]}")
        finally:
            await context.close()

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            await asyncio.gather(*(visitor(browser, i) for i in range(count)))
        finally:
            await browser.close()
    return record


def measure(home: Path, env: dict, app: str, drive) -> tuple[dict, float, int]:
    """(record, wall seconds, peak server RSS bytes) of one server on ``home`` driven by ``drive(url)``."""
    server = AppServer(home=home, env=env, app=app).start()
    try:
        started = time.perf_counter()
        with PeakRSS(server.process.pid) as rss:
            record = asyncio.run(drive(server.url))
        return record, time.perf_counter() - started, rss.peak
    finally:
        server.stop()


def row(what: str, count: int, record: dict, wall: float, peak: int, peer: float | None) -> str:
    ready = sorted(record.get("ready", []))
    median = statistics.median(ready) if ready else float("nan")
    ratio = f"{median / peer:.2f}" if peer else "1.00"
    return (f"| {what} | {count} | {len(record.get('errors', []))} | {peak / 2**20:.0f} | {median:.1f} | "
            f"{max(ready) if ready else float('nan'):.1f} | {wall:.1f} | {ratio} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--mode", choices=("shared", "personal"), default="shared")
    parser.add_argument("--first-screens", action="store_true",
                        help="also time our app with visitors that only open it, as the minimal app's do")
    parser.add_argument("--no-peer", action="store_true", help="skip the minimal one-table app")
    args = parser.parse_args(argv)
    count = args.sessions
    before = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    rows, errors, peer = [], [], None
    with tempfile.TemporaryDirectory(prefix="ndcg-lab-bench-load-") as scratch:
        scratch = Path(scratch)
        env = {"NDCG_LAB_MODE": args.mode}
        if not args.no_peer:
            app = scratch / "minimal_app.py"
            app.write_text(MINIMAL_APP.format(table=str(leaderboard_csv(scratch / "leaderboard.csv"))))
            record, wall, peak = measure(scratch / "peer", {}, str(app), lambda url: first_screens(url, count))
            ready = record["ready"]
            peer = statistics.median(ready) if ready else None
            rows.append(row("minimal app: one st.table of the legal leaderboard", count, record, wall, peak, None))
            errors += [f"minimal app: {e}" for e in record["errors"]]
        record, wall, peak = measure(scratch / "ours", env, "app.py", lambda url: sessions(url, count))
        rows.append(row("nDCG Lab: open, upload, Leaderboard, Curves, Compare", count, record, wall, peak, peer))
        errors += record.get("errors", [])
        if args.first_screens:
            record, wall, peak = measure(scratch / "first", env, "app.py", lambda url: first_screens(url, count))
            rows.append(row("nDCG Lab: open only", count, record, wall, peak, peer))
            errors += record["errors"]
    after = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    command = " ".join(["python", "bench/bench_load.py", *(sys.argv[1:] if argv is None else argv)])
    print(f"## Load: {count} concurrent sessions ({args.mode} mode)\n")
    print(f"Command: `{command}`.  ")
    print(f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.  ")
    print(f"Machine: {os.cpu_count()} cores, {platform.platform()}; Python {platform.python_version()}.  ")
    print(f"Load average (1/5/15 min) before the run: {before}; after: {after}.\n")
    print("| app and visitors | sessions | errors | peak server RSS MiB | median s to a ready page | slowest s | "
          "all sessions done s | median / minimal app's |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    for error in errors:
        print(f"\n- {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
