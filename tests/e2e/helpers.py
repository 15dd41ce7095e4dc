"""What the browser tests share, in one module: the server under test (:class:`AppServer`), the
waits (:func:`wait_for_app`, :func:`idle` for the async API), the selectors and the page helpers
every test module uses (the main area, the sidebar, switching pages, uploading, reading tables,
arriving as a shared-mode visitor). conftest.py hands the servers and browsers out as fixtures.

Every wait of these tests is :data:`TIMEOUT` unless a test says why it needs longer.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

REPO_ROOT = Path(__file__).resolve().parents[2]
LEGAL = REPO_ROOT / "ndcg_lab" / "sample_data" / "legal"
ARTIFACTS = REPO_ROOT / "test-artifacts" / "e2e"
CHROMIUM = os.environ.get("NDCG_LAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    # The machine has no network but loopback: without these Chromium keeps dialling out.
    "--disable-background-networking",
    "--disable-gpu",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
SERVER_START_TIMEOUT = 60.0
"""Seconds a server has to answer its health check."""
TIMEOUT = 30_000
"""Milliseconds of every wait of a page: Playwright's own timeout of each context and of every
``expect(...)`` (conftest.py sets both), and the helpers' waits."""
VIEWPORT = {"width": 1400, "height": 1000}
PHONE = {"width": 390, "height": 844}
"""A phone's viewport (an iPhone 12 to 14, in CSS pixels): what a student opens a class's links on."""
RUNS_LABEL = "Runs (TREC format"
"""The start of the Data page's run uploader's label."""
TOKEN_IN_URL = re.compile(r"[?&]ws=([A-Za-z0-9_-]{32})")
"""A shared-mode workspace token in a page's address."""


# --------------------------------------------------------------------------- server


def _die_with_parent() -> None:
    """In the child before exec: ask Linux to send SIGTERM when pytest goes away."""
    try:
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except Exception:  # not Linux: the fixture teardown still stops the server
        pass


PORTS_PER_WORKER = 2000
"""Each pytest-xdist worker takes the ports of its servers from a block of its own (gw0 from 10000,
gw1 from 12000, ...), below the kernel's ephemeral range: a port bound to 0 or the local end of a
connection is never taken from there, so the port one worker chose and has not yet started its
server on cannot be handed to another worker, nor taken by a client's connection meanwhile."""
_GIVEN: set[int] = set()


def _ephemeral_start() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _unused(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))     # no SO_REUSEADDR: a port in TIME_WAIT counts as used
        except OSError:
            return False
    return True


def free_port(count: int = 1) -> int:
    """The first of ``count`` consecutive TCP ports of 127.0.0.1 that nothing uses now and this
    process has not handed out before, from this worker's block (:data:`PORTS_PER_WORKER`); a random
    start in the block keeps two test sessions at once apart (``ndcg-lab app --replicas N`` on port P
    listens on P to P+N)."""
    import random

    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    low = 10_000 + PORTS_PER_WORKER * (int(worker) if worker.isdigit() else 0)
    if low + PORTS_PER_WORKER > _ephemeral_start():
        raise RuntimeError(f"no block of ports below {_ephemeral_start()} for xdist worker gw{worker}")
    start = random.randrange(PORTS_PER_WORKER)
    for step in range(PORTS_PER_WORKER):
        first = low + (start + step * count) % (PORTS_PER_WORKER - count)
        block = range(first, first + count)
        if not _GIVEN.intersection(block) and all(map(_unused, block)):
            _GIVEN.update(block)
            return first
    raise RuntimeError(f"no {count} free consecutive ports in {low}-{low + PORTS_PER_WORKER - 1}")


