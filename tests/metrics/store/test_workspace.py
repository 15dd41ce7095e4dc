"""The workspace database: round trips, dedup, renames, persistence, atomicity, threads."""
from __future__ import annotations

import threading
from datetime import UTC, datetime

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from metrics import io, store
from metrics.errors import MetricsError
from metrics.store import Workspace
from metrics.store import tables as store_tables
from metrics.store import values as store_values

QRELS_TEXT = b"q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d9 1\nq2 0 d10 -1\n"
RUN_TEXT = b"q1 Q0 d3 1 12.5 bm25\nq1 Q0 d1 2 12.5 bm25\nq1 Q0 d7 3 -0.25 bm25\nq2 Q0 d10 1 3 bm25\n"


def make_run(n_queries: int = 3, depth: int = 4, *, seed: int = 0, name: str = "bm25", chunks: int = 1) -> io.Run:
    """A run in a deliberately unsorted order (shuffled rows, ties, negative scores), in ``chunks`` pieces."""
    rng = np.random.default_rng(seed)
    n = n_queries * depth
    order = rng.permutation(n)
    table = pa.table({
        "qid": pa.array(np.repeat([f"q{i}" for i in range(n_queries)], depth)[order]),
        "docno": pa.array([f"d{i}-é" for i in rng.integers(0, 10 * n, n)]),
        "score": pa.array(np.round(rng.normal(size=n), 2)),  # rounding makes ties
        "rank": pa.array(rng.integers(1, depth + 1, n)),
        "tag": pa.array(np.full(n, name)),
    })
    if chunks > 1:
        bounds = np.linspace(0, n, chunks + 1).astype(int)
        table = pa.concat_tables([table.slice(a, b - a) for a, b in zip(bounds[:-1], bounds[1:])])
    findings = [io.Finding("ties", "2 queries have tied scores", count=2, examples=["q1", "q2"])]
    return io.Run(table, name, f"{name}.run", f"digest-{name}-{seed}-{n}", findings)


def make_qrels(name: str = "qrels", grades=(2, 0, 1, -1)) -> io.Qrels:
    table = pa.table({"qid": ["q0", "q0", "q1", "q2"], "docno": ["d1", "d2", "d3", "d4"],
                      "rel": pa.array(list(grades), pa.int64())})
    return io.Qrels(table, name, f"{name}.txt", f"digest-{name}-{grades}", [])


@pytest.fixture
def ws(tmp_path):
    with Workspace(tmp_path / "ws.duckdb") as workspace:
        workspace.create_collection("dl19", make_qrels())
        yield workspace


# -- location -------------------------------------------------------------------------

def test_default_path_honours_ndcg_lab_home(monkeypatch, tmp_path):
    monkeypatch.setenv("NDCG_LAB_HOME", str(tmp_path / "lab"))
    assert store.default_path() == tmp_path / "lab" / "workspace.duckdb"
    with Workspace() as workspace:
        assert workspace.path == (tmp_path / "lab" / "workspace.duckdb").resolve()
    assert (tmp_path / "lab" / "workspace.duckdb").exists()


def test_default_path_falls_back_to_xdg_then_home(monkeypatch, tmp_path):
    monkeypatch.delenv("NDCG_LAB_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert store.default_path() == tmp_path / "xdg" / "ndcg-lab" / "workspace.duckdb"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert store.default_path() == tmp_path / "home" / ".local" / "share" / "ndcg-lab" / "workspace.duckdb"


def test_a_folder_holds_workspace_duckdb(tmp_path):
    with Workspace(tmp_path) as workspace:
        assert workspace.path == (tmp_path / "workspace.duckdb").resolve()


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path):
    bad = tmp_path / "notes.duckdb"
    bad.write_text("not a database\n" * 100)
    with pytest.raises(MetricsError, match="cannot open the workspace"):
        Workspace(bad)


# -- round trips ----------------------------------------------------------------------

def test_run_round_trip_keeps_values_and_file_order(ws):
    run = make_run(n_queries=60, depth=5000, chunks=7)  # 300k rows: several DuckDB row groups
    info = ws.add_run("dl19", run)
    loaded = ws.load_run("dl19", "bm25")
    assert loaded.table.schema.equals(io.RUN_SCHEMA)
    assert loaded.table.equals(run.table)
    assert (loaded.name, loaded.source, loaded.digest) == ("bm25", "bm25.run", run.digest)
    assert loaded.findings == run.findings
    assert (info.n_lines, info.n_queries, info.id) == (300_000, 60, info.id)
    assert info.uploaded.tzinfo == UTC
    assert abs((datetime.now(UTC) - info.uploaded).total_seconds()) < 60


