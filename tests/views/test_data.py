"""views/data.py: a large run is streamed and the page says so; an upload is stored whichever page
the next run shows, or by a server session that never drew the uploader, and an upload over a
bound stores nothing and says so at once."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import metrics
from tests.conftest import APP, ROOT, assert_ok, systems_box

LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"


def test_data_page_streams_a_large_run_and_says_so(monkeypatch, open_app):
    monkeypatch.setenv("NDCG_LAB_STREAMING_BYTES", "1000")
    monkeypatch.setenv("NDCG_LAB_DATA_ROOTS", str(ROOT / "ndcg_lab" / "sample_data"))
    at = open_app("views/data.py")
    at.text_input(key="large_run_path").input(str(LEGAL / "bm25.run"))
    next(b for b in at.button if b.label == "Evaluate with the streaming engine").click().run()
    assert_ok(at)
    assert any("with the **streaming** engine in" in s.value for s in at.success)
    shown = next(t.value for t in at.table if "engine" in t.value.columns)
    assert shown.loc[0, "engine"] == "streaming" and shown.loc[0, "name"] == "bm25"
    expected = metrics.means(metrics.evaluate(LEGAL / "qrels.txt", LEGAL / "bm25.run",
                                              ["nDCG(dcg='exp-log2')@10", "AP"]))
    assert shown.loc[0, "nDCG(dcg='exp-log2')@10"] == f"{expected.iloc[0, 0]:.4f}"
    assert shown.loc[0, "AP"] == f"{expected.iloc[0, 1]:.4f}"


RUN = b"1 Q0 d1 1 2.5 mine\n1 Q0 d2 2 1.5 mine\n"


def test_an_upload_is_stored_even_when_the_same_click_opens_another_page(open_app):
    """The uploader's value reaches the server with a run of the Leaderboard, not of the Data page:
    the callback stores it before any page draws."""
    at = open_app("views/data.py")
    at.file_uploader(key="runs_upload").upload("mine.run", RUN)
    at.switch_page("views/leaderboard.py").run()
    assert_ok(at)
    assert "mine" in systems_box(at).options
    at.switch_page("views/data.py").run()
    assert any("Added run **mine**" in s.value for s in at.success)


def test_an_upload_over_the_file_bound_stores_nothing_and_says_so_at_once(open_app, monkeypatch):
    monkeypatch.setenv("NDCG_LAB_UPLOAD_FILES", "2")
    at = open_app("views/data.py")
    before = systems_box(at).options
    files = [(f"r{i}.run", RUN.replace(b"mine", b"r%d" % i), "text/plain") for i in range(3)]
    at.file_uploader(key="runs_upload").set_value(files).run()
    assert_ok(at)
    assert systems_box(at).options == before      # not two of the three
    (error,) = at.error
    assert "Nothing of this upload was stored (3 files, " in error.value
    assert "more than 2 files in one upload" in error.value


def test_an_upload_over_the_byte_bound_says_so_in_the_same_run(open_app, monkeypatch):
    monkeypatch.setenv("NDCG_LAB_UPLOAD_BYTES", "20")
    at = open_app("views/data.py")
    at.file_uploader(key="runs_upload").upload("big.run", RUN).run()
    assert_ok(at)
    (error,) = at.error
    assert "Nothing of this upload was stored" in error.value and "would exceed 20 B" in error.value
    assert "big" not in systems_box(at).options


def run_in_a_new_session(at: AppTest) -> AppTest:
    """Run ``at``'s page, with the widget values it shows, in a server session that has never
    run the app: what a browser meets when its websocket comes back to another server process
    (``ndcg-lab app --replicas``), and when its first run there was stopped before it drew the
    uploader. (AppTest has no public way to start a new session under a page: its private
    session state is swapped for a new AppTest's, between reading the widgets and the run.)"""
    states = at._tree.get_widget_states()
    fresh = AppTest.from_file(str(APP), default_timeout=at.default_timeout)
    at._session_state, at.session_state = fresh._session_state, fresh.session_state
    return at._run(states)


@pytest.mark.parametrize("key, name, stored", [
    ("runs_upload", "mine.run", "Added run **mine**"),
    ("qrels_upload", "fixed.qrels", "Stored qrels from fixed.qrels"),
])
def test_an_upload_reaching_a_session_that_never_drew_its_uploader_is_stored(open_app, key, name, stored):
    """Streamlit calls no ``on_change`` for a widget its session does not know yet; the page
    stores what the callback left, once."""
    at = open_app("views/data.py")
    content = RUN if key == "runs_upload" else b"1 0 d1 2\n1 0 d2 0\n"
    at.file_uploader(key=key).upload(name, content)
    run_in_a_new_session(at)
    assert_ok(at)
    assert sum(stored in s.value for s in at.success) == 1
    if key == "runs_upload":
        assert "mine" in systems_box(at).options
    at.run()
    assert_ok(at)
    assert not any(stored in s.value for s in at.success)     # shown once, stored once
