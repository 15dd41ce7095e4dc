"""Dashboard timings in a real browser: first screen, gain switch, and (optionally) a 7M-line upload.

    python bench/bench_dashboard.py          # sample data only
    python bench/bench_dashboard.py --big    # also upload bench/data/dev-run.txt

Starts `streamlit run app.py` on a fresh workspace (the harness of tests/e2e), drives Debian's
headless Chromium, and prints medians with the command and the load average. Nothing here is
asserted; the figures go to RESULTS.md.

Times are taken in the page (tests/e2e/conftest.py TABLE_SHOWN_JS, polled at every animation
frame): a first screen from the navigation's start, a gain switch from just before the click, to
the leaderboard table holding the expected text with the script run finished. The first screen
is also given as Playwright sees it (goto, then expect() on the table), whose retries after 100,
250, 500 and 1000 ms round it up.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from conftest import CHROMIUM, CHROMIUM_ARGS, LEADERBOARD, TABLE_SHOWN_JS, AppServer, wait_for_app  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402

TIMEOUT = 600_000


def leaderboard_visible(page, text: str) -> None:
    expect(page.locator(LEADERBOARD).first).to_contain_text(text, timeout=TIMEOUT)


def shown_at(page, text: str) -> float:
    """Milliseconds since the page's navigation started when the leaderboard held ``text``."""
    return page.wait_for_function(TABLE_SHOWN_JS, arg=text, polling="raf", timeout=TIMEOUT).json_value()


def first_screen(browser, url: str) -> tuple[float, float]:
    """(in the page, as Playwright sees it) seconds to a new session's leaderboard, each in a new context."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(url, wait_until="commit")
    in_page = shown_at(page, "bm25_ce") / 1000
    context.close()
    context = browser.new_context()
    page = context.new_page()
    started = time.perf_counter()
    page.goto(url)
    leaderboard_visible(page, "bm25_ce")
    seen = time.perf_counter() - started
    context.close()
    return in_page, seen


def gain_switches(page, rounds: int) -> list[float]:
    """Seconds from a click on the sidebar's gain to the leaderboard re-rendered, linear and back."""
    times = []
    for gain, header in [("Linear", "nDCG@10"), ("Exponential", "nDCG(dcg='exp-log2')@10")] * rounds:
        radio = page.locator('[data-testid="stSidebar"]').get_by_text(gain, exact=False).first
        radio.wait_for()
        started = page.evaluate("() => performance.now()")
        radio.click()
        times.append((shown_at(page, header) - started) / 1000)
        wait_for_app(page, TIMEOUT)
    return times


def load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def figures(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} s ({', '.join(f'{x:.2f}' for x in values)})"


def server_rss_mb(server: AppServer) -> float:
    import psutil

    process = psutil.Process(server.process.pid)
    return sum(p.memory_info().rss for p in [process, *process.children(recursive=True)]) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loads", type=int, default=5, help="first-screen loads on the warm server")
    parser.add_argument("--big", action="store_true", help="upload bench/data/dev-run.txt (6.98M lines)")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="ndcg-lab-bench-"))
    server = AppServer(home=home)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        started = time.perf_counter()
        server.start()
        healthy = time.perf_counter()
        page = browser.new_page()
        page.goto(server.url)
        leaderboard_visible(page, "bm25_ce")
        cold = time.perf_counter() - healthy
        print(f"server start to health OK: {healthy - started:.2f} s; first screen on a fresh workspace "
              f"(imports both samples): {cold:.2f} s")
        page.close()

        print(f"command: {' '.join(['python', *sys.argv])}; load average before: {load()}")
        warm = [first_screen(browser, server.url) for _ in range(args.loads)]
        print(f"first screen, new session on the running server (in the page): {figures([w for w, _ in warm])} "
              f"over {len(warm)} loads; as Playwright's goto + expect() sees it: {figures([s for _, s in warm])}")

        page = browser.new_page()
        page.goto(server.url)
        leaderboard_visible(page, "bm25_ce")
        switches = gain_switches(page, rounds=3)
        print(f"gain switch on legal (click to table re-rendered, in the page): {figures(switches)}")
        print(f"server RSS with the samples loaded: {server_rss_mb(server):.0f} MB")

        if args.big:
            data = ROOT / "bench" / "data"
            qrels, run = data / "dev-qrels.txt", data / "dev-run.txt"
            page.locator('[data-testid="stSidebarNavLink"]').filter(has_text="Data").first.click()
            wait_for_app(page, TIMEOUT)
            expander = page.locator('[data-testid="stExpander"]').filter(has_text="New collection")
            expander.locator("summary").click()
            field = expander.get_by_label("Collection name")
            field.fill("dev")
            field.press("Enter")
            wait_for_app(page, TIMEOUT)
            box = page.locator('[data-testid="stFileUploader"]').filter(has_text="Qrels (qid iter docno rel)")
            box.locator('input[type="file"]').set_input_files([str(qrels)])
            expect(box.locator('[data-testid="stFileChipIconSpinner"]')).to_have_count(0, timeout=TIMEOUT)
            wait_for_app(page, TIMEOUT)
            expander.get_by_role("button", name="Create collection").click()
            wait_for_app(page, TIMEOUT)
            expect(page.locator('[data-testid="stMain"]')).to_contain_text("Collection: dev", timeout=TIMEOUT)
            t = time.perf_counter()
            box = page.locator('[data-testid="stFileUploader"]').filter(has_text="Runs (TREC format")
            box.locator('input[type="file"]').set_input_files([str(run)])
            expect(page.locator('[data-testid="stTable"]').first).to_contain_text("dev-run", timeout=TIMEOUT)
            stored = time.perf_counter() - t
            page.locator('[data-testid="stSidebarNavLink"]').filter(has_text="Leaderboard").first.click()
            leaderboard_visible(page, "dev-run")
            wait_for_app(page, TIMEOUT)
            total = time.perf_counter() - t
            print(f"7M-line run: upload + parse + store {stored:.1f} s; to its leaderboard {total:.1f} s end to end")
            switches = gain_switches(page, rounds=3)
            print(f"gain switch with the 7M-line run (click to table re-rendered, in the page): {figures(switches)}")
            print(f"server RSS with the 7M-line run loaded: {server_rss_mb(server):.0f} MB")
        print(f"load average after: {load()}")
        browser.close()
    server.stop()


if __name__ == "__main__":
    main()