def test_order_survives_deletes_between_runs(ws):
    runs = [make_run(n_queries=20, depth=5000, seed=s, name=f"r{s}", chunks=3) for s in range(3)]
    ws.add_run("dl19", runs[0])
    ws.add_run("dl19", runs[1])
    ws.delete_run("dl19", "r0")  # frees rows in front of r1 ...
    ws.add_run("dl19", runs[2])  # ... that a new run may reuse
    assert ws.load_run("dl19", "r1").table.equals(runs[1].table)
    assert ws.load_run("dl19", "r2").table.equals(runs[2].table)


def test_order_is_kept_even_without_duckdbs_insertion_order(ws):
    run = make_run(n_queries=30, depth=5000, chunks=3)
    ws.add_run("dl19", run)
    ws._con.execute("SET preserve_insertion_order = false")  # then load_run orders by the stored position
    assert ws.load_run("dl19", "bm25").table.equals(run.table)


def test_qrels_proxy_topics_docs_round_trip(ws):
    qrels = make_qrels()
    assert ws.load_qrels("dl19").table.equals(qrels.table)
    assert ws.load_proxy("dl19") is None
    proxy = make_qrels("llm-labels", grades=(1, 1, 0, 3))
    ws.set_proxy("dl19", proxy)
    loaded = ws.load_proxy("dl19")
    assert loaded.table.equals(proxy.table) and loaded.name == "llm-labels"
    # PyTerrier's topics frame (qid, query) is accepted; integer qids become text.
    ws.set_topics("dl19", pd.DataFrame({"qid": [2, 1], "query": ["why is the sky blue", "ndcg"]}))
    topics = ws.load_topics("dl19")
    assert list(topics.columns) == ["qid", "text"]
    assert topics["qid"].tolist() == ["2", "1"] and topics["text"].tolist() == ["why is the sky blue", "ndcg"]
    ws.set_docs("dl19", pd.DataFrame({"docno": ["d1", "d2"], "title": ["Rayleigh scattering", None]}))
    docs = ws.load_docs("dl19")
    assert docs["docno"].tolist() == ["d1", "d2"]
    assert docs["title"].iloc[0] == "Rayleigh scattering" and pd.isna(docs["title"].iloc[1])
    info = ws.collections()[0]
    assert (info.n_topics, info.n_docs, info.proxy_digest, info.qrels_digest) == (2, 2, proxy.digest, qrels.digest)
    ws.set_proxy("dl19", None)
    ws.set_docs("dl19", None)
    assert ws.load_proxy("dl19") is None and ws.load_docs("dl19").empty
    assert ws.stats()["qrels_lines"] == len(qrels)  # the proxy's rows went with it


def test_topics_without_text_column_is_a_clear_error(ws):
    with pytest.raises(MetricsError, match="needs columns qid and text"):
        ws.set_topics("dl19", pd.DataFrame({"qid": ["1"], "body": ["x"]}))


def test_parsed_text_round_trips(tmp_path):
    """Through metrics.io: read_run / read_qrels on TREC text, store, load, evaluate the same."""
    import metrics

    (tmp_path / "bm25.run").write_bytes(RUN_TEXT)
    qrels = io.read_qrels(QRELS_TEXT, name="qrels", source="qrels.txt")
    run = io.read_run(tmp_path / "bm25.run")
    with Workspace(tmp_path / "ws.duckdb") as workspace:
        workspace.create_collection("toy", qrels)
        workspace.add_run("toy", tmp_path / "bm25.run")  # a path is parsed by metrics.io
        loaded = workspace.load_run("toy", "bm25")
        stored_qrels = workspace.load_qrels("toy")
    assert loaded.table.equals(run.table) and loaded.digest == run.digest
    assert stored_qrels.table.equals(qrels.table)
    before = metrics.evaluate(qrels, run, ["nDCG@3", "AP"])
    after = metrics.evaluate(stored_qrels, loaded, ["nDCG@3", "AP"])
    pd.testing.assert_frame_equal(before, after)


# -- dedup and names ------------------------------------------------------------------

