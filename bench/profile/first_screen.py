"""First screens of several checkouts and of the minimal one-table app, alternated in one Chromium.

    python bench/profile/first_screen.py --loads 12 base=/path/to/old/checkout mine=.

Starts `streamlit run app.py` in each checkout (personal mode unless --mode shared, a fresh
NDCG_LAB_HOME each) and bench/bench_load.py's minimal app (one st.table of the legal leaderboard,
same Streamlit), opens each once to warm it, then opens them in turn, a new browser context per load.
Per load: seconds in the page from the navigation's start to the first table holding "bm25_ce"
with the script run finished (tests/e2e/conftest.py TABLE_SHOWN_JS); the user+system CPU seconds
of this Chromium's processes from goto to 1.5 s after that; the page's main-thread task and script
seconds (Chrome's Performance.getMetrics TaskDuration, ScriptDuration); the Markdown blocks in the
page when the table shows. Prints every load and the medians; asserts nothing.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from bench.bench_load import MINIMAL_APP, leaderboard_csv  # noqa: E402
from tests.e2e.helpers import CHROMIUM, CHROMIUM_ARGS, TABLE_SHOWN_JS, free_port  # noqa: E402

MARKDOWN_JS = "() => document.querySelectorAll('[data-testid=\"stMarkdownContainer\"]').length"


def start(cwd: Path, app: str, env: dict, scratch: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    home = scratch / f"home-{port}"
    with open(scratch / f"server-{port}.log", "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", app, "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none", "--server.runOnSave", "false"],
            cwd=cwd, env={**os.environ, "NDCG_LAB_HOME": str(home), **env}, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read() == b"ok":
                    return process, url
        except OSError:
            time.sleep(0.1)
    process.terminate()
    raise RuntimeError(f"{cwd}: no health answer within 60 s")


def chromium_cpu() -> dict[int, float]:
    """{pid: user+system seconds} of this process's Chromium descendants."""
    seconds = {}
    for process in psutil.Process().children(recursive=True):
        try:
            if "chrom" in process.name():
                times = process.cpu_times()
                seconds[process.pid] = times.user + times.system
        except psutil.Error:
            pass
    return seconds


def first_screen(browser, url: str) -> tuple[float, float, int, float, float]:
    context = browser.new_context()
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable")
    before = chromium_cpu()
    page.goto(url, wait_until="commit")
    shown = page.wait_for_function(TABLE_SHOWN_JS, arg="bm25_ce", polling="raf", timeout=300_000).json_value()
    blocks = page.evaluate(MARKDOWN_JS)
    page.wait_for_timeout(1500)
    cpu = sum(seconds - before.get(pid, 0.0) for pid, seconds in chromium_cpu().items())
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    context.close()
    return shown / 1000, cpu, blocks, metrics["TaskDuration"], metrics["ScriptDuration"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loads", type=int, default=10)
    parser.add_argument("--mode", choices=("personal", "shared"), default="personal")
    parser.add_argument("checkouts", nargs="+", help="NAME=DIR of a checkout whose app.py to serve")
    args = parser.parse_args()
    results: dict[str, list] = {}
    with tempfile.TemporaryDirectory(prefix="ndcg-lab-first-screen-") as scratch:
        scratch = Path(scratch)
        minimal = scratch / "minimal_app.py"
        minimal.write_text(MINIMAL_APP.format(table=str(leaderboard_csv(scratch / "leaderboard.csv"))))
        servers = {}
        try:
            for item in args.checkouts:
                name, folder = item.split("=", 1)
                servers[name] = start(Path(folder).resolve(), "app.py", {"NDCG_LAB_MODE": args.mode}, scratch)
            servers["minimal app"] = start(scratch, str(minimal), {}, scratch)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
                for _, url in servers.values():
                    first_screen(browser, url)
                print(f"command: python {' '.join(sys.argv)}; load average before: {os.getloadavg()}")
                for i in range(args.loads):
                    for name, (_, url) in servers.items():
                        figures = first_screen(browser, url)
                        results.setdefault(name, []).append(figures)
                        shown, cpu, blocks, tasks, script = figures
                        print(f"{i} {name}: {shown:.2f} s in the page, {cpu:.2f} s Chromium CPU, {blocks} Markdown "
                              f"blocks, main thread {tasks:.2f} s, script {script:.2f} s", flush=True)
                print(f"load average after: {os.getloadavg()}")
                browser.close()
        finally:
            for process, _ in servers.values():
                process.terminate()
                process.wait()
    for name, rows in results.items():
        def median(i, rows=rows):
            return statistics.median(r[i] for r in rows)
        print(f"{name}: in the page median {median(0):.2f} s ({', '.join(f'{r[0]:.2f}' for r in rows)}); "
              f"Chromium CPU median {median(1):.2f} s; main thread {median(3):.2f} s, script {median(4):.2f} s; "
              f"Markdown blocks median {median(2):.0f}")


if __name__ == "__main__":
    main()
