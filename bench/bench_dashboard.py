"""Dashboard timings in a real browser: first screen, gain switch, and (optionally) a 7M-line upload.

    python bench/bench_dashboard.py          # sample data only
    python bench/bench_dashboard.py --big    # also upload bench/data/dev-run.txt and a re-ranking of it,
                                             # then time every page and a widget change on each

Starts `streamlit run app.py` on a fresh workspace (the harness of tests/e2e), drives Debian's
headless Chromium, and prints medians with the command and the load average. Nothing here is
asserted; the figures go to RESULTS.md.

Times are taken in the page (tests/e2e/conftest.py TABLE_SHOWN_JS, polled at every animation
frame): a first screen from the navigation's start, a gain switch from just before the click, to
the leaderboard table holding the expected text with the script run finished. The first screen
is also given as Playwright sees it (goto, then expect() on the table), whose retries after 100,
250, 500 and 1000 ms round it up.

With ``--big``, every page (:data:`PAGES`) is opened from the sidebar twice (first visit, then
cached: after another page) and one widget on it is changed (:data:`WIDGETS`: a cutoff, a
measure, a system, a query); each is timed in the page from just before the click to the end of
the script run it started (a MutationObserver on the app's script state, :data:`RUN_END_JS`).
The second run is bench/data/dev-run.txt with its top 100 of every query re-scored (written once
beside it as dev-rerank.txt), so that Where it differs finds a re-ranking at depth 100.
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

from conftest import CHROMIUM, CHROMIUM_ARGS, AppServer  # noqa: E402
from helpers import LEADERBOARD, TABLE_SHOWN_JS, wait_for_app  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402

TIMEOUT = 600_000

PAGES = ("Leaderboard", "Curves", "Compare", "Where it differs", "Fusion", "Query explorer", "Judgments",
         "Measure behaviour")
WIDGETS = {   # page -> (kind, label, value): the widget changed on it
    "Leaderboard": ("radio", "Linear", None),                               # a measure (the gain)
    "Curves": ("radio", "AP", None),                                        # a measure
    "Compare": ("select", "Baseline", "dev-rerank"),                        # a system
    "Where it differs": ("number", "Measure cutoff k (nDCG@k)", "20"),      # a cutoff
    "Fusion": ("number", "RRF k", "30"),                                    # a parameter
    "Query explorer": ("slider", "Cutoff k", None),                         # a cutoff
    "Judgments": ("number", "Top k", "20"),                                 # a cutoff
    "Measure behaviour": ("slider", "α", None),                             # a level
}

# Installs (once per page load) a record of the script state's changes: [[state, performance.now()], ...].
WATCH_JS = """() => {
    if (window.__benchRuns) return;
    window.__benchRuns = [];
    const app = document.querySelector('[data-testid="stApp"]');
    new MutationObserver(() => window.__benchRuns.push([app.getAttribute('data-test-script-state'),
                                                        performance.now()]))
        .observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
}"""
# performance.now() of the last end of a script run recorded after ``since`` (null when none).
RUN_END_JS = """(since) => {
    const ends = (window.__benchRuns || []).filter(([s, t]) => t > since && s === 'notRunning');
    return ends.length ? ends[ends.length - 1][1] : null;
}"""


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


def timed(page, act) -> float:
    """Seconds from just before ``act()`` (a click or a key) to the end of the script run it caused."""
    page.evaluate(WATCH_JS)
    started = page.evaluate("() => performance.now()")
    act()
    page.wait_for_timeout(300)   # the rerun request reaches the server
    wait_for_app(page, TIMEOUT)
    ended = page.evaluate(RUN_END_JS, started)
    return ((ended if ended is not None else page.evaluate("() => performance.now()")) - started) / 1000


def open_page(page, name: str) -> float:
    link = page.locator('[data-testid="stSidebarNavLink"]').filter(has_text=name).first
    return timed(page, link.click)


def change_widget(page, name: str) -> float:
    kind, label, value = WIDGETS[name]
    main = page.locator('[data-testid="stMain"]')
    if kind == "radio":
        where = page if name == "Leaderboard" else main
        return timed(page, where.get_by_text(label, exact=True).first.click)
    if kind == "number":
        box = main.get_by_label(label, exact=True).first
        box.fill(value)
        return timed(page, lambda: box.press("Enter"))
    if kind == "slider":
        handle = main.get_by_role("slider", name=label).first
        handle.focus()
        return timed(page, lambda: handle.press("ArrowRight"))
    box = main.locator('[data-testid="stSelectbox"]').filter(has_text=label).first
    box.click()
    return timed(page, page.get_by_role("option", name=value, exact=True).first.click)


def every_page(page) -> list[tuple[str, float, float, float]]:
    """(page, first visit s, cached visit s, widget change s) of every page of :data:`PAGES`."""
    first = {}
    for name in PAGES:
        first[name] = open_page(page, name)
        print(f"  {name}: first visit {first[name]:.2f} s", flush=True)
    rows = []
    for name in PAGES:
        cached = open_page(page, name)
        try:
            widget = change_widget(page, name)
        except Exception as exc:   # a widget not found is reported, the other pages still timed
            print(f"  {name}: widget change failed ({type(exc).__name__}: {str(exc)[:120]})", flush=True)
            widget = float("nan")
        print(f"  {name}: cached {cached:.2f} s, {WIDGETS[name][1]} changed {widget:.2f} s", flush=True)
        rows.append((name, first[name], cached, widget))
    return rows


def reranking(run: Path) -> Path:
    """``run`` with its top 100 of every query re-scored by a seeded draw (a re-ranking at depth
    100, the rest in place), written beside it once."""
    out = run.with_name("dev-rerank.txt")
    if out.exists():
        return out
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as csv

    table = csv.read_csv(run, read_options=csv.ReadOptions(column_names=list("qxdrst")),
                         parse_options=csv.ParseOptions(delimiter=" "),
                         convert_options=csv.ConvertOptions(column_types={"q": pa.string(), "d": pa.string()}))
    rank, score = table["r"].to_numpy(), table["s"].to_numpy()
    drawn = 100.0 + np.round(np.random.default_rng(7).random(len(rank)) * 1024) / 1024
    table = pa.table({"q": table["q"], "x": table["x"], "d": table["d"], "r": rank,
                      "s": np.where(rank <= 100, drawn, score), "t": pa.array(["rerank"] * len(rank))})
    csv.write_csv(table, out, write_options=csv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none"))
    return out


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
            second = reranking(run)
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
            box.locator('input[type="file"]').set_input_files([str(run), str(second)])
            expect(page.locator('[data-testid="stTable"]').first).to_contain_text("dev-rerank", timeout=TIMEOUT)
            stored = time.perf_counter() - t
            page.locator('[data-testid="stSidebarNavLink"]').filter(has_text="Leaderboard").first.click()
            leaderboard_visible(page, "dev-run")
            wait_for_app(page, TIMEOUT)
            total = time.perf_counter() - t
            print(f"two 7M-line runs: upload + parse + store {stored:.1f} s; to their leaderboard {total:.1f} s "
                  "end to end")
            switches = gain_switches(page, rounds=3)
            print(f"gain switch with the 7M-line run (click to table re-rendered, in the page): {figures(switches)}")
            print(f"server RSS with the two 7M-line runs loaded: {server_rss_mb(server):.0f} MB", flush=True)
            rows = every_page(page)
            print("\n| page | first visit s | cached s | widget | widget change s |\n|---|---:|---:|---|---:|")
            for name, first, cached, widget in rows:
                print(f"| {name} | {first:.2f} | {cached:.2f} | {WIDGETS[name][1]} | {widget:.2f} |")
            print(f"server RSS after every page: {server_rss_mb(server):.0f} MB")
        print(f"load average after: {load()}")
        browser.close()
    server.stop()


if __name__ == "__main__":
    main()