def test_same_content_is_stored_once(ws, tmp_path):
    run = make_run()
    first = ws.add_run("dl19", run)
    again = ws.add_run("dl19", io.Run(run.table, "bm25-again", "copy.run", run.digest, []))
    assert again == first and [r.name for r in ws.runs("dl19")] == ["bm25"]
    rows = ws.stats()["run_lines"]
    ws.create_collection("dl20", make_qrels())  # same qrels digest: linked, not copied
    linked = ws.add_run("dl20", run, name="BM25 (dl20)")
    assert linked.id == first.id and linked.name == "BM25 (dl20)"
    assert ws.stats()["run_lines"] == rows and ws.stats()["objects"] == 2
    ws.delete_run("dl19", "bm25")
    assert ws.stats()["run_lines"] == rows  # still linked from dl20
    assert ws.load_run("dl20", "BM25 (dl20)").table.equals(run.table)
    ws.delete_run("dl20", "BM25 (dl20)")
    assert ws.stats()["run_lines"] == 0 and ws.stats()["objects"] == 1


def test_a_taken_name_gets_a_number(ws):
    names = [ws.add_run("dl19", make_run(seed=s)).name for s in range(3)]
    assert names == ["bm25", "bm25 (2)", "bm25 (3)"]
    assert [r.name for r in ws.runs("dl19")] == names


@pytest.mark.parametrize("bad, match", [("x" * 201, "201 characters long"), ("two\nlines", "U\\+000A"),
                                        ("nul\x00", "U\\+0000"), ("line\u2028separator", "U\\+2028"),
                                        ("bm25\u202eevil", "U\\+202E")])
def test_names_are_bounded_and_printable(ws, bad, match):
    before = ws.stats()
    for attempt in (lambda: ws.create_collection(bad, make_qrels()), lambda: ws.add_run("dl19", make_run(), name=bad),
                    lambda: ws.rename_collection("dl19", bad)):
        with pytest.raises(MetricsError, match=match):
            attempt()
    assert ws.stats() == before and ws.add_run("dl19", make_run(), name="x" * 200).name == "x" * 200


def test_collection_names_are_unique(ws):
    with pytest.raises(MetricsError, match="already exists"):
        ws.create_collection("dl19", make_qrels())
    with pytest.raises(MetricsError, match="name is empty"):
        ws.create_collection("  ", make_qrels())
    assert ws.has_collection("dl19") and not ws.has_collection("dl20")


# -- rename, delete, baseline ---------------------------------------------------------

def test_rename_delete_and_baseline(ws):
    ws.add_run("dl19", make_run(seed=1, name="bm25"))
    ws.add_run("dl19", make_run(seed=2, name="monot5"))
    assert ws.baseline("dl19") is None
    ws.set_baseline("dl19", "bm25")
    ws.rename_run("dl19", "bm25", "BM25 (Anserini)")
    assert ws.baseline("dl19") == "BM25 (Anserini)"  # the baseline follows its run
    assert ws.load_run("dl19", "BM25 (Anserini)").name == "BM25 (Anserini)"
    with pytest.raises(MetricsError, match="already has a run named 'monot5'"):
        ws.rename_run("dl19", "BM25 (Anserini)", "monot5")
    with pytest.raises(MetricsError, match="no run named 'bm25'"):
        ws.load_run("dl19", "bm25")
    with pytest.raises(MetricsError, match="no run named 'splade'"):
        ws.set_baseline("dl19", "splade")
    ws.delete_run("dl19", "BM25 (Anserini)")
    assert ws.baseline("dl19") is None  # deleting the baseline run clears it
    assert [r.name for r in ws.runs("dl19")] == ["monot5"]
    ws.set_baseline("dl19", "monot5")
    ws.set_baseline("dl19", None)
    assert ws.baseline("dl19") is None


def test_delete_collection_removes_what_only_it_linked(ws):
    ws.add_run("dl19", make_run())
    ws.set_topics("dl19", pd.DataFrame({"qid": ["q1"], "text": ["a"]}))
    ws.rename_collection("dl19", "trec-dl-2019")
    ws.delete_collection("trec-dl-2019")
    assert ws.collections() == []
    assert all(count == 0 for count in ws.stats().values())
    with pytest.raises(MetricsError, match="no collection named 'trec-dl-2019'"):
        ws.runs("trec-dl-2019")


