"""A real install: ``python -m build`` makes the sdist and, from it, the wheel; the wheel goes into a
fresh virtual environment (its dependencies are the machine's: ``--system-site-packages``, and
``--no-deps --no-index``, so no network), and the installed ``ndcg-lab`` works from a folder that
is not the checkout: site-packages gains exactly the project's two import packages (``metrics`` and
``ndcg_lab``), their dist-info and the console script; ``eval`` and ``trec_eval`` print what the
checkout prints; and ``ndcg-lab app`` serves every page of the package's app.py without an
exception in Chromium.

An editable install (what ``make test`` runs on) finds every module in the checkout, so only a
built wheel shows a package the build left out, or a generic name it put at the top.
"""
from __future__ import annotations

import ast
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import urllib.request
import zipfile
from pathlib import Path

import pytest

from tests.e2e.helpers import SERVER_START_TIMEOUT, TIMEOUT, free_port

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("metrics", "ndcg_lab")
LEGAL = REPO_ROOT / "ndcg_lab" / "sample_data" / "legal"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the venv's bin folder, the built wheel, an unrelated working folder)."""
    root = tmp_path_factory.mktemp("install")
    dist, source = root / "dist", root / "source"
    # A clean copy: setuptools' sdist adds the files an earlier build's egg-info lists, which
    # would hide a package missing from pyproject.toml.
    shutil.copytree(REPO_ROOT, source, ignore=shutil.ignore_patterns(
        ".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".ruff_cache", "test-artifacts",
        "bench", "tests", ".hypothesis", ".ndcg_lab"))
    subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)],
                   check=True, capture_output=True)
    [wheel] = dist.glob("*.whl")
    assert len(list(dist.glob("*.tar.gz"))) == 1
    venv = root / "venv"
    # No pip of its own (ensurepip is the slow part of making a venv): the machine's pip, seen
    # through --system-site-packages, installs into the venv it runs in.
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    bin_dir = venv / "bin"
    subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "--no-deps", "--no-index", "--force-reinstall",
                    "--quiet", str(wheel)], check=True, capture_output=True)
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    return bin_dir, wheel, elsewhere


