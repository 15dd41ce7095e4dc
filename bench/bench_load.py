"""Sixteen concurrent visitors of a shared-mode server: errors, peak server RSS, time to a ready page.

    python bench/bench_load.py                 # 16 sessions, NDCG_LAB_MODE=shared
    python bench/bench_load.py --sessions 8 --mode personal

Starts `streamlit run app.py` on a fresh NDCG_LAB_HOME (the harness of tests/e2e), then drives 16
Playwright contexts of one headless Chromium at once (tests/e2e/test_load.py: each opens the app,
uploads a small run on the Data page, opens Leaderboard, Curves and Compare). Prints a Markdown
section for bench/RESULTS.md. "Ready" is a session's first screen, timed in the page from the
navigation's start to the leaderboard's table with the script run finished (tests/e2e/conftest.py
TABLE_SHOWN_JS, polled at every animation frame). Nothing is asserted here (tests/e2e/test_load.py
asserts the memory bound). Run it alone: `flock /work/team/bench.lock python bench/bench_load.py`.
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
from tests.e2e.test_load import PeakRSS, sessions  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=16)
    parser.add_argument("--mode", choices=("shared", "personal"), default="shared")
    args = parser.parse_args(argv)
    before = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="ndcg-lab-bench-load-") as home:
        server = AppServer(home=Path(home), env={"NDCG_LAB_MODE": args.mode}).start()
        try:
            started = time.perf_counter()
            with PeakRSS(server.process.pid) as rss:
                record = asyncio.run(sessions(server.url, args.sessions))
            wall = time.perf_counter() - started
        finally:
            server.stop()
    ready = sorted(record.get("ready", []))
    errors = record.get("errors", [])
    print(f"## Load: {args.sessions} concurrent sessions ({args.mode} mode)\n")
    print(f"Command: `python bench/bench_load.py --sessions {args.sessions} --mode {args.mode}`.  ")
    print(f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.  ")
    print(f"Machine: {os.cpu_count()} cores, {platform.platform()}; Python {platform.python_version()}.  ")
    after = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"Load average (1/5/15 min) before the run: {before}; after: {after}.\n")
    print("| sessions | errors | peak server RSS MiB | median s to a ready page | slowest s | all sessions done s |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {args.sessions} | {len(errors)} | {rss.peak / 2**20:.0f} | "
          f"{statistics.median(ready) if ready else float('nan'):.1f} | {max(ready) if ready else float('nan'):.1f} | "
          f"{wall:.1f} |")
    for error in errors:
        print(f"\n- {error}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