def test_set_qrels_replaces_and_drops_the_old_rows(ws):
    new = make_qrels("qrels-v2", grades=(3, 3, 3, 3))
    ws.set_qrels("dl19", new)
    assert ws.load_qrels("dl19").table.equals(new.table)
    assert ws.stats()["qrels_lines"] == len(new) and ws.stats()["objects"] == 1


# -- persistence ----------------------------------------------------------------------

def test_everything_survives_close_and_reopen(tmp_path):
    path = tmp_path / "ws.duckdb"
    run = make_run(n_queries=10, depth=100)
    with Workspace(path) as first:
        first.create_collection("dl19", make_qrels(), proxy=make_qrels("proxy", grades=(1, 0, 0, 1)),
                                topics=pd.DataFrame({"qid": ["q0"], "text": ["hello"]}))
        info = first.add_run("dl19", run)
        first.set_baseline("dl19", "bm25")
        listed = first.collections()
    with Workspace(path) as second:
        assert second.collections() == listed
        assert second.runs("dl19") == [info]
        assert second.runs("dl19")[0].findings == run.findings
        assert second.baseline("dl19") == "bm25"
        assert second.load_run("dl19", "bm25").table.equals(run.table)
        assert second.load_topics("dl19")["text"].tolist() == ["hello"]


def test_two_workspace_objects_on_one_file_see_each_others_writes(tmp_path):
    path = tmp_path / "ws.duckdb"
    with Workspace(path) as a, Workspace(path) as b:
        a.create_collection("dl19", make_qrels())
        b.add_run("dl19", make_run())
        assert [r.name for r in a.runs("dl19")] == ["bm25"]


def test_a_closed_workspace_says_so(tmp_path):
    workspace = Workspace(tmp_path / "ws.duckdb")
    workspace.close()
    with pytest.raises(MetricsError, match="closed"):
        workspace.collections()


# -- atomicity ------------------------------------------------------------------------

class Boom(RuntimeError):
    pass


def _raise(*args, **kwargs):
    raise Boom("forced failure")


def test_failed_add_run_changes_nothing(ws, monkeypatch):
    ws.add_run("dl19", make_run(seed=1))
    before = (ws.stats(), ws.runs("dl19"), ws.collections())
    # Fails after the rows went in, before the object row: the whole upload rolls back.
    monkeypatch.setattr(store_values, "findings_to_json", _raise)
    with pytest.raises(Boom):
        ws.add_run("dl19", make_run(seed=2, n_queries=20, depth=1000))
    monkeypatch.undo()
    # Fails at the very last step (the link to the collection).
    monkeypatch.setattr(store_tables, "link", _raise)
    with pytest.raises(Boom):
        ws.add_run("dl19", make_run(seed=3))
    monkeypatch.undo()
    assert (ws.stats(), ws.runs("dl19"), ws.collections()) == before
    assert ws.add_run("dl19", make_run(seed=2)).name == "bm25 (2)"  # and the workspace still works


def test_failed_collection_changes_are_rolled_back(ws, monkeypatch):
    ws.add_run("dl19", make_run())
    ws.set_baseline("dl19", "bm25")
    before = (ws.stats(), ws.runs("dl19"), ws.collections(), ws.load_qrels("dl19").table)
    monkeypatch.setattr(store_tables, "insert_extra", _raise)
    with pytest.raises(Boom):
        ws.create_collection("dl20", make_qrels("other"), topics=pd.DataFrame({"qid": ["1"], "text": ["t"]}))
    with pytest.raises(Boom):
        ws.set_topics("dl19", pd.DataFrame({"qid": ["1"], "text": ["t"]}))
    monkeypatch.setattr(store_tables, "collect_garbage", _raise)
    with pytest.raises(Boom):
        ws.set_qrels("dl19", make_qrels("new", grades=(0, 0, 0, 0)))
    with pytest.raises(Boom):
        ws.delete_run("dl19", "bm25")
    with pytest.raises(Boom):
        ws.delete_collection("dl19")
    monkeypatch.undo()
    after = (ws.stats(), ws.runs("dl19"), ws.collections(), ws.load_qrels("dl19").table)
    assert after[:3] == before[:3] and after[3].equals(before[3])
    assert ws.baseline("dl19") == "bm25"


def test_a_run_that_does_not_fit_the_schema_is_refused_whole(ws):
    before = ws.stats()
    bad = io.Run(pa.table({"qid": ["q1"], "docno": ["d1"], "score": ["high"], "rank": [1], "tag": ["x"]}),
                 "bad", "bad.run", "digest-bad", [])
    with pytest.raises(MetricsError, match="bad.run"):
        ws.add_run("dl19", bad)
    assert ws.stats() == before