@dataclass
class AppServer:
    """One `streamlit run app.py` process on 127.0.0.1 with its own workspace."""

    home: Path
    port: int = field(default_factory=free_port)
    env: dict[str, str] = field(default_factory=dict)
    app: str = "app.py"
    process: subprocess.Popen | None = None
    log_path: Path | None = None

    @property
    def url(self) -> str:
        """Base URL without a trailing slash: f"{server.url}/some_page" works."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> AppServer:
        if self.process is not None and self.process.poll() is None:
            return self
        self.home.mkdir(parents=True, exist_ok=True)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.log_path = ARTIFACTS / f"server-{self.port}.log"
        env = {
            **os.environ,
            "NDCG_LAB_HOME": str(self.home),
            "PYTHONUNBUFFERED": "1",
            "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
            **self.env,
        }
        command = [
            sys.executable, "-m", "streamlit", "run", self.app,
            "--server.port", str(self.port),
            "--server.address", "127.0.0.1",
            "--server.headless", "true",
            "--browser.gatherUsageStats", "false",
            "--server.fileWatcherType", "none",
            "--server.runOnSave", "false",
        ]
        with open(self.log_path, "ab") as log:
            log.write(f"\n$ NDCG_LAB_HOME={self.home} {' '.join(command)}\n".encode())
            log.flush()
            # Own process group, so that stop() also ends anything the app spawned (Dask workers);
            # and the server dies with pytest even when pytest is killed before its teardown.
            self.process = subprocess.Popen(
                command, cwd=REPO_ROOT, env=env, stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        self._wait_healthy()
        return self

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        health = f"{self.url}/_stcore/health"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"streamlit exited with code {self.process.returncode} before answering "
                    f"{health}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(health, timeout=2) as response:
                    if response.read().decode().strip() == "ok":
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(
            f"streamlit did not answer {health} with 'ok' within {SERVER_START_TIMEOUT:.0f} s:\n"
            f"{self.log_tail()}")

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=15)

    def restart(self) -> AppServer:
        """Stop and start again on the same workspace and port."""
        self.stop()
        return self.start()

    def log_tail(self, lines: int = 60) -> str:
        if self.log_path is None or not self.log_path.exists():
            return "(no server log)"
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


class ServerURL(str):
    """The base URL (a plain str for page.goto) that also carries its server: `.server`, `.home`."""

    server: AppServer

    def __new__(cls, server: AppServer) -> ServerURL:
        url = super().__new__(cls, server.url)
        url.server = server
        return url

    @property
    def home(self) -> Path:
        return self.server.home


# --------------------------------------------------------------------------- waits and tables

# True when the app is connected, its script finished and no skeleton or spinner is left.
APP_IDLE_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app) return false;
    if (app.getAttribute('data-test-connection-state') !== 'CONNECTED') return false;
    if (app.getAttribute('data-test-script-state') !== 'notRunning') return false;
    if (document.querySelector('[data-testid="stStatusWidgetRunningIcon"]')) return false;
    if (document.querySelector('[data-testid="stAppSkeleton"]')) return false;
    if (document.querySelector('[data-testid="stSkeleton"]')) return false;  // an element whose code still loads
    if (document.querySelector('[data-testid="stSpinner"]')) return false;
    return true;
}"""


# performance.now() (ms since the page's navigation started) once the app's script run has finished
# and a result table holds the text given as the argument; else false. Polled at every animation
# frame (``page.wait_for_function(TABLE_SHOWN_JS, arg=text, polling="raf")``), it times a screen to
# the frame, where Playwright's expect() retries after 100, 250, 500 and 1000 ms.
LEADERBOARD = '[data-testid="stHtml"] table.ndcg-table'
"""The Leaderboard's (and the Fusion page's) table: ndcg_lab.ui.tables.leaderboard_html, drawn with st.html."""
# The page's first table, the leaderboard or an st.table (bench/bench_load.py's minimal app).
TABLE_SHOWN_JS = """(text) => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
    const table = document.querySelector(
        '[data-testid="stMain"] [data-testid="stTable"], [data-testid="stMain"] LEADERBOARD');
    return table && table.innerText.includes(text) ? performance.now() : false;
}""".replace("LEADERBOARD", LEADERBOARD)


def wait_for_app(page, timeout: float = TIMEOUT, *, settle_polls: int = 3) -> None:
    """Wait until Streamlit has finished running the script (after a load or an interaction).

    The idle state must hold for `settle_polls` consecutive 100 ms polls, because right after a
    click the page still says "notRunning" until the rerun request reaches the server.
    """
    deadline = time.monotonic() + timeout / 1000
    while True:
        try:
            _wait_until_idle(page, timeout, deadline, settle_polls)
            return
        except PlaywrightError as exc:   # the page navigated meanwhile (a reload the app asked for): again
            if "Execution context was destroyed" not in str(exc) or time.monotonic() > deadline:
                raise
            page.wait_for_load_state("domcontentloaded", timeout=max(1.0, (deadline - time.monotonic()) * 1000))


def _wait_until_idle(page, timeout: float, deadline: float, settle_polls: int) -> None:
    page.wait_for_selector('[data-testid="stApp"]', state="attached", timeout=timeout)
    stable = 0
    while stable < settle_polls:
        remaining_ms = (deadline - time.monotonic()) * 1000
        if remaining_ms <= 0:
            state = page.evaluate("""() => {
                const app = document.querySelector('[data-testid="stApp"]');
                return app ? [app.getAttribute('data-test-connection-state'),
                              app.getAttribute('data-test-script-state')] : null; }""")
            raise TimeoutError(f"app did not become idle within {timeout / 1000:.0f} s "
                               f"(connection, script state = {state})")
        if page.evaluate(APP_IDLE_JS):
            stable += 1
        else:
            stable = 0
            page.wait_for_function(APP_IDLE_JS, timeout=remaining_ms, polling=100)
            stable = 1
        page.wait_for_timeout(100)


