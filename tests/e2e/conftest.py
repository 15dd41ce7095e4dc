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
    visitor             function: visitor(*, timezone=None, downloads=True, viewport=VIEWPORT) ->
                        a new page in a context of its own (one person each); all closed after
                        the test, a failed test's pages screenshotted first. A module's
                        `pytest.mark.visitor(timezone=...)` sets its defaults
    page                function: visitor(), for a test of one visitor
    wait_for_app        function fixture: wait_for_app(page, timeout=TIMEOUT) waits until the app
                        is connected and its script run finished (after a load or any interaction)
    open_app            function fixture: open_app(page, url) = page.goto(url) + wait_for_app(page)
(The plain functions and constants are in tests/e2e/helpers.py, with the page helpers.)

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
import sys
from pathlib import Path

import pytest

from tests.e2e.helpers import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    TIMEOUT,
    VIEWPORT,
    AppServer,
    ServerURL,
    open_app,
    wait_for_app,
)


def _expect_waits_as_long_as_the_pages() -> None:
    """Every ``expect(...)`` of these tests retries for TIMEOUT, as the page's own timeout, not
    Playwright's 5 s: a check written without a timeout failed twice on a loaded machine while the
    page was still drawing."""
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT)


_expect_waits_as_long_as_the_pages()


def pytest_collection_modifyitems(config, items):
    """Every test under tests/e2e is an end-to-end test (`-m "not e2e"` skips them)."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.e2e)


# --------------------------------------------------------------------------- servers


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


def _screenshot_if_failed(request, pages) -> None:
    """A failed test's pages, saved to test-artifacts/e2e/<test name>[-<n>].png (only on failure:
    a full-page screenshot costs a second or more on a busy machine)."""
    if not any(report.failed for report in request.node.stash.get(_OUTCOMES, {}).values()):
        return
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name).strip("_")
    for n, page in enumerate(pages):
        path = ARTIFACTS / (f"{name}.png" if n == 0 else f"{name}-{n}.png")
        try:
            page.screenshot(path=str(path), full_page=True, timeout=10_000)
        except Exception as error:  # a screenshot must never hide the test's own outcome
            print(f"e2e: screenshot of {name} failed: {error}", file=sys.stderr)


@pytest.fixture
def visitor(browser, request):
    """visitor(*, timezone=None, downloads=True, viewport=VIEWPORT) -> a new page in a context of
    its own (one visitor each), in the time zone given (an IANA name; None: the machine's); all
    closed after the test. A module or test marked ``pytest.mark.visitor(timezone=..., ...)`` sets
    the defaults."""
    marker = request.node.get_closest_marker("visitor")
    defaults = {"timezone": None, "downloads": True, "viewport": VIEWPORT, **(marker.kwargs if marker else {})}
    contexts, pages = [], []

    def new(**options):
        unknown = set(options) - set(defaults)
        if unknown:
            raise TypeError(f"visitor() got unknown options {sorted(unknown)}")
        chosen = defaults | options
        extra = {"timezone_id": chosen["timezone"]} if chosen["timezone"] else {}
        context = browser.new_context(viewport=chosen["viewport"], accept_downloads=chosen["downloads"], **extra)
        context.set_default_timeout(TIMEOUT)
        contexts.append(context)
        pages.append(context.new_page())
        return pages[-1]

    yield new
    try:
        _screenshot_if_failed(request, pages)
    finally:
        for context in contexts:
            context.close()


@pytest.fixture
def page(visitor):
    """One visitor's page (the visitor fixture's defaults)."""
    return visitor()


# --------------------------------------------------------------------------- helpers as fixtures

@pytest.fixture(name="wait_for_app")
def wait_for_app_fixture():
    """The wait_for_app helper, as a fixture (no import of conftest needed)."""
    return wait_for_app


@pytest.fixture(name="open_app")
def open_app_fixture():
    """The open_app helper, as a fixture."""
    return open_app