# -- threads --------------------------------------------------------------------------

def test_threads_can_share_a_workspace(tmp_path):
    path = tmp_path / "ws.duckdb"
    with Workspace(path) as shared, Workspace(path) as other:
        shared.create_collection("dl19", make_qrels())
        runs = {f"t{t}-{i}": make_run(n_queries=5, depth=200, seed=100 * t + i, name=f"t{t}-{i}")
                for t in range(4) for i in range(5)}
        errors = []

        def worker(t: int) -> None:
            workspace = other if t % 2 else shared  # two objects on one file as well as one object
            try:
                for i in range(5):
                    name = f"t{t}-{i}"
                    workspace.add_run("dl19", runs[name])
                    assert workspace.load_run("dl19", name).table.equals(runs[name].table)
                    workspace.collections()
                    if i == 2:
                        workspace.rename_run("dl19", name, name + "!")
                        workspace.rename_run("dl19", name + "!", name)
            except Exception as exc:  # reported below: pytest does not see other threads' errors
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert sorted(r.name for r in shared.runs("dl19")) == sorted(runs)
        assert shared.stats()["run_lines"] == sum(len(r) for r in runs.values())


def test_a_workspace_from_a_newer_version_is_refused(tmp_path):
    path = tmp_path / "ws.duckdb"
    with Workspace(path) as workspace:
        workspace._con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(MetricsError, match="newer nDCG Lab"):
        Workspace(path)
    con = duckdb.connect(str(path))  # the refused open left the file usable
    con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    con.close()
    with Workspace(path) as again:
        assert again.collections() == []


# -- replace_collection: the sample reload in one transaction --------------------------

def test_replace_collection_keeps_added_runs_and_proxy(ws):
    sample = [make_run(seed=1, name="bm25"), make_run(seed=2, name="dense")]
    ws.replace_collection("dl19", make_qrels(), runs=sample, baseline="bm25")
    mine = ws.add_run("dl19", make_run(seed=3, name="mine"))
    clash = ws.add_run("dl19", make_run(seed=4, name="x"), name="splade")
    ws.set_proxy("dl19", make_qrels("my-labels", grades=(1, 1, 1, 1)))
    ws.delete_run("dl19", "dense")
    ws.set_baseline("dl19", "mine")
    new_sample = [make_run(seed=1, name="bm25"), make_run(seed=2, name="dense"), make_run(seed=5, name="splade")]
    kept = ws.replace_collection("dl19", make_qrels("v2", grades=(3, 0, 0, 0)), runs=new_sample,
                                 proxy=make_qrels("sample-labels", grades=(0, 0, 0, 0)))
    assert [k.name for k in kept] == ["mine", "splade (2)"] and kept[0].digest == mine.digest
    assert kept[0].uploaded == mine.uploaded and kept[1].digest == clash.digest
    assert [r.name for r in ws.runs("dl19")] == ["bm25", "dense", "splade", "mine", "splade (2)"]
    assert ws.baseline("dl19") == "mine"  # the old baseline's run is still there
    assert ws.load_proxy("dl19").name == "my-labels"  # the user's proxy judgments stay
    assert ws.load_qrels("dl19").name == "v2"
    assert ws.load_run("dl19", "mine").table.equals(make_run(seed=3, name="mine").table)
    rows = sum(len(r) for r in new_sample) + len(make_run(seed=3)) + len(make_run(seed=4))
    assert ws.stats()["run_lines"] == rows  # nothing orphaned, nothing lost
    assert ws.replace_collection("dl19", make_qrels(), runs=new_sample, keep_added=False) == []
    assert [r.name for r in ws.runs("dl19")] == ["bm25", "dense", "splade"] and ws.load_proxy("dl19") is None
    assert ws.baseline("dl19") is None


def test_replace_collection_creates_and_fails_whole(ws, monkeypatch):
    ws.replace_collection("new", make_qrels(), runs=[make_run()], baseline="bm25")
    assert ws.baseline("new") == "bm25"
    before = (ws.stats(), ws.collections())
    with pytest.raises(MetricsError, match="no run named 'nope'"):
        ws.replace_collection("new", make_qrels(), runs=[make_run(seed=9)], baseline="nope")
    monkeypatch.setattr(store_tables, "collect_garbage", _raise)  # the very last step
    with pytest.raises(Boom):
        ws.replace_collection("new", make_qrels("other"), runs=[make_run(seed=8)])
    monkeypatch.undo()
    assert (ws.stats(), ws.collections()) == before


