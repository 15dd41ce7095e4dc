"""Dashboard timings in a real browser: first screen, gain switch, and (optionally) a 7M-line upload.

    python bench/bench_dashboard.py          # sample data only
    python bench/bench_dashboard.py --big    # also upload bench/data/dev-run.txt and a re-ranking of it,
                                             # then time every page and a widget change on each
    python bench/bench_dashboard.py --big --pages Compare,Judgments --home /tmp/ws
                                             # a subset of the pages; the workspace kept for the next run
    python bench/bench_dashboard.py --pages all   # every page on the sample collection (the harness's check)

Starts `streamlit run app.py` on a fresh workspace (the harness of tests/e2e), drives Debian's
headless Chromium, and prints medians with the command and the load average. Nothing here is
asserted; the figures go to RESULTS.md.

Times are taken in the page (tests/e2e/conftest.py TABLE_SHOWN_JS, polled at every animation
frame): a first screen from the navigation's start, a gain switch from just before the click, to
the leaderboard table holding the expected text with the script run finished. The first screen
is also given as Playwright sees it (goto, then expect() on the table), whose retries after 100,
250, 500 and 1000 ms round it up.

With ``--big`` (or ``--pages`` on the samples), each page of :data:`PAGES` (or of ``--pages``) is
opened from the sidebar (first visit), then again after a light page (:data:`BETWEEN`: its inputs
cached), then one widget on it is changed (:data:`WIDGETS`: a cutoff, a measure, a system, a
query); each is timed in the page from just before the click to the end of the script run it
started (a MutationObserver on the app's script state, :data:`RUN_END_JS`), with the server
process's user and system CPU seconds over the step, Chromium's CPU seconds and the bytes of the
server's websocket messages to the page (a cached visit's include the light page's), and the
server's RSS is read after each page. Each step, and a cached visit after its light page, starts
once Chromium is idle (:func:`settled`): Plotly draws on after a script run has ended, and a
click while the page before is still being drawn waits for it. A step that does not end within
``--page-timeout`` seconds is recorded as "timed out after N s"; the server is then restarted on
the same workspace (which stops the computation left running) and the next page is timed, so
that one slow page does not abort the run. The second run is bench/data/dev-run.txt with its top
100 of every query re-scored (written once beside it as dev-rerank.txt), so that Where it differs
finds a re-ranking at depth 100.
``--home DIR`` keeps the workspace in DIR: a later run on the same DIR skips the upload (the
collection "dev" is already there), so that ``--pages`` can split the pages over several runs.
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
from playwright.sync_api import Error as PlaywrightError  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402

TIMEOUT = 600_000

PAGES = ("Leaderboard", "Curves", "Compare", "Where it differs", "Fusion", "Query explorer", "Judgments",
         "Measure behaviour")
WIDGETS = {   # page -> (kind, label, value): the widget changed on it
    "Leaderboard": ("radio", "Linear", None),                               # a measure (the gain)
    "Curves": ("radio", "AP", None),                                        # a measure
    "Compare": ("select", "Baseline", None),                                # a system (the next one)
    "Where it differs": ("number", "Measure cutoff k (nDCG@k)", "20"),      # a cutoff
    "Fusion": ("number", "RRF k", "30"),                                    # a parameter
    "Query explorer": ("slider", "Cutoff k", None),                         # a cutoff
    "Judgments": ("number", "Top k", "20"),                                 # a cutoff
    "Measure behaviour": ("slider", "α", None),                             # a level
}
TABS = {"Measure behaviour": "Discriminative power"}
"""Pages whose widget of :data:`WIDGETS` sits in a tab other than the first: a page computes only its
open tab, so that tab is opened first (its first computation, printed as "tab ... opened") and the
widget change timed after it."""
BETWEEN = "Learn NDCG"   # the page opened between a first and a cached visit: it computes nothing of a run
COLLECTION = "dev"       # the collection of the two 7M-line runs


class StepTimeout(Exception):
    """A step (a visit or a widget change) whose script run did not end within the page timeout."""

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


def timed(page, act, limit: float) -> float:
    """Seconds from just before ``act()`` (a click or a key) to the end of the script run it caused;
    :class:`StepTimeout` when the run has not ended after ``limit`` seconds."""
    page.evaluate(WATCH_JS)
    started = page.evaluate("() => performance.now()")
    act()
    page.wait_for_timeout(300)   # the rerun request reaches the server
    try:
        wait_for_app(page, limit * 1000)
    except (TimeoutError, PlaywrightError) as exc:
        if "Timeout" not in type(exc).__name__ and "imeout" not in str(exc):
            raise
        raise StepTimeout(f"timed out after {limit:.0f} s") from exc
    ended = page.evaluate(RUN_END_JS, started)
    return ((ended if ended is not None else page.evaluate("() => performance.now()")) - started) / 1000


def open_page(page, name: str, limit: float) -> float:
    link = page.locator('[data-testid="stSidebarNavLink"]').filter(has_text=name).first
    return timed(page, link.click, limit)


def change_widget(page, name: str, limit: float) -> float:
    """Seconds of the widget change of :data:`WIDGETS` on page ``name`` (the page is shown)."""
    kind, label, value = WIDGETS[name]
    main = page.locator('[data-testid="stMain"]')
    if name in TABS:
        opened = timed(page, main.get_by_role("tab", name=TABS[name]).first.click, limit)
        print(f"  {name}: tab {TABS[name]!r} opened {opened:.2f} s", flush=True)
    if kind == "radio":
        if name == "Leaderboard":   # the sidebar's gain, whose label goes on ("Linear (rel)")
            return timed(page, page.locator('[data-testid="stSidebar"]').get_by_text(label).first.click, limit)
        return timed(page, main.get_by_text(label, exact=True).first.click, limit)
    if kind == "number":
        box = main.get_by_label(label, exact=True).first
        box.fill(value)
        return timed(page, lambda: box.press("Enter"), limit)
    if kind == "slider":
        handle = main.locator('[data-testid="stSlider"]').filter(has_text=label).locator('input[type="range"]').first
        handle.focus()
        return timed(page, lambda: handle.press("ArrowRight"), limit)
    box = main.locator('[data-testid="stSelectbox"]').filter(has_text=label).locator('input[role="combobox"]').first
    box.click()
    if value:
        return timed(page, page.get_by_role("option", name=value, exact=True).first.click, limit)
    return timed(page, lambda: (page.keyboard.press("ArrowDown"), page.keyboard.press("Enter")), limit)


def cell(value: float | str) -> str:
    return value if isinstance(value, str) else f"{value:.2f}"


def every_page(session: Session, names: list[str], limit: float) -> list[tuple]:
    """(page, first visit, cached visit, widget change, server RSS MB) of each page of ``names``:
    seconds, or "timed out after N s" / "failed: ..." for a step that did not end."""
    rows = []
    for name in names:
        row: list[float | str] = [name]
        for step, act in (("first visit", lambda name=name: open_page(session.page, name, limit)),
                          ("cached visit", lambda name=name: (open_page(session.page, BETWEEN, limit), settled(),
                                                              open_page(session.page, name, limit))[2]),
                          ("widget change", lambda name=name: change_widget(session.page, name, limit))):
            if any(isinstance(v, str) and v.startswith(("timed out", "not reached")) for v in row[1:]):
                row.append("not reached")   # the page never ended: its cache is not filled either
                continue
            settled()
            before, drawn, received = server_cpu(session.server), browser_cpu(), session.received
            try:
                value: float | str = act()
            except StepTimeout as exc:
                value = str(exc)
                session.recover()
            except Exception as exc:   # a widget not found is reported, the other pages still timed
                value = f"failed: {type(exc).__name__}: {str(exc).splitlines()[0][:100]}"
                session.recover()
            row.append(value)
            user, system = (after - was for after, was in zip(server_cpu(session.server), before))
            print(f"  {name}: {step} {cell(value)}" + (" s" if isinstance(value, float) else "") +
                  f" (server CPU: user {user:.2f} s, system {system:.2f} s; browser CPU "
                  f"{browser_cpu() - drawn:.2f} s; {(session.received - received) / 1e6:.2f} MB to the browser)",
                  flush=True)
        rss = server_rss_mb(session.server)
        row.append(rss)
        print(f"  {name}: server RSS {rss:.0f} MB", flush=True)
        rows.append(tuple(row))
    return rows


class Session:
    """The browser page of one session on the server, and how to get back to a working one when a
    step timed out: restart the server on the same workspace (which ends the script run left
    computing) and open the collection again."""

    def __init__(self, browser, server: AppServer, collection: str | None) -> None:
        self.browser, self.server, self.collection = browser, server, collection
        self.page = None
        self.received = 0   # bytes of the server's websocket messages to this page so far

    def _count(self, socket) -> None:
        socket.on("framereceived", lambda payload: setattr(self, "received", self.received + len(payload)))

    def open(self) -> None:
        if self.page is not None:
            self.page.close()
        self.page = self.browser.new_page()
        self.page.on("websocket", self._count)
        self.page.goto(self.server.url + (f"/?collection={self.collection}" if self.collection else ""))
        self.page.locator(LEADERBOARD).first.wait_for(timeout=TIMEOUT)
        wait_for_app(self.page, TIMEOUT)

    def recover(self) -> None:
        print("  (restarting the server on the same workspace)", flush=True)
        self.server.restart()
        self.open()


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


def upload(page, marker: Path) -> None:
    """Create the collection "dev" from bench/data/dev-qrels.txt and upload dev-run.txt and its
    re-ranking on the Data page; ``marker`` is written once both are stored."""
    data = ROOT / "bench" / "data"
    qrels, run = data / "dev-qrels.txt", data / "dev-run.txt"
    second = reranking(run)
    page.locator('[data-testid="stSidebarNavLink"]').filter(has_text="Data").first.click()
    wait_for_app(page, TIMEOUT)
    expander = page.locator('[data-testid="stExpander"]').filter(has_text="New collection")
    expander.locator("summary").click()
    field = expander.get_by_label("Collection name")
    field.fill(COLLECTION)
    field.press("Enter")
    wait_for_app(page, TIMEOUT)
    box = page.locator('[data-testid="stFileUploader"]').filter(has_text="Qrels (qid iter docno rel)")
    box.locator('input[type="file"]').set_input_files([str(qrels)])
    expect(box.locator('[data-testid="stFileChipIconSpinner"]')).to_have_count(0, timeout=TIMEOUT)
    wait_for_app(page, TIMEOUT)
    expander.get_by_role("button", name="Create collection").click()
    wait_for_app(page, TIMEOUT)
    expect(page.locator('[data-testid="stMain"]')).to_contain_text(f"Collection: {COLLECTION}", timeout=TIMEOUT)
    t = time.perf_counter()
    box = page.locator('[data-testid="stFileUploader"]').filter(has_text="Runs (TREC format")
    box.locator('input[type="file"]').set_input_files([str(run), str(second)])
    expect(page.locator('[data-testid="stTable"]').first).to_contain_text("dev-rerank", timeout=TIMEOUT)
    stored = time.perf_counter() - t
    page.locator('[data-testid="stSidebarNavLink"]').filter(has_text="Leaderboard").first.click()
    leaderboard_visible(page, "dev-run")
    wait_for_app(page, TIMEOUT)
    total = time.perf_counter() - t
    marker.write_text(f"{COLLECTION}\n")
    print(f"two 7M-line runs: upload + parse + store {stored:.1f} s; to their leaderboard {total:.1f} s "
          "end to end", flush=True)


def load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def figures(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f} s ({', '.join(f'{x:.2f}' for x in values)})"


def server_rss_mb(server: AppServer) -> float:
    import psutil

    process = psutil.Process(server.process.pid)
    return sum(p.memory_info().rss for p in [process, *process.children(recursive=True)]) / 1e6


def chromium_cpu() -> dict[str, float]:
    """CPU seconds (user and system) Chromium's processes have used so far, by their ``--type``
    (the browser process: "browser"): drawing, scripts, layout. Every Chromium on the machine
    counts, so the bench runs alone (not beside the browser tests)."""
    import psutil

    used: dict[str, float] = {}
    for process in psutil.process_iter(["name", "cmdline", "cpu_times"]):
        if not (process.info["name"] or "").startswith("chrom") or process.info["cpu_times"] is None:
            continue
        kind = next((a.split("=", 1)[1] for a in process.info["cmdline"] or [] if a.startswith("--type=")), "browser")
        used[kind] = used.get(kind, 0.0) + process.info["cpu_times"].user + process.info["cpu_times"].system
    return used


def browser_cpu() -> float:
    """:func:`chromium_cpu` of all its processes together."""
    return sum(chromium_cpu().values())


def settled(limit: float = 30.0) -> float:
    """Seconds until Chromium is idle (under 5% of a core over 250 ms), ``limit`` at most: a step
    starts once the page before it is drawn, so that its time is not the previous page's drawing
    (Plotly draws on after the script run that sent the charts has ended)."""
    started = time.perf_counter()
    used = browser_cpu()
    while time.perf_counter() - started < limit:
        time.sleep(0.25)
        now = browser_cpu()
        if now - used < 0.0125:
            break
        used = now
    return time.perf_counter() - started


def server_cpu(server: AppServer) -> tuple[float, float]:
    """CPU seconds the server process has used so far, (user, system), all its threads together.
    System time is mostly page faults here: on this VM a page of memory freed a few seconds before
    faults to the host when touched again (RESULTS.md, round 8), which the guest counts as system."""
    import psutil

    times = psutil.Process(server.process.pid).cpu_times()
    return times.user, times.system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loads", type=int, default=5, help="first-screen loads on the warm server")
    parser.add_argument("--big", action="store_true", help="upload bench/data/dev-run.txt (6.98M lines)")
    parser.add_argument("--pages", default=None,
                        help=f"comma-separated pages to time, or 'all' (default with --big: all): {', '.join(PAGES)}")
    parser.add_argument("--page-timeout", type=float, default=180.0,
                        help="seconds each step of a page (a visit, a widget change) may take before it is "
                             "recorded as timed out")
    parser.add_argument("--home", type=Path, default=None,
                        help="the workspace directory (kept; a later --big run on it skips the upload)")
    args = parser.parse_args()
    wanted = [] if args.pages is None and not args.big else list(PAGES) if args.pages in (None, "all") else \
        [p.strip() for p in args.pages.split(",") if p.strip()]
    unknown = [p for p in wanted if p not in PAGES]
    if unknown:
        parser.error(f"unknown page(s) {', '.join(unknown)}: pick from {', '.join(PAGES)}")
    home = args.home or Path(tempfile.mkdtemp(prefix="ndcg-lab-bench-"))
    marker = home / "bench-dev-stored"   # written once the two 7M-line runs are stored in this workspace
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

        if args.big and marker.exists():
            print(f"the workspace {home} already holds the collection {COLLECTION}: no upload", flush=True)
        elif args.big:
            upload(page, marker)
        if args.big:
            page.goto(f"{server.url}/?collection={COLLECTION}")
            leaderboard_visible(page, "dev-run")
            wait_for_app(page, TIMEOUT)
            switches = gain_switches(page, rounds=3)
            print(f"gain switch with the 7M-line run (click to table re-rendered, in the page): {figures(switches)}")
            print(f"server RSS with the two 7M-line runs loaded: {server_rss_mb(server):.0f} MB", flush=True)
        page.close()
        if wanted:
            session = Session(browser, server, COLLECTION if args.big else None)
            session.open()
            print(f"pages on {'the two 7M-line runs' if args.big else 'the samples'}, at most "
                  f"{args.page_timeout:.0f} s a step; load average before: {load()}", flush=True)
            rows = every_page(session, wanted, args.page_timeout)
            print("\n| page | first visit s | cached visit s | widget | widget change s | server RSS MB |\n"
                  "|---|---:|---:|---|---:|---:|")
            for name, first, cached, widget, rss in rows:
                print(f"| {name} | {cell(first)} | {cell(cached)} | {WIDGETS[name][1]} | {cell(widget)} | {rss:,.0f} |")
        print(f"load average after: {load()}")
        browser.close()
    server.stop()


if __name__ == "__main__":
    main()