def open_app(page, url: str, timeout: float = TIMEOUT) -> None:
    """Load `url` and wait until the first script run has finished."""
    page.goto(url, wait_until="domcontentloaded", timeout=timeout)
    wait_for_app(page, timeout)


def read_table(table, *, markers: bool = True) -> dict[str, dict[str, str]]:
    """{row header: {column header: cell text}} of an st.table or the leaderboard's table; with
    ``markers=False`` the markers (▲/▼) stripped."""
    return table.evaluate("""(table, markers) => {
        const heads = [...table.querySelectorAll('thead th.col_heading')].map(th => th.innerText.trim());
        const rows = {};
        for (const tr of table.querySelectorAll('tbody tr')) {
            const name = tr.querySelector('th').innerText.trim();
            const cells = [...tr.querySelectorAll('td')].map(
                td => (markers ? td.innerText : td.innerText.replace(/[▲▼]/g, '')).trim());
            rows[name] = Object.fromEntries(heads.map((h, i) => [h, cells[i]]));
        }
        return rows;
    }""", markers)


def read_leaderboard(page, where: str = LEADERBOARD) -> dict[str, dict[str, str]]:
    """:func:`read_table` of the first table of the main area that ``where`` selects, once it shows
    (the leaderboard, or an st.table: ``'[data-testid="stTable"] table'``), markers stripped."""
    table = main(page).locator(where).first
    expect(table).to_be_visible(timeout=TIMEOUT)
    return read_table(table, markers=False)


def screenshot_dir() -> Path:
    """Where a test saves the README's screenshots: docs/screenshots with NDCG_LAB_SCREENSHOTS=1,
    else test-artifacts/readme (so that a test run leaves the checkout as it was)."""
    out = REPO_ROOT / "docs" / "screenshots" if os.environ.get("NDCG_LAB_SCREENSHOTS") else \
        REPO_ROOT / "test-artifacts" / "readme"
    out.mkdir(parents=True, exist_ok=True)
    return out




def no_exception(page) -> None:
    """The page shows no Streamlit exception box."""
    exceptions = page.locator('[data-testid="stException"]')
    assert exceptions.count() == 0, exceptions.first.inner_text()


# --------------------------------------------------------------------------- page helpers

def main(page):
    """The page's main area (not the sidebar)."""
    return page.locator('[data-testid="stMain"]')


def sidebar(page):
    return page.locator('[data-testid="stSidebar"]')


def go_to(page, wait_for_app, title: str) -> None:
    """Switch page through the sidebar menu (same session: a fresh URL load would start a new one)."""
    sidebar(page).locator('[data-testid="stSidebarNavLink"]').filter(has_text=title).first.click()
    wait_for_app(page)
    expect(main(page).locator("h2").first).to_contain_text(
        {"Leaderboard": "Leaderboard", "Curves": "Curves", "Data": "Data"}[title], timeout=TIMEOUT)


# An expander is open for the pointer once its content is shown at its full height: Streamlit
# animates the opening (500 ms, the content clipped meanwhile) and drops ``inert`` from the content.
_EXPANDER_OPEN_JS = """el => { const d = el.querySelector('details');
    const content = el.querySelector('[data-testid="stExpanderDetails"]');
    return d && d.open && content && !content.hasAttribute('inert')
        && d.getAnimations({subtree: true}).length === 0; }"""


def open_expander(page, expander) -> None:
    """Open ``expander`` (a stExpander locator) unless it is open, and wait until its opening has
    ended. A click into content still opening was lost now and then under load (the browser sent
    nothing; stop 52), where a visitor cannot even see the content yet."""
    if not expander.locator("details").evaluate("d => d.open"):
        expander.locator("summary").click()
    deadline = time.monotonic() + TIMEOUT / 1000
    while not expander.evaluate(_EXPANDER_OPEN_JS):     # the locator found anew each time: a rerun may redraw it
        if time.monotonic() > deadline:
            raise TimeoutError(f"the expander did not open within {TIMEOUT / 1000:.0f} s")
        page.wait_for_timeout(50)


def upload(page, wait_for_app, label: str, paths) -> None:
    """Drop files (paths, or Playwright payloads: name, mimeType, buffer) on the uploader labelled
    ``label``; wait until all are uploaded and the rerun ends.
    (Counted, not found by name: the chip shortens long names such as the hostile ones.)"""
    box = page.locator('[data-testid="stFileUploader"]').filter(has_text=label)
    chips = box.locator('[data-testid="stFileChipName"]')
    before = chips.count()
    box.locator('input[type="file"]').set_input_files([p if isinstance(p, dict) else str(p) for p in paths])
    expect(chips).to_have_count(before + len(paths), timeout=TIMEOUT)
    expect(box.locator('[data-testid="stFileChipIconSpinner"]')).to_have_count(0, timeout=TIMEOUT)
    wait_for_app(page)


