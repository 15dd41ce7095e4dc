"""ndcg_lab.ui.console: ``ndcg-lab`` is the library's command line plus ``ndcg-lab app``."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from metrics.cli import main as cli_main
from ndcg_lab.ui import console
from ndcg_lab.ui.paths import APP

ROOT = Path(__file__).resolve().parents[2]
LEGAL = Path("ndcg_lab", "sample_data") / "legal"
EVAL = ["eval", str(LEGAL / "qrels.txt"), str(LEGAL / "bm25.run"), str(LEGAL / "dense.run"), "--per-query",
        "-m", "nDCG@10", "-m", "AP"]


def test_console_subcommands_are_the_cli(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert cli_main(EVAL) == 0
    expected = capsys.readouterr().out
    assert console.main(EVAL) == 0
    assert capsys.readouterr().out == expected
    assert expected.count("\n") > 100


def test_ndcg_lab_and_python_m_metrics_print_the_same_bytes():
    command = shutil.which("ndcg-lab")
    if command is None:
        pytest.skip("ndcg-lab is not installed (bash scripts/setup.sh test installs it: pip install -e .)")
    for args in (EVAL, ["lint", str(LEGAL / "qrels.txt"), str(LEGAL / "bm25.run")]):
        ours = subprocess.run([command, *args], cwd=ROOT, capture_output=True, check=True).stdout
        module = subprocess.run([sys.executable, "-m", "metrics", *args], cwd=ROOT, capture_output=True,
                                check=True).stdout
        assert ours == module and ours


class Replaced(Exception):
    """What the fake ``os.execve`` raises: the process would now be Streamlit."""


@pytest.fixture
def execs(monkeypatch):
    """The (command, working folder, env) of each ``os.execve`` that ``ndcg-lab app`` asks for, not run."""
    calls = []

    def execve(path, cmd, env):
        assert path == sys.executable == cmd[0]
        calls.append((cmd, Path.cwd(), env))
        raise Replaced

    monkeypatch.setattr(console.os, "execve", execve)
    return calls


def test_app_runs_streamlit_on_the_packages_entry_script_from_the_callers_folder(execs, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(Replaced):
        console.main(["app", "--server.port", "8600"])
    [(cmd, cwd, _)] = execs
    assert cmd[:5] == [sys.executable, "-m", "streamlit", "run", str(ROOT / "ndcg_lab" / "app.py")]
    assert cmd[4] == str(APP)
    assert cmd[-2:] == ["--server.port", "8600"]
    assert cwd == tmp_path


def test_the_apps_config_skips_the_full_garbage_collection_after_every_script_run():
    """Streamlit's default ``gc.collect(2)`` after each run holds the GIL while other sessions wait;
    the settings beside the entry script, which Streamlit reads wherever it is started, turn it off."""
    config = tomllib.loads((APP.parent / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["postScriptGC"] is False


def test_app_mode_shared_sets_the_mode_and_the_server_flags(execs, monkeypatch):
    monkeypatch.setenv("NDCG_LAB_UPLOAD_BYTES", "100MiB")
    with pytest.raises(Replaced):
        console.main(["app", "--mode", "shared", "--server.port", "8600"])
    [(cmd, _, env)] = execs
    assert env["NDCG_LAB_MODE"] == "shared"
    assert env["NUMPY_MADVISE_HUGEPAGE"] == env["MIMALLOC_ALLOW_THP"] == "0"   # no huge pages (ui.allocators)
    flags = dict(zip(cmd[5::2], cmd[6::2]))
    assert flags == {"--server.maxUploadSize": "100", "--client.toolbarMode": "viewer",
                     "--server.enableXsrfProtection": "true", "--server.enableCORS": "true",
                     "--server.port": "8600"}


def test_an_operators_numpy_huge_page_setting_reaches_the_server(execs, monkeypatch):
    monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "1")
    with pytest.raises(Replaced):
        console.main(["app"])
    [(_, _, env)] = execs
    assert env["NUMPY_MADVISE_HUGEPAGE"] == "1"


def test_app_refuses_a_bad_setting_in_one_line(execs, capsys):
    assert console.main(["app", "--mode=public"]) == 2
    assert execs == []
    err = capsys.readouterr().err
    assert err.startswith("ndcg-lab: NDCG_LAB_MODE: expected personal or shared, found 'public'")
    assert err.count("\n") == 1


def test_help_names_the_ndcg_lab_program(capsys):
    with pytest.raises(SystemExit):
        console.main(["--help"])
    assert capsys.readouterr().out.startswith("usage: ndcg-lab")


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_sigterm_to_ndcg_lab_app_stops_the_server_and_leaves_no_child(tmp_path):
    """A supervisor's SIGTERM to the command reaches Streamlit (the command becomes the server):
    the port is freed and no process of it is left."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = dict(os.environ, NDCG_LAB_HOME=str(tmp_path), PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "ndcg_lab.ui.console", "app", "--server.port", str(port),
                             "--server.headless", "true", "--browser.gatherUsageStats", "false"],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        while not _listening(port):
            assert proc.poll() is None, "ndcg-lab app exited before it listened"
            assert time.monotonic() < deadline, "the server did not listen"
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout
    assert children == ""
    deadline = time.monotonic() + 10
    while _listening(port) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _listening(port)


def test_app_replicas_starts_the_processes_behind_nginx_with_one_deployment(execs, monkeypatch, tmp_path):
    """``--replicas N`` (shared mode only): N streamlit commands on the ports after the public one,
    each on 127.0.0.1 with the app's flags; nothing replaces this process."""
    made = []

    def serve(self):
        made.append(self)
        return 0

    monkeypatch.setenv("NDCG_LAB_HOME", str(tmp_path))
    monkeypatch.setattr(console.deploy.Deployment, "serve", serve)
    args = ["app", "--replicas", "2", "--mode", "shared", "--server.port=9000", "--theme.base", "dark"]
    assert console.main(args) == 0
    assert execs == []
    (deployment,) = made
    assert (deployment.replicas, deployment.port, deployment.ports, deployment.address) == (2, 9000, [9001, 9002],
                                                                                           "127.0.0.1")
    command = deployment.command(9001)
    assert command[:5] == [sys.executable, "-m", "streamlit", "run", str(APP)]
    assert command[-4:] == ["--server.address", "127.0.0.1", "--server.port", "9001"]
    assert "--theme.base" in command and "--server.enableXsrfProtection" in command


def test_app_replicas_refuses_personal_mode_and_a_bad_count(execs, capsys):
    assert console.main(["app", "--replicas", "2", "--mode", "personal"]) == 2
    assert "--replicas serves a class: it needs shared mode" in capsys.readouterr().err
    assert console.main(["app", "--replicas", "two", "--mode", "shared"]) == 2
    assert "--replicas takes a number of processes, not 'two'" in capsys.readouterr().err
    assert execs == []
