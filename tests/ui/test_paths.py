"""ui.paths: the dashboard's folder is the checkout when it holds app.py, else the installed copy."""
from __future__ import annotations

import sys
from pathlib import Path

from ui import paths


def test_the_checkout_holds_app_py():
    root = Path(__file__).resolve().parents[2]
    assert paths.CHECKOUT == root and paths.app_dir() == root


def test_without_app_py_the_installed_copy_is_used(monkeypatch, tmp_path):
    monkeypatch.setattr(paths, "CHECKOUT", tmp_path)
    assert paths.app_dir() == paths.INSTALLED == Path(sys.prefix) / "share" / "ndcg-lab"
