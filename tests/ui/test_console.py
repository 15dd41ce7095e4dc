"""ui.console: ``ndcg-lab`` is the library's command line plus ``ndcg-lab app``."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from metrics.cli import main as cli_main
from ui import console
from ui.paths import app_dir

ROOT = Path(__file__).resolve().parents[2]
LEGAL = Path("sample_data") / "legal"
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


def test_app_runs_streamlit_on_the_checkouts_app_in_its_folder(monkeypatch):
    calls = []
    monkeypatch.setattr(console.subprocess, "call", lambda cmd, cwd: calls.append((cmd, cwd)) or 0)
    assert console.main(["app", "--server.port", "8600"]) == 0
    [(cmd, cwd)] = calls
    assert cmd[:5] == [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py")]
    assert cmd[-2:] == ["--server.port", "8600"]
    assert cwd == ROOT == app_dir()


def test_the_apps_config_skips_the_full_garbage_collection_after_every_script_run():
    """Streamlit's default ``gc.collect(2)`` after each run holds the GIL while other sessions wait;
    the config that ``ndcg-lab app`` runs under (the app's folder) turns it off."""
    config = tomllib.loads((app_dir() / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["postScriptGC"] is False


def test_app_mode_shared_sets_the_mode_and_the_server_flags(monkeypatch):
    calls = []
    monkeypatch.setattr(console.subprocess, "call", lambda cmd, cwd, env=None: calls.append((cmd, env)) or 0)
    monkeypatch.setenv("NDCG_LAB_UPLOAD_BYTES", "100MiB")
    assert console.main(["app", "--mode", "shared", "--server.port", "8600"]) == 0
    [(cmd, env)] = calls
    assert env["NDCG_LAB_MODE"] == "shared"
    flags = dict(zip(cmd[5::2], cmd[6::2]))
    assert flags == {"--server.maxUploadSize": "100", "--client.toolbarMode": "viewer",
                     "--server.enableXsrfProtection": "true", "--server.enableCORS": "true",
                     "--server.port": "8600"}


def test_app_refuses_a_bad_setting_in_one_line(monkeypatch, capsys):
    monkeypatch.setattr(console.subprocess, "call", lambda *a, **k: pytest.fail("streamlit must not start"))
    assert console.main(["app", "--mode=public"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ndcg-lab: NDCG_LAB_MODE: expected personal or shared, found 'public'")
    assert err.count("\n") == 1


def test_help_names_the_ndcg_lab_program(capsys):
    with pytest.raises(SystemExit):
        console.main(["--help"])
    assert capsys.readouterr().out.startswith("usage: ndcg-lab")