def choose_run(page, path: Path, method: str | None = None) -> None:
    """Choose a run file (and type a method line) in a class-task team page's form, without
    sending it; wait until the upload has finished."""
    form = main(page).locator('[data-testid="stForm"]')
    form.locator('input[type="file"]').set_input_files(str(path))
    expect(form.locator('[data-testid="stFileChipName"]')).to_have_count(1, timeout=TIMEOUT)
    expect(form.locator('[data-testid="stFileChipIconSpinner"]')).to_have_count(0, timeout=TIMEOUT)
    if method is not None:
        form.get_by_label(re.compile("^Method")).fill(method)


def submit(page, path: Path, method: str | None = None) -> None:
    """Choose a run (:func:`choose_run`) in a team page's form and press Submit."""
    choose_run(page, path, method)
    main(page).locator('[data-testid="stForm"]').get_by_role("button", name="Submit").click()
    wait_for_app(page)


def workspace_links(page) -> tuple[str, str]:
    """(edit link, read-only link) of a shared-mode visitor's workspace, read from the sidebar's
    "Your workspace link" box (opened here; its links are drawn by the rerun the opening starts)."""
    box = sidebar(page).locator('[data-testid="stExpander"]').filter(has_text="Your workspace link")
    box.locator("summary").click()
    expect(box.locator("pre")).to_have_count(2, timeout=TIMEOUT)
    edit_link, view_link = (code.strip() for code in box.locator("pre").all_inner_texts())
    return edit_link, view_link


def runs_table(page):
    """The Data page's table of the collection's runs."""
    return main(page).locator('[data-testid="stTable"]').first


def text_of(locator) -> str:
    """The text a reader sees (the word joiner that stops an autolink is invisible)."""
    return locator.inner_text().replace("\u2060", "")


def arrive(page, url: str) -> str:
    """Open ``url`` as a new shared-mode visitor, make their workspace by a first change (a reload
    of the legal sample, which leaves it as it is), go back to the first page; the token in the URL."""
    open_app(page, url)
    assert not TOKEN_IN_URL.search(page.url)            # a visitor who only reads has no workspace
    go_to(page, wait_for_app, "Data")
    main(page).get_by_role("button", name="Reload the legal sample").click()
    page.wait_for_url(TOKEN_IN_URL, timeout=TIMEOUT)
    wait_for_app(page)
    go_to(page, wait_for_app, "Leaderboard")
    return TOKEN_IN_URL.search(page.url).group(1)


def arrive_with_run(page, url: str, tmp: Path, name: str, sample: str = "bm25.run") -> str:
    """A new shared-mode visitor (:func:`arrive`) who uploads a variant of the legal sample's run
    ``sample`` (:func:`variant_run`) as ``name`` on the Data page, and stays there; the token."""
    token = arrive(page, url)
    go_to(page, wait_for_app, "Data")
    upload(page, wait_for_app, RUNS_LABEL, [variant_run(LEGAL / sample, tmp, name)])
    return token


def variant_run(path: Path, tmp: Path, name: str) -> Path:
    """The lines of a sample run with its scores nudged: new content (a new digest), same queries."""
    lines = [line.split() for line in path.read_text().splitlines() if line.strip()]
    text = "".join(f"{q} Q0 {d} {r} {float(s) + 1e-3:.6f} x\n" for q, _, d, r, s, *_ in lines)
    out = tmp / name
    out.write_text(text)
    return out


# --------------------------------------------------------------------------- async API (many visitors at once)

async def new_visitor(browser, timeout: float = TIMEOUT):
    """(context, page) of a new visitor in an async Playwright browser; close the context after."""
    context = await browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(timeout)
    return context, await context.new_page()


async def idle(page, timeout: float = TIMEOUT) -> None:
    """The app is connected and its script run has finished, for three polls in a row."""
    stable = 0
    while stable < 3:
        if await page.evaluate(APP_IDLE_JS):
            stable += 1
        else:
            stable = 0
            await page.wait_for_function(APP_IDLE_JS, timeout=timeout, polling=100)
        await page.wait_for_timeout(100)


async def errors_on(page) -> list[str]:
    """Exception boxes and traceback text on the page."""
    found = [await e.inner_text() for e in await page.locator('[data-testid="stException"]').all()]
    body = await page.locator('[data-testid="stMain"]').inner_text()
    if "Traceback" in body:
        found.append(body[body.index("Traceback"):][:300])
    return found


def run_async(coroutine):
    """``asyncio.run`` on a thread of its own: the sync Playwright of the other e2e tests keeps an
    event loop running on the test thread for the whole session, where asyncio.run refuses."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