def test_collections_lists_runs_in_the_same_snapshot(ws):
    ws.add_run("dl19", make_run(seed=1, name="a"))
    ws.add_run("dl19", make_run(seed=2, name="b"))
    (info,) = ws.collections()
    assert info.runs == tuple(ws.runs("dl19")) and info.n_runs == 2 and not info.shared


def test_load_run_by_digest_refuses_changed_content(ws):
    old = ws.add_run("dl19", make_run(seed=1, name="a"))
    assert ws.load_run("dl19", "a", digest=old.digest).digest == old.digest
    ws.delete_run("dl19", "a")
    ws.add_run("dl19", make_run(seed=2, name="a"))  # another tab replaced it under the same name
    with pytest.raises(MetricsError, match="changed while it was being read"):
        ws.load_run("dl19", "a", digest=old.digest)


# -- quotas and data bytes ------------------------------------------------------------

def test_usage_is_the_data_bytes_formula(ws):
    run = make_run(n_queries=5, depth=40)
    ws.add_run("dl19", run)
    rows = run.table.to_pylist()
    run_bytes = sum(len(r["qid"].encode()) + len(r["docno"].encode()) + len(r["tag"].encode()) + 16 for r in rows)
    qrels_bytes = sum(len(r["qid"]) + len(r["docno"]) + 8 for r in make_qrels().table.to_pylist())
    names = (len("dl19") + 64) + (len("qrels") + len("qrels.txt") + 64) + (len("bm25") + len("bm25.run") + 64)
    usage = ws.usage()   # the run's ranked cache, written as it was stored, is counted apart
    assert (usage.bytes, usage.runs) == (run_bytes + qrels_bytes + names, 1)


def test_over_quota_nothing_is_written(tmp_path, monkeypatch):
    run = make_run(n_queries=5, depth=40)
    with Workspace(tmp_path / "q.duckdb", quota=store.Quota(bytes=500)) as ws:
        ws.create_collection("dl19", make_qrels())
        before = ws.stats()
        monkeypatch.setattr(store_tables, "store_object", _raise)  # would show any write attempt
        with pytest.raises(store.QuotaExceeded, match=r"bm25.run: the workspace would hold .* over its quota"):
            ws.add_run("dl19", run)
        monkeypatch.undo()
        assert ws.stats() == before
        with pytest.raises(store.QuotaExceeded):  # the final check covers every change
            ws.set_qrels("dl19", io.Qrels(make_run(n_queries=50, depth=10).table.select(["qid", "docno"]).append_column(
                "rel", pa.array(np.ones(500, dtype=np.int64))), "big", "big.txt", "digest-big-qrels", []))
        assert ws.stats() == before


# -- opening: schema upgrade, read-only, locks ---------------------------------------

SCHEMA_1 = """
CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE SEQUENCE object_ids START 1; CREATE SEQUENCE collection_ids START 1; CREATE SEQUENCE link_ids START 1;
CREATE TABLE objects (id BIGINT PRIMARY KEY, kind VARCHAR NOT NULL, digest VARCHAR NOT NULL, n_lines BIGINT NOT NULL,
    n_queries BIGINT NOT NULL, findings VARCHAR NOT NULL, stored TIMESTAMP NOT NULL);
CREATE TABLE collections (id BIGINT PRIMARY KEY, name VARCHAR NOT NULL, baseline VARCHAR, created TIMESTAMP NOT NULL);
CREATE TABLE links (id BIGINT PRIMARY KEY, collection_id BIGINT NOT NULL, object_id BIGINT NOT NULL,
    role VARCHAR NOT NULL, name VARCHAR NOT NULL, source VARCHAR NOT NULL, added TIMESTAMP NOT NULL);
CREATE TABLE run_lines (object_id BIGINT NOT NULL, pos BIGINT NOT NULL, qid VARCHAR NOT NULL, docno VARCHAR NOT NULL,
    score DOUBLE NOT NULL, rank BIGINT NOT NULL, tag VARCHAR NOT NULL);
CREATE TABLE qrels_lines (object_id BIGINT NOT NULL, pos BIGINT NOT NULL, qid VARCHAR NOT NULL,
    docno VARCHAR NOT NULL, rel BIGINT NOT NULL);
CREATE TABLE topics (collection_id BIGINT NOT NULL, pos BIGINT NOT NULL, qid VARCHAR NOT NULL, text VARCHAR);
CREATE TABLE docs (collection_id BIGINT NOT NULL, pos BIGINT NOT NULL, docno VARCHAR NOT NULL, title VARCHAR);
INSERT INTO meta VALUES ('schema_version', '1');
INSERT INTO objects VALUES (nextval('object_ids'), 'qrels', 'dq', 1, 1, '[]', now());
INSERT INTO objects VALUES (nextval('object_ids'), 'run', 'dr', 2, 1, '[]', now());
INSERT INTO collections VALUES (nextval('collection_ids'), 'old', NULL, now());
INSERT INTO links VALUES (nextval('link_ids'), 1, 1, 'qrels', 'qrels', 'qrels.txt', now());
INSERT INTO links VALUES (nextval('link_ids'), 1, 2, 'run', 'bm25', 'bm25.run', now());
INSERT INTO qrels_lines VALUES (1, 0, 'q1', 'd1', 2);
INSERT INTO run_lines VALUES (2, 0, 'q1', 'd1', 2.5, 1, 'bm25'), (2, 1, 'q1', 'doc22', 1.5, 2, 'bm25');
"""