def _env(elsewhere: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return env | {"NDCG_LAB_HOME": str(elsewhere / "home"), "PYTHONUNBUFFERED": "1"}


def _source_modules() -> set[str]:
    """Every module of the two packages in the checkout (the sample scripts are not shipped)."""
    return {p.relative_to(REPO_ROOT).as_posix() for package in PACKAGES for p in (REPO_ROOT / package).rglob("*.py")
            if "sample_data" not in p.parts and "__pycache__" not in p.parts}


def test_the_wheel_holds_every_module_of_the_tree(installed):
    _, wheel, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    tree = _source_modules()
    assert tree and tree <= names, sorted(tree - names)
    assert {"metrics/store/workspace.py", "metrics/analysis/judgments/__init__.py",
            "metrics/analysis/sandbox/__init__.py", "ndcg_lab/app.py", "ndcg_lab/ui/state.py",
            "ndcg_lab/views/leaderboard.py", "ndcg_lab/.streamlit/config.toml",
            "ndcg_lab/sample_data/legal/qrels.txt", "ndcg_lab/sample_data/web/qrels.txt",
            "ndcg_lab/static/icon.png"} <= names
    assert not {n for n in names if n.startswith("ndcg_lab/sample_data/") and n.endswith(".py")}


def test_site_packages_gains_exactly_the_projects_packages(installed):
    """What the install put into the venv's own site-packages (the machine's packages are seen
    through --system-site-packages and live elsewhere): the two import packages, the dist-info
    and nothing else; the bin folder gains the ndcg-lab command."""
    bin_dir, wheel, _ = installed
    purelib = "import sysconfig; print(sysconfig.get_path('purelib'))"
    site = Path(subprocess.run([str(bin_dir / "python"), "-c", purelib], capture_output=True, text=True,
                               check=True).stdout.strip())
    assert site.is_relative_to(bin_dir.parent) and site != Path(sysconfig.get_path("purelib"))
    dist_info = wheel.name.split("-py3")[0] + ".dist-info"
    assert sorted(p.name for p in site.iterdir()) == sorted(["metrics", "ndcg_lab", dist_info])
    assert {p.relative_to(site).as_posix() for p in site.rglob("*.py")} == _source_modules()
    made_by_venv = ("python", "activate", "Activate")
    assert [p.name for p in bin_dir.iterdir() if not p.name.startswith(made_by_venv)] == ["ndcg-lab"]


def test_the_installed_command_evaluates_from_another_folder(installed):
    bin_dir, _, elsewhere = installed
    env = _env(elsewhere)
    where = subprocess.run([str(bin_dir / "python"), "-c",
                            "import metrics, ndcg_lab; print(metrics.__file__, ndcg_lab.__file__)"],
                           cwd=elsewhere, env=env, capture_output=True, text=True, check=True).stdout
    assert all(Path(p).is_relative_to(bin_dir.parent) for p in where.split()), where
    for args in (["eval", str(LEGAL / "qrels.txt"), str(LEGAL / "bm25.run"), "-m", "nDCG@10", "-m", "AP"],
                 ["trec_eval", "-q", "-m", "ndcg_cut.10", str(LEGAL / "qrels.txt"), str(LEGAL / "bm25.run")]):
        ours = subprocess.run([str(bin_dir / "ndcg-lab"), *args], cwd=elsewhere, env=env, capture_output=True)
        checkout = subprocess.run([sys.executable, "-m", "metrics", *args], cwd=REPO_ROOT, capture_output=True)
        assert ours.returncode == 0, ours.stderr.decode()
        assert ours.stdout == checkout.stdout and ours.stdout.count(b"\n") > 1


def test_streamlit_reads_the_settings_beside_the_installed_app(installed):
    """The settings come from the package (ndcg_lab/.streamlit beside app.py), not from the working
    folder: Streamlit, asked from an unrelated folder, reads the installed file's values."""
    bin_dir, _, elsewhere = installed
    script = ("import ndcg_lab.ui.paths as p; from streamlit import config; config._main_script_path = str(p.APP); "
              "config.get_config_options(force_reparse=True); "
              "print(p.APP, config.get_option('runner.postScriptGC'), config.get_option('server.maxUploadSize'))")
    out = subprocess.run([str(bin_dir / "python"), "-c", script], cwd=elsewhere, env=_env(elsewhere),
                         capture_output=True, text=True, check=True).stdout.split()
    assert Path(out[0]).is_relative_to(bin_dir.parent) and out[1:] == ["False", "2000"]


def _pages(app_py: Path) -> list[str]:
    """The URL path of every page in app.py's PAGES (the first is the landing page, "")."""
    tree = ast.parse(app_py.read_text())
    [pages] = [node.value for node in tree.body if isinstance(node, ast.Assign)
               and getattr(node.targets[0], "id", None) == "PAGES"]
    files = [entry[0] for entry in ast.literal_eval(pages)]
    return [""] + [Path(f).stem for f in files[1:]]


@pytest.mark.parametrize("mode", ["personal", "shared"])
def test_ndcg_lab_app_serves_every_page_without_an_exception(installed, page, open_app, mode):
    """Each page as the first request of a visitor (a deep link), in both modes."""
    bin_dir, _, elsewhere = installed
    [app_py] = (bin_dir.parent / "lib").glob("python*/site-packages/ndcg_lab/app.py")
    pages = _pages(app_py)
    assert pages == _pages(REPO_ROOT / "ndcg_lab" / "app.py") and len(pages) >= 6
    port = free_port()
    log = elsewhere / "server.log"
    with open(log, "wb") as out:
        server = subprocess.Popen([str(bin_dir / "ndcg-lab"), "app", "--mode", mode, "--server.port", str(port),
                                   "--server.address", "127.0.0.1", "--server.headless", "true",
                                   "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                                  cwd=elsewhere, env=_env(elsewhere), stdout=out, stderr=subprocess.STDOUT,
                                  start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(server, url, log)
        for n, path in enumerate(pages[1:] + pages[:1]):        # a deep link is the server's first request
            open_app(page, f"{url}/{path}", timeout=TIMEOUT * (4 if n == 0 else 1))   # the first loads the samples
            errors = page.locator('[data-testid="stException"], [data-testid="stAlertContentError"]')
            assert errors.count() == 0, f"/{path}: {errors.first.inner_text()}"
            assert page.locator('[data-testid="stMain"] :is(h1, h2, h3)').count() > 0, f"/{path} shows no heading"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def _wait_healthy(server: subprocess.Popen, url: str, log: Path) -> None:
    import time

    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        assert server.poll() is None, f"ndcg-lab app exited:\n{log.read_text(errors='replace')[-3000:]}"
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().decode().strip() == "ok":
                    return
        except OSError:
            pass
        time.sleep(0.2)
    pytest.fail(f"ndcg-lab app did not answer within {SERVER_START_TIMEOUT:.0f} s")
