"""ndcg_lab.ui.ingest: uploads parsed one by one with one-line errors naming the file, handled once per
session, and messages queued for the Data page (errors shown as inert text). Session-state glue runs
in a script through Streamlit's AppTest.from_function."""
from __future__ import annotations

import io as stdio

import pandas as pd
from streamlit.testing.v1 import AppTest

import metrics
from ndcg_lab.ui import ingest
from tests.conftest import assert_ok

RUN = b"1 Q0 d1 1 2.5 bm25\n1 Q0 d2 2 1.5 bm25\n2 Q0 d3 1 0.5 bm25\n"
QRELS = b"1 0 d1 2\n2 0 d3 1\n"


class Upload(stdio.BytesIO):
    """What ``st.file_uploader`` hands over: bytes with a name, a size and a file_id."""

    def __init__(self, name: str, data: bytes, file_id: str | None = None):
        super().__init__(data)
        self.name, self.size, self.file_id = name, len(data), file_id or name


def test_parse_files_reads_each_file_and_names_the_bad_one():
    good, bad = Upload("bm25.run", RUN), Upload("broken.run", b"1 Q0 d1\n")
    (f1, run, e1), (f2, none, e2) = ingest.parse_files([good, bad], ingest.run_reader)
    assert f1 is good and e1 is None and run.table.num_rows == 3
    assert sorted(run.table["docno"].to_pylist()) == ["d1", "d2", "d3"]
    assert f2 is bad and none is None
    assert e2.startswith("broken.run") and "\n" not in e2
    assert ingest.parse_files(None, ingest.run_reader) == []


def test_qrels_and_topics_readers():
    qrels = ingest.qrels_reader(Upload("qrels.txt", QRELS))
    assert dict(zip(qrels.table["docno"].to_pylist(), qrels.table["rel"].to_pylist())) == {"d1": 2, "d3": 1}
    topics = ingest.topics_reader(Upload("topics.tsv", b"1\tblack cat\n2\tdog\n"))
    assert isinstance(topics, pd.DataFrame) and len(topics) == 2


def test_an_unexpected_exception_becomes_one_line():
    def reader(file):
        raise ValueError("boom")

    (_, parsed, error), = ingest.parse_files([Upload("x.run", b"")], reader)
    assert parsed is None and error == "x.run: could not be read (ValueError: boom)"


def _session_script():
    import io as stdio

    import streamlit as st

    from ndcg_lab.ui import ingest

    class Upload(stdio.BytesIO):
        def __init__(self, name, data, file_id):
            super().__init__(data)
            self.name, self.size, self.file_id = name, len(data), file_id

    first = Upload("a.run", b"1 Q0 d 1 1 t\n", "id-1")
    second = Upload("b.run", b"1 Q0 d 1 1 t\n", "id-2")
    st.session_state["new_before"] = [f.name for f in ingest.new_files([first, second])]
    ingest.mark_done(first)
    st.session_state["new_after"] = [f.name for f in ingest.new_files([first, second])]
    st.session_state["single"] = [f.name for f in ingest.new_files(second)]
    st.session_state["none"] = ingest.new_files(None)
    ingest.report("error", "[link](http://x) <img src=x onerror=alert(1)>")
    ingest.report("success", "Stored **bm25**")
    ingest.report("warning", "careful")
    ingest.show_reports()


def test_session_glue_in_a_script():
    at = AppTest.from_function(_session_script, default_timeout=60)
    at.run()
    assert_ok(at)
    assert at.session_state["new_before"] == ["a.run", "b.run"]
    assert at.session_state["new_after"] == ["b.run"]
    assert at.session_state["single"] == ["b.run"]
    assert at.session_state["none"] == []
    (error,) = at.error
    assert error.value == ingest.md("[link](http://x) <img src=x onerror=alert(1)>")
    assert "\\[link\\]" in error.value and "\\<img" in error.value
    assert [s.value for s in at.success] == ["Stored **bm25**"]
    assert [w.value for w in at.warning] == ["careful"]


def _interrupted_script():
    import streamlit as st

    from ndcg_lab.ui import ingest

    runs = st.session_state["runs"] = st.session_state.get("runs", 0) + 1
    if runs == 1:
        ingest.report("error", "bad.run line 3: a problem")
    ingest.show_reports()
    if runs == 1:
        st.rerun()          # this run stops half-way, as a rerun request from the browser stops it
    if runs == 2:
        ingest.report("success", "queued after the messages were drawn")
    ingest.reports_drawn()


def test_a_message_outlives_a_run_stopped_half_way_and_goes_after_a_whole_run():
    at = AppTest.from_function(_interrupted_script, default_timeout=60)
    at.run()                                  # run 1 draws the error and is stopped; run 2 draws it again
    assert_ok(at)
    assert at.session_state["runs"] == 2
    assert [e.value for e in at.error] == [ingest.md("bad.run line 3: a problem")]
    assert not at.success                     # queued after run 2 drew its messages: shown by the next
    at.run()
    assert not at.error and [s.value for s in at.success] == ["queued after the messages were drawn"]
    at.run()
    assert not at.error and not at.success