def schema_1_file(tmp_path):
    """A workspace file written by schema version 1 (the first layout), never opened since."""
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute(SCHEMA_1)
    con.close()
    return path


def test_a_schema_1_workspace_is_upgraded_in_place(tmp_path):
    path = schema_1_file(tmp_path)
    with Workspace(path) as ws:
        assert [r.name for r in ws.runs("old")] == ["bm25"]
        qrels_bytes = len("q1") + len("d1") + 8
        run_bytes = (2 + 2 + 4 + 16) + (2 + 5 + 4 + 16)
        names = (len("old") + 64) + (len("qrels") + len("qrels.txt") + 64) + (len("bm25") + len("bm25.run") + 64)
        assert ws.usage() == store.Usage(bytes=qrels_bytes + run_bytes + names, runs=1)
        ws.add_run("old", make_run())
    con = duckdb.connect(str(path), read_only=True)
    version = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
    assert version == [(str(store_tables.SCHEMA_VERSION),)]
    con.close()


def test_read_only_opening(tmp_path):
    path = tmp_path / "ws.duckdb"
    with pytest.raises(MetricsError, match="no workspace file here"):
        Workspace(path, read_only=True)
    duckdb.connect(str(path)).close()  # a DuckDB file, but not a workspace
    with pytest.raises(MetricsError, match="not an nDCG Lab workspace"):
        Workspace(path, read_only=True)
    path.unlink()
    with Workspace(path) as writer:
        writer.create_collection("dl19", make_qrels())
        with Workspace(path, read_only=True) as reader:  # this process has it open for writing: shared
            assert reader.collections() == writer.collections()
            with pytest.raises(store.ReadOnlyWorkspace):
                reader.add_run("dl19", make_run())
    with Workspace(path, read_only=True) as reader:
        assert [c.name for c in reader.collections()] == ["dl19"]
        with pytest.raises(store.ReadOnlyWorkspace):
            reader.delete_collection("dl19")


@pytest.fixture
def statements(monkeypatch):
    """Every SQL statement the workspaces of this test run, in order (a wrapper around each cursor)."""
    from metrics.store import connection

    seen: list[str] = []

    class Recording:
        def __init__(self, cur):
            self._cur = cur

        def execute(self, sql, *args, **kwargs):
            seen.append(sql)
            return self._cur.execute(sql, *args, **kwargs)

        def sql(self, sql, *args, **kwargs):
            seen.append(sql)
            return self._cur.sql(sql, *args, **kwargs)

        def __getattr__(self, name):
            return getattr(self._cur, name)

    original = connection.Connection.cursor

    def cursor(self):
        from contextlib import contextmanager

        @contextmanager
        def recorded():
            with original(self) as cur:
                yield Recording(cur)
        return recorded()

    monkeypatch.setattr(connection.Connection, "cursor", cursor)
    return seen


def catalogue(sql: list[str]) -> list[str]:
    return [s for s in sql if "information_schema" in s]


