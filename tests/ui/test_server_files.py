"""The Data page's server path form: absent unless the operator lists roots; a path outside them is
refused; an error about a server file names the file and line but never quotes its text."""
from __future__ import annotations

import pytest

import metrics
from ndcg_lab.ui.scale import server_error

SECRET = "root:x:0:0:root:/root:/bin/bash"


def test_without_roots_there_is_no_server_path_form(open_app, monkeypatch):
    monkeypatch.delenv("NDCG_LAB_DATA_ROOTS", raising=False)
    monkeypatch.delenv("NDCG_LAB_URL_SCHEMES", raising=False)
    at = open_app("views/data.py")
    assert not [t for t in at.text_input if t.key == "large_run_path"]
    assert any("NDCG_LAB_DATA_ROOTS" in c.value for c in at.caption)


@pytest.fixture
def server_form(open_app, monkeypatch, tmp_path):
    root = tmp_path / "allowed"
    root.mkdir()
    outside = tmp_path / "passwd"
    outside.write_text(SECRET + "\n")
    (root / "escape.run").symlink_to(outside)
    (root / "etcdir").symlink_to(tmp_path)
    (root / "passwd.run").write_text(SECRET + "\n")
    monkeypatch.setenv("NDCG_LAB_DATA_ROOTS", str(root))

    def submit(path: str):
        at = open_app("views/data.py")
        at.text_input(key="large_run_path").input(path)
        next(b for b in at.button if b.label == "Evaluate with the streaming engine").click().run()
        assert not at.exception, [e.value for e in at.exception]
        return " ".join(e.value for e in at.error)

    return root, outside, submit


def test_a_path_outside_the_roots_and_an_escaping_symlink_are_refused(server_form):
    root, outside, submit = server_form
    for path in (str(outside), str(root / "escape.run"), str(root / ".." / "passwd")):
        shown = submit(path)
        assert "outside the folders this server may read" in shown
        assert SECRET not in shown and "root:x" not in shown


@pytest.mark.parametrize("pattern", ["*/passwd", "escape*", "**/passwd"])
def test_a_glob_through_a_symlink_out_of_the_root_is_refused(server_form, pattern):
    root, _, submit = server_form
    shown = submit(f"{root}/{pattern}")
    assert "outside the folders this server may read" in shown
    assert "line 1" not in shown and "columns" not in shown and "root:x" not in shown


def test_an_error_about_a_server_file_names_the_line_without_quoting_it(server_form):
    root, _, submit = server_form
    shown = submit(str(root / "passwd.run"))
    assert "line 1" in shown and "passwd" in shown
    assert "root:x" not in shown and "/bin/bash" not in shown


def test_server_error_drops_every_quoted_fragment():
    exc = metrics.MetricsError(f"score 'abc' is not a number: '{SECRET}'", source="r.run", line=3,
                               fix="check the column order")
    assert server_error(exc) == "r.run line 3: score is not a number. check the column order"
