"""Playwright harness: a real `streamlit run app.py` server driven by Debian's headless Chromium.

Fixtures
    app_server          session: base URL (str) of the app on a fresh workspace (NDCG_LAB_HOME in
                        a tmp dir); app_server.home is that dir, app_server.server the AppServer.
                        Shared by every module, so only for tests that leave the workspace as
                        they found it: they may change session state and the address (measures
                        added, systems picked, lesson answers) but upload, store, reload a sample
                        or set a baseline nowhere. Its toolbar is the viewer's (no "Deploy"
                        button), as the README's screenshots need.
    module_app_server   module: like app_server, but one server (and one fresh workspace) per test
                        module, for modules that add or change data
    shared_app_server   session: like app_server, in shared mode (NDCG_LAB_MODE=shared): every
                        new visitor gets a private workspace of its own, so tests that change
                        data share it as long as each works in the workspaces it made
    app_server_factory  function: start(home=None, *, env=None, app="app.py") -> AppServer
                        (.url, .home, .port, .stop(), .restart()); all stopped after the test
    browser             session: playwright Browser (Chromium at /usr/bin/chromium)
    page                function: a new context and page (default timeout 30 s); when the test
                        failed, a screenshot goes to test-artifacts/e2e/<test name>.png
    visitor             function: visitor(*, timezone=None, downloads=True) -> a new page in a
                        context of its own (one person each, 1400x1000); all closed after the
                        test. A module's `pytest.mark.visitor(timezone=...)` sets its default
    wait_for_app        function fixture: wait_for_app(page, timeout=30_000) waits until the app
                        is connected and its script run finished (after a load or any interaction)
    open_app            function fixture: open_app(page, url) = page.goto(url) + wait_for_app(page)
(The same two are plain functions of this module.)

Persistence across a restart:

    def test_keeps_uploads(app_server_factory, page, open_app):
        server = app_server_factory()
        open_app(page, server.url)
        ...                                    # upload through the page
        server.restart()                       # same workspace (server.home), same port
        open_app(page, server.url)

Chromium comes from Debian (`apt-get install chromium`, see scripts/setup.sh); set
NDCG_LAB_CHROMIUM to use another binary. Playwright never downloads a browser here.
"""

from __future__ import annotations

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

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
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
DEFAULT_TIMEOUT_MS = 30_000


def _expect_waits_as_long_as_the_pages() -> None:
    """Every ``expect(...)`` of these tests retries for DEFAULT_TIMEOUT_MS, as the page's own
    timeout, not Playwright's 5 s: a check written without a timeout failed twice on a loaded
    machine while the page was still drawing."""
    from playwright.sync_api import expect

    expect.set_options(timeout=DEFAULT_TIMEOUT_MS)


_expect_waits_as_long_as_the_pages()


def pytest_collection_modifyitems(config, items):
    """Every test under tests/e2e is an end-to-end test (`-m "not e2e"` skips them)."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.e2e)


# --------------------------------------------------------------------------- server


def _die_with_parent() -> None:
    """In the child before exec: ask Linux to send SIGTERM when pytest goes away."""
    try:
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except Exception:  # not Linux: the fixture teardown still stops the server
        pass


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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


@pytest.fixture(scope="session")
def app_server(tmp_path_factory):
    """Base URL (str, e.g. "http://127.0.0.1:PORT") of the app on a fresh, empty workspace,
    shared by the whole session; `.home` is its NDCG_LAB_HOME and `.server` its AppServer.
    For tests that change no data (see the module's docstring); the viewer's toolbar."""
    server = AppServer(home=tmp_path_factory.mktemp("ndcg-lab-home"),
                       env={"STREAMLIT_CLIENT_TOOLBAR_MODE": "viewer"}).start()
    yield ServerURL(server)
    server.stop()


@pytest.fixture(scope="session")
def shared_app_server(tmp_path_factory):
    """Base URL (a ServerURL, like app_server) of one server in shared mode for the session: each
    visitor arriving without a token gets a workspace of its own."""
    server = AppServer(home=tmp_path_factory.mktemp("ndcg-lab-shared"), env={"NDCG_LAB_MODE": "shared"}).start()
    yield ServerURL(server)
    server.stop()


@pytest.fixture(scope="module")
def module_app_server(tmp_path_factory):
    """Base URL (a ServerURL, like app_server) of a server of this test module's own, on a fresh
    workspace: modules that upload or change data do not disturb the session's server."""
    server = AppServer(home=tmp_path_factory.mktemp("ndcg-lab-module")).start()
    yield ServerURL(server)
    server.stop()


@pytest.fixture
def app_server_factory(tmp_path):
    """start(home=None, *, env=None, app="app.py") -> AppServer: a server of this test's own,
    on workspace `home` (default: a fresh dir under tmp_path), with extra environment `env`.
    All are stopped when the test ends."""
    started: list[AppServer] = []

    def start(home: Path | str | None = None, *, env: dict[str, str] | None = None,
              app: str = "app.py") -> AppServer:
        workspace = Path(home) if home is not None else tmp_path / f"home{len(started)}"
        server = AppServer(home=workspace, env=dict(env or {}), app=app)
        started.append(server)
        return server.start()

    yield start
    for server in started:
        server.stop()


# --------------------------------------------------------------------------- browser


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} is missing: run `bash scripts/setup.sh test` "
                    f"(installs Debian's chromium) or set NDCG_LAB_CHROMIUM")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