def test_a_listing_or_a_load_asks_the_catalogue_nothing(tmp_path, statements):
    path = tmp_path / "ws.duckdb"
    with Workspace(path) as ws:
        ws.create_collection("dl19", make_qrels())
        ws.add_run("dl19", make_run(), recipe={"method": "rrf"})
        statements.clear()
        for _ in range(3):
            assert ws.collections()[0].runs[0].recipe == {"method": "rrf"}
            assert [r.name for r in ws.runs("dl19")] == ["bm25"]
            assert ws.load_run("dl19", "bm25").table.num_rows == 12
        assert statements and catalogue(statements) == []
    with Workspace(path, read_only=True) as reader:       # read once, at the opening
        opening = len(catalogue(statements))
        for _ in range(3):
            assert reader.collections()[0].runs[0].recipe == {"method": "rrf"}
            assert reader.load_run("dl19", "bm25").table.num_rows == 12
        assert len(catalogue(statements)) == opening


def test_a_read_only_file_of_an_old_schema_is_read_in_its_own_layout(tmp_path, statements, monkeypatch):
    path = schema_1_file(tmp_path)                      # no objects.recipe, run_lines with text qids
    layouts, read = [], store_tables.layout
    monkeypatch.setattr(store_tables, "layout", lambda con: layouts.append(read(con)) or layouts[-1])
    with Workspace(path, read_only=True) as reader:
        assert layouts == [store_tables.Layout(recipe=False, coded=False)]
        opening = len(catalogue(statements))
        for _ in range(2):
            [info] = reader.runs("old")
            assert info.name == "bm25" and info.recipe is None
            run = reader.load_run("old", "bm25")
            assert run.table.column("qid").to_pylist() == ["q1", "q1"]
            assert run.table.column("docno").to_pylist() == ["d1", "doc22"]
        assert len(catalogue(statements)) == opening
        assert len(layouts) == 1
        assert reader.suspend()
        assert [r.name for r in reader.runs("old")] == ["bm25"]   # a new opening reads the layout again
        assert len(layouts) == 2


HOLD = """
import sys, time
from metrics.store import Workspace
ws = Workspace(sys.argv[1], read_only=sys.argv[2] == "ro")
ws.collections()
print("holding", flush=True)
time.sleep(120)
"""


@pytest.fixture
def held(tmp_path):
    """Start a process that holds a workspace open (read-write or read-only) until the test ends."""
    import subprocess
    import sys

    procs = []

    def hold(path, mode: str):
        proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path), mode], stdout=subprocess.PIPE,
                                cwd=store.__file__.rsplit("/metrics/", 1)[0], text=True)
        procs.append(proc)
        assert proc.stdout.readline().strip() == "holding"
        return proc

    yield hold
    for proc in procs:
        proc.kill()
        proc.wait()


def test_a_workspace_held_by_another_process_is_a_one_line_error(tmp_path, held):
    path = tmp_path / "ws.duckdb"
    with Workspace(path) as ws:
        ws.create_collection("dl19", make_qrels())
    proc = held(path, "rw")
    for read_only in (False, True):
        with pytest.raises(store.WorkspaceLocked) as caught:
            Workspace(path, read_only=read_only)
        message = str(caught.value)
        assert f"open in another process (PID {proc.pid})" in message and "\n" not in message
        assert message.startswith(str(path.resolve()))


def test_a_workspace_another_process_reads_can_be_read_here(tmp_path, held):
    path = tmp_path / "ws.duckdb"
    with Workspace(path) as ws:
        ws.create_collection("dl19", make_qrels())
    held(path, "ro")
    with Workspace(path, read_only=True) as reader:
        assert [c.name for c in reader.collections()] == ["dl19"]
    with pytest.raises(store.WorkspaceLocked):
        Workspace(path)


# -- suspend and close ------------------------------------------------------------------

def test_a_suspended_workspace_reopens_and_a_closed_one_says_why(tmp_path):
    ws = Workspace(tmp_path / "ws.duckdb")
    ws.create_collection("dl19", make_qrels())
    assert ws.is_open and ws.suspend() and not ws.is_open
    assert [c.name for c in ws.collections()] == ["dl19"] and ws.is_open
    ws.close(reason=lambda: MetricsError("gone for the test"))
    with pytest.raises(MetricsError, match="gone for the test"):
        ws.runs("dl19")
    memory = Workspace(":memory:")
    assert not memory.suspend()  # an in-memory workspace would lose everything
    memory.close()