def _topics_script():
    import pandas as pd
    import streamlit as st

    from ndcg_lab.ui import ingest, state

    if "stored" not in st.session_state:
        topics = pd.DataFrame({"qid": ["1", "2"], "title": ["black cat", "dog"],
                               "description": ["a cat that is black", "any dog"]})
        ingest.store_topics(state.workspace(), "legal", topics)
        st.session_state["stored"] = True
    ingest.pick_topics_field(state.workspace(), "legal")
    ingest.show_reports()


def test_topics_are_stored_and_the_query_field_can_be_picked(legal):
    _, ws = legal
    at = AppTest.from_function(_topics_script, default_timeout=60)
    at.run()
    assert_ok(at)
    assert dict(zip(ws.load_topics("legal")["qid"], ws.load_topics("legal")["text"])) == {"1": "black cat",
                                                                                         "2": "dog"}
    (box,) = at.selectbox
    assert box.options == ["title", "description"] and box.value == "title"
    box.select("description").run()
    assert_ok(at)
    assert dict(zip(ws.load_topics("legal")["qid"], ws.load_topics("legal")["text"])) == {
        "1": "a cat that is black", "2": "any dog"}
    assert [s.value for s in at.success] == ["Query text is now the topics' **description** field."]


def test_store_uploads_stores_each_good_file_once_and_collects_garbage(monkeypatch):
    calls, saved = [], []
    monkeypatch.setattr(ingest, "release_memory", lambda: calls.append("collect"))
    monkeypatch.setattr(ingest, "_seen", lambda seen=set(): seen)
    monkeypatch.setattr(ingest, "report", lambda kind, text: calls.append((kind, text)))
    big = b"".join(b"3 Q0 d%d %d 1.0 big\n" % (i, i) for i in range(1, 9))
    files = [Upload("bm25.run", RUN), Upload("broken.run", b"1 Q0 d1\n"), Upload("big.run", big)]
    settings = metrics.settings.Settings()
    ingest.store_uploads(files, ingest.run_reader, lambda f, run: saved.append(f.name), settings,
                         larger_than=len(RUN) * 2)
    assert saved == ["bm25.run"]
    assert calls[0] == "collect"                        # the refused file's memory, at once
    assert calls[1][0] == "error" and calls[1][1].startswith("broken.run") and calls[2] == "collect"
    assert ingest.new_files(files) == [files[2]]       # left for the streaming engine on the page
    ingest.store_uploads(files, ingest.run_reader, lambda f, run: saved.append(f.name), settings)
    assert saved == ["bm25.run", "big.run"]


def test_an_upload_over_a_bound_is_refused_whole(monkeypatch):
    reports = []
    monkeypatch.setattr(ingest, "_seen", lambda seen=set(): seen)
    monkeypatch.setattr(ingest, "report", lambda kind, text: reports.append((kind, text)))
    files = [Upload(f"r{i}.run", RUN) for i in range(3)]
    assert ingest.bounded(files, metrics.settings.Settings(upload_files=2)) == []
    assert ingest.new_files(files) == []
    ((kind, text),) = reports
    assert kind == "error" and text.startswith("Nothing of this upload was stored (3 files, ")
    assert "more than 2 files" in text


def test_the_files_of_one_upload_are_stored_all_or_none_against_the_quota(monkeypatch, tmp_path):
    reports = []
    monkeypatch.setattr(ingest, "_seen", lambda seen=set(): seen)
    monkeypatch.setattr(ingest, "report", lambda kind, text: reports.append((kind, text)))
    from metrics.store import Quota, Workspace

    one = 3 * (1 + 2 + 4 + 16) + len("bm25") + len("bm25.run") + 64   # tables.py: 3 lines and the link
    other = b"1 Q0 e1 1 2.5 tfid\n1 Q0 e2 2 1.5 tfid\n2 Q0 e3 1 0.5 tfid\n"
    with Workspace(tmp_path / "w.duckdb") as free:
        free.create_collection("c", QRELS)
        base = free.usage().bytes
    with Workspace(tmp_path / "q.duckdb", quota=Quota(bytes=base + one + 10)) as ws:
        ws.create_collection("c", QRELS)
        files = [Upload("bm25.run", RUN), Upload("tfid.run", other)]  # the first fits, the two do not
        ingest.store_uploads(files, ingest.run_reader, ingest.run_saver(ws, "c"), metrics.settings.Settings())
        assert ws.runs("c") == []
        ((kind, text),) = reports
        assert kind == "error" and text.startswith("Nothing of these 2 files was stored: tfid.run: the workspace")
        reports.clear()
        ingest.store_uploads([Upload("bm25.run", RUN, "again")], ingest.run_reader, ingest.run_saver(ws, "c"),
                             metrics.settings.Settings())
        assert [r.name for r in ws.runs("c")] == ["bm25"] and reports[0][0] == "success"