_OUTCOMES = pytest.StashKey[dict]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the test item, so that a fixture's teardown knows the outcome."""
    report = yield
    item.stash.setdefault(_OUTCOMES, {})[report.when] = report
    return report


@pytest.fixture
def page(browser, request):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(DEFAULT_TIMEOUT_MS)
    page = context.new_page()
    yield page
    try:
        # A full-page screenshot costs a second or more on a busy machine: only a failure's is kept.
        if any(report.failed for report in request.node.stash.get(_OUTCOMES, {}).values()):
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name).strip("_")
            try:
                page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True, timeout=10_000)
            except Exception as error:  # a screenshot must never hide the test's own outcome
                print(f"e2e: screenshot of {name} failed: {error}", file=sys.stderr)
    finally:
        context.close()


@pytest.fixture
def visitor(browser, request):
    """visitor(*, timezone=None, downloads=True) -> a new page in a context of its own (one visitor
    each), in the time zone given (an IANA name; None: the machine's); all closed after the test.
    A module or test marked ``pytest.mark.visitor(timezone=..., downloads=...)`` sets the defaults."""
    marker = request.node.get_closest_marker("visitor")
    defaults = {"timezone": None, "downloads": True, **(marker.kwargs if marker else {})}
    contexts = []

    def new(**options):
        unknown = set(options) - set(defaults)
        if unknown:
            raise TypeError(f"visitor() got unknown options {sorted(unknown)}")
        chosen = defaults | options
        extra = {"timezone_id": chosen["timezone"]} if chosen["timezone"] else {}
        context = browser.new_context(viewport={"width": 1400, "height": 1000},
                                      accept_downloads=chosen["downloads"], **extra)
        context.set_default_timeout(DEFAULT_TIMEOUT_MS)
        contexts.append(context)
        return context.new_page()

    yield new
    for context in contexts:
        context.close()


# --------------------------------------------------------------------------- helpers

# True when the app is connected, its script finished and no skeleton or spinner is left.
_APP_IDLE_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app) return false;
    if (app.getAttribute('data-test-connection-state') !== 'CONNECTED') return false;
    if (app.getAttribute('data-test-script-state') !== 'notRunning') return false;
    if (document.querySelector('[data-testid="stStatusWidgetRunningIcon"]')) return false;
    if (document.querySelector('[data-testid="stAppSkeleton"]')) return false;
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


def wait_for_app(page, timeout: float = DEFAULT_TIMEOUT_MS, *, settle_polls: int = 3) -> None:
    """Wait until Streamlit has finished running the script (after a load or an interaction).

    The idle state must hold for `settle_polls` consecutive 100 ms polls, because right after a
    click the page still says "notRunning" until the rerun request reaches the server.
    """
    deadline = time.monotonic() + timeout / 1000
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
        if page.evaluate(_APP_IDLE_JS):
            stable += 1
        else:
            stable = 0
            page.wait_for_function(_APP_IDLE_JS, timeout=remaining_ms, polling=100)
            stable = 1
        page.wait_for_timeout(100)


def open_app(page, url: str, timeout: float = DEFAULT_TIMEOUT_MS) -> None:
    """Load `url` and wait until the first script run has finished."""
    page.goto(url, wait_until="domcontentloaded", timeout=timeout)
    wait_for_app(page, timeout)


def read_table(table) -> dict[str, dict[str, str]]:
    """{row header: {column header: cell text}} of an st.table."""
    return table.evaluate("""(table) => {
        const heads = [...table.querySelectorAll('thead th.col_heading')].map(th => th.innerText.trim());
        const rows = {};
        for (const tr of table.querySelectorAll('tbody tr')) {
            const name = tr.querySelector('th').innerText.trim();
            const cells = [...tr.querySelectorAll('td')].map(td => td.innerText.trim());
            rows[name] = Object.fromEntries(heads.map((h, i) => [h, cells[i]]));
        }
        return rows;
    }""")


def screenshot_dir() -> Path:
    """Where a test saves the README's screenshots: docs/screenshots with NDCG_LAB_SCREENSHOTS=1,
    else test-artifacts/readme (so that a test run leaves the checkout as it was)."""
    out = REPO_ROOT / "docs" / "screenshots" if os.environ.get("NDCG_LAB_SCREENSHOTS") else \
        REPO_ROOT / "test-artifacts" / "readme"
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.fixture(name="wait_for_app")
def wait_for_app_fixture():
    """The wait_for_app helper, as a fixture (no import of conftest needed)."""
    return wait_for_app


@pytest.fixture(name="open_app")
def open_app_fixture():
    """The open_app helper, as a fixture."""
    return open_app
