"""Shared test helpers: paths to the test data, the one AppTest harness of the page and ui tests
(``open_app``), and trec_eval 10 built as an oracle (``trec_eval_wide``, ``trec_eval_4``)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DATA = ROOT / "tests" / "data"
# trec_eval 10's own test files (4 decimals) and the rest of its quicktest; NIST's notice is in
# each folder's LICENSE.md. The 10-decimal references of trec_eval 10 on generated cases.
TREC_EVAL_DATA = DATA / "trec_eval"
TREC_EVAL_QUICKTEST_DATA = DATA / "trec_eval_quicktest"
TREC_EVAL10_DATA = DATA / "trec_eval10"
APP = ROOT / "ndcg_lab" / "app.py"


E2E_SECONDS = {
    "test_accessibility.py": 382, "test_replicas.py": 110, "test_load.py": 108, "test_install.py": 100,
    "test_lessons.py": 95, "test_tasks.py": 94, "test_exercises.py": 90, "test_sharing.py": 82,
    "test_classroom.py": 80, "test_sharing_limits.py": 79, "test_course.py": 64, "test_dashboard.py": 61,
    "test_task_edges.py": 61, "test_research.py": 37, "test_keyboard.py": 35, "test_upload_memory.py": 33,
    "test_pristine.py": 30, "test_measures_and_address.py": 28, "test_fusion_topics.py": 26, "test_sessions.py": 25,
    "test_compare_many.py": 12,
}
"""Seconds of each file of tests/e2e (its tests' setup, call and teardown), measured with both workers
in browsers (``pytest tests/e2e -n 2 --junitxml``): what balances the two browser units. A file not
named counts :data:`E2E_UNKNOWN_SECONDS`."""
E2E_UNKNOWN_SECONDS = 12


def e2e_groups(files) -> dict[str, str]:
    """{file name: "e2e-1" | "e2e-2"}: the longest file first, each to the unit with fewer seconds."""
    load, groups = {"e2e-1": 0, "e2e-2": 0}, {}
    seconds = {name: E2E_SECONDS.get(name, E2E_UNKNOWN_SECONDS) for name in files}
    for name in sorted(files, key=lambda name: (-seconds[name], name)):
        groups[name] = min(load, key=load.__getitem__)
        load[groups[name]] += seconds[name]
    return groups


@pytest.hookimpl(tryfirst=True)    # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config, items):
    """The units of work of pytest-xdist (`make test`: ``--dist loadgroup --no-loadscope-reorder``):
    a test file, so that a module's fixtures are made once; and tests/e2e in two units of whole
    files balanced by :data:`E2E_SECONDS`, so that each worker runs browser tests one at a time
    (each worker has its own servers, browser and ports: tests/e2e/helpers.py's free_port). The
    browser units, the longest, go first: one to each worker."""
    e2e = ROOT / "tests" / "e2e"
    paths = {item: Path(item.path).resolve() for item in items}
    browser = {item: path.relative_to(e2e).as_posix() for item, path in paths.items() if e2e in path.parents}
    groups = e2e_groups(set(browser.values()))
    for item, path in paths.items():
        item.add_marker(pytest.mark.xdist_group(groups[browser[item]] if item in browser
                                                 else str(path.relative_to(ROOT))))
    items.sort(key=lambda item: item not in browser)   # stable: the order within each unit stays


_START = time.monotonic()
_WORKERS: dict[str, dict[str, float]] = {}


def pytest_runtest_logreport(report):
    """The timeline of the xdist workers, on the controller only (pytest-xdist sets ``report.node``
    there; in one process, ``-n 0``, nothing is kept or printed): each worker's summed setup, call
    and teardown seconds of tests/e2e and of the rest; its end comes from pytest_testnodedown."""
    node = getattr(report, "node", None)
    if node is not None:
        worker = _WORKERS.setdefault(node.gateway.id, {"e2e": 0.0, "rest": 0.0, "end": 0.0})
        worker["e2e" if report.nodeid.startswith("tests/e2e/") else "rest"] += report.duration
        worker["end"] = time.monotonic() - _START


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    if node.gateway.id in _WORKERS:
        _WORKERS[node.gateway.id]["end"] = time.monotonic() - _START


def pytest_terminal_summary(terminalreporter):
    for name, worker in sorted(_WORKERS.items()):
        terminalreporter.write_line(f"worker {name}: finished at {worker['end']:.0f} s; tests summed "
                                    f"{worker['e2e']:.0f} s e2e + {worker['rest']:.0f} s rest")


@pytest.fixture
def trec_eval_data() -> Path:
    """trec_eval 10's own test files (tests/data/trec_eval, README.md there)."""
    return TREC_EVAL_DATA


@pytest.fixture(autouse=True, scope="session")
def private_workspace(tmp_path_factory):
    """No test touches the user's real workspace: NDCG_LAB_HOME points at a session temp dir
    unless a test sets its own."""
    import os

    previous = os.environ.get("NDCG_LAB_HOME")
    os.environ["NDCG_LAB_HOME"] = str(tmp_path_factory.mktemp("ndcg-lab-home"))
    yield
    if previous is None:
        os.environ.pop("NDCG_LAB_HOME", None)
    else:
        os.environ["NDCG_LAB_HOME"] = previous


@pytest.fixture(scope="session")
def legal_cli_comparison() -> dict:
    """`python -m metrics compare` of bm25_ce against bm25 on the legal sample, as JSON: the
    comparison row the Compare page must reproduce (same measure string, seed and test)."""
    import json
    import subprocess

    legal = ROOT / "ndcg_lab" / "sample_data" / "legal"
    out = subprocess.run(
        [sys.executable, "-m", "metrics", "compare", str(legal / "qrels.txt"), str(legal / "bm25.run"),
         str(legal / "bm25_ce.run"), "-m", "nDCG(dcg='exp-log2')@10", "--format", "json"],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout
    (row,) = json.loads(out)["comparisons"]
    return row


def systems_box(at):
    """The sidebar's Systems multiselect of an AppTest (its key changes when the app sets the selection)."""
    return next(box for box in at.sidebar.multiselect if box.label == "Systems")


def baseline_box(at):
    """The sidebar's Baseline select box of an AppTest (its key changes when the app sets the baseline)."""
    return next(box for box in at.sidebar.selectbox if box.label == "Baseline")


class _HtmlTables(HTMLParser):
    """The ``<table>``s of an HTML text (ndcg_lab.ui.tables.leaderboard_html): per table its corner, column
    headers, row headers and cells, each cell as {"text", "title", "class"}."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables, self.cell = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append({"corner": None, "columns": [], "index": [], "rows": []})
        elif tag in ("th", "td") and self.tables:
            attrs = dict(attrs)
            self.cell = {"tag": tag, "class": attrs.get("class") or "", "title": attrs.get("title"), "text": ""}

    def handle_data(self, data):
        if self.cell is not None:
            self.cell["text"] += data

    def handle_endtag(self, tag):
        if tag in ("th", "td") and self.cell is not None:
            table, cell, self.cell = self.tables[-1], self.cell, None
            if "index_name" in cell["class"]:
                table["corner"] = cell["text"] or None
            elif "col_heading" in cell["class"]:
                table["columns"].append(cell["text"])
            elif "row_heading" in cell["class"]:
                table["index"].append(cell["text"])
                table["rows"].append([])
            else:
                table["rows"][-1].append(cell)


def html_tables(at: AppTest, part: str = "text") -> list[pd.DataFrame]:
    """Every table drawn with ``st.html`` (the leaderboards), in order, as a frame of its cells'
    ``part``: "text" as the browser shows it (entities decoded), "title" (the tooltip) or "class";
    system names as the index, measures as the columns. A name the page did not escape would have
    become markup here, not text."""
    frames = []
    for element in at.html:
        parser = _HtmlTables()
        parser.feed(element.value)
        for table in parser.tables:
            frames.append(pd.DataFrame([[cell[part] for cell in row] for row in table["rows"]],
                                       columns=table["columns"], index=pd.Index(table["index"], name=table["corner"]),
                                       dtype=object))
    return frames


def assert_ok(at: AppTest) -> None:
    assert not at.exception, "\n".join(e.value for e in at.exception)


@pytest.fixture(scope="session")
def sample_home(tmp_path_factory) -> Path:
    """A personal home whose workspace holds the bundled samples, made once per test session."""
    from metrics import settings, store
    from ndcg_lab.ui import session

    home = tmp_path_factory.mktemp("sample-home")
    manager = store.WorkspaceRegistry(settings.load({"NDCG_LAB_HOME": str(home)}), samples=session.samples())
    try:
        manager.personal()
    finally:
        manager.close()
    return home


def seeded(home: Path, sample_home: Path) -> Path:
    """``home``, made a copy of ``sample_home`` if it does not exist yet: the app finds the samples
    stored, as at a second start, and does not load them again (1.2-1.5 s a test). A test of the
    first start passes a home of its own to ``open_app``."""
    import shutil

    if not home.exists():
        shutil.copytree(sample_home, home)
    return home


@pytest.fixture
def open_app(monkeypatch, tmp_path, sample_home):
    """open_app(page=None, *, home=None, query_params=None, run=True) -> AppTest of app.py.

    ``home`` is the NDCG_LAB_HOME (default: a folder of this test's own, so its workspace is
    private, which starts holding the samples: :func:`seeded`); the app runs from the repository
    root. With ``run=False`` the AppTest is returned before its first run; otherwise it has run (and
    switched to ``page``) without an exception.
    """
    def open_(page: str | None = None, *, home: Path | None = None, query_params: dict | None = None,
              run: bool = True) -> AppTest:
        monkeypatch.setenv("NDCG_LAB_HOME", str(home or seeded(tmp_path / "home", sample_home)))
        monkeypatch.chdir(ROOT)
        at = AppTest.from_file(str(APP), default_timeout=120)
        at.query_params.update(query_params or {})
        if not run:
            return at
        at.run()
        assert_ok(at)
        if page:
            at.switch_page(page).run()
            assert_ok(at)
        return at
    return open_


@pytest.fixture(scope="module")
def shared_home(tmp_path_factory, sample_home) -> Path:
    """One workspace for the tests of a module that only read it."""
    return seeded(tmp_path_factory.mktemp("ndcg-lab-shared") / "home", sample_home)


# ---------------------------------------------------------------- trec_eval 10, the binary
# Built from ../shared/tools (build-trec-eval) into a cache folder outside the repository
# ($XDG_CACHE_HOME or ~/.cache, under ndcg-lab/); a test that needs it skips where the script or a
# C compiler is absent.
BUILD_SCRIPT = ROOT.parent / "shared" / "tools" / "build-trec-eval"


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ndcg-lab"


def _build(wide: bool) -> Path:
    if not BUILD_SCRIPT.exists():
        pytest.skip("../shared/tools/build-trec-eval is absent")
    target = _cache_dir() / ("trec_eval_wide" if wide else "trec_eval")
    command = [str(BUILD_SCRIPT), *(["--wide"] if wide else []), str(target)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    except OSError as exc:
        pytest.skip(f"cannot run build-trec-eval: {exc}")
    if done.returncode != 0:
        pytest.skip(f"building trec_eval failed (no C compiler?): {done.stderr.strip()[:200]}")
    return Path(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def trec_eval_wide() -> Path:
    """trec_eval 10 printing values with 10 decimals."""
    return _build(wide=True)


@pytest.fixture(scope="session")
def trec_eval_4() -> Path:
    """trec_eval 10 as released (4 decimals)."""
    return _build(wide=False)
