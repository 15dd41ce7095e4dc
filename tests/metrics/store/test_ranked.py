"""The ranked cache beside a workspace: exact round trips, distrust of damaged files, cleanup, quota,
read-only views, two Workspace objects on one file, and the coded run layout's upgrade."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

import metrics
from metrics import io
from metrics.errors import MetricsError
from metrics.ranking import rank
from metrics.store import Quota, Workspace
from metrics.store import cached as cached_module
from metrics.store import space as space_module
from metrics.store import workspace as workspace_module

from .test_workspace import schema_1_file

FIELDS = ("qids", "offsets", "rel", "judged", "inferred", "score", "ideal_offsets", "ideal_rel", "missing")
MEASURES = ["nDCG@10", "nDCG(dcg='exp-log2')@10", "nDCG@20", "AP", "RR", "P@5", "R@100", "Judged@10"]


def text_run(seed: int = 0, n_queries: int = 12, depth: int = 30) -> bytes:
    """A TREC run with tied scores, unsorted rows and two queries the qrels lack."""
    rng = np.random.default_rng(seed)
    lines = []
    for q in range(n_queries):
        docs = rng.choice(200, depth, replace=False)
        scores = np.round(rng.normal(size=depth), 1)  # rounding makes ties
        lines += [f"q{q} Q0 d{d} {r + 1} {s} sys" for r, (d, s) in enumerate(zip(docs, scores))]
    rng.shuffle(lines)
    return ("\n".join(lines) + "\n").encode()


def text_qrels(seed: int = 1, n_queries: int = 10) -> bytes:
    """Graded judgments (a negative grade too) for q0..q(n-1), plus q99 that no run retrieves."""
    rng = np.random.default_rng(seed)
    lines = [f"q{q} 0 d{d} {rng.choice([-1, 0, 1, 2, 3])}" for q in range(n_queries)
             for d in rng.choice(200, 40, replace=False)]
    return ("\n".join(lines + ["q99 0 d1 2"]) + "\n").encode()


@pytest.fixture
def files(tmp_path):
    run, qrels, proxy = tmp_path / "sys.run", tmp_path / "qrels.txt", tmp_path / "proxy.txt"
    run.write_bytes(text_run())
    qrels.write_bytes(text_qrels())
    proxy.write_bytes(text_qrels(seed=7))
    return run, qrels, proxy


@pytest.fixture
def ws(tmp_path, files):
    run, qrels, proxy = files
    with Workspace(tmp_path / "ws" / "workspace.duckdb") as workspace:
        workspace.create_collection("c", io.read_qrels(qrels), proxy=io.read_qrels(proxy))
        workspace.add_run("c", io.read_run(run), name="sys")
        yield workspace


def cache_files(ws) -> list[str]:
    folder = workspace_module.cache_folder(ws.path)
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def assert_same(got, want):
    for f in FIELDS:
        a, b = getattr(got, f), getattr(want, f)
        assert a.dtype == b.dtype and np.array_equal(a, b), f
    assert got.docno.equals(want.docno) and got.name == want.name


def test_a_cached_ranked_run_equals_ranking_and_evaluation_of_the_files(ws, files, monkeypatch):
    run, qrels, proxy = files
    built = ws.load_ranked("c", "sys")
    assert len(cache_files(ws)) == 2
    monkeypatch.setattr(cached_module, "rank", lambda *a, **k: pytest.fail("not read from the cache"))
    cached = ws.load_ranked("c", "sys")
    assert_same(cached, rank(io.read_run(run), io.read_qrels(qrels), name="sys"))
    assert_same(built, cached)
    expected = metrics.evaluate(qrels, run, MEASURES)
    values = metrics.evaluate_ranked(cached, MEASURES)
    for m in MEASURES:
        assert values[m].tolist() == expected[expected["measure"] == m]["value"].tolist(), m
    # judged_only condenses the cached arrays as it does fresh ones
    condensed = ws.load_ranked("c", "sys", judged_only=True)
    assert_same(condensed, rank(io.read_run(run), io.read_qrels(qrels), name="sys").condensed())


def test_a_stored_run_gets_its_ranked_cache_so_the_first_load_sorts_nothing(tmp_path, files, monkeypatch):
    """add_run ranks the parsed run in hand; the files equal what load_ranked would have built from
    the stored run and qrels, array for array."""
    run, qrels, _ = files
    with Workspace(tmp_path / "w.duckdb") as ws:
        ws.create_collection("c", io.read_qrels(qrels))
        ws.add_runs("c", [io.read_run(run), io.read_run(text_run(seed=5), name="other", source="other.run")])
        assert len(cache_files(ws)) == 4   # a rows file and a join file for each run
        want = {name: rank(ws.load_run("c", name), ws.load_qrels("c"), name=name) for name in ("sys", "other")}
        monkeypatch.setattr(cached_module, "rank", lambda *a, **k: pytest.fail("not read from the cache"))
        for name in want:
            assert_same(ws.load_ranked("c", name), want[name])


def test_a_ranking_that_fails_at_store_time_leaves_the_run_stored(tmp_path, files, monkeypatch):
    run, qrels, _ = files

    def fail(*args, **kwargs):
        raise MetricsError("a ranking that fails")

    with Workspace(tmp_path / "w.duckdb") as ws:
        ws.create_collection("c", io.read_qrels(qrels))
        monkeypatch.setattr(cached_module, "rank", fail)
        info = ws.add_run("c", io.read_run(run), name="sys")
        assert [r.name for r in ws.runs("c")] == ["sys"] and info.n_lines > 0 and cache_files(ws) == []


def test_a_run_stored_on_a_nearly_full_disk_gets_no_cache_then(tmp_path, files, monkeypatch):
    """The cache is derived data: written at store time only where the disk keeps its reserve after
    it (the run itself is stored as before), else built by the first load as always."""
    run, qrels, _ = files
    parsed = io.read_run(run)
    with Workspace(tmp_path / "w.duckdb") as ws:
        ws.create_collection("c", io.read_qrels(qrels))
        total = 20 * 10**6   # a reserve of total / 20; room for the run's lines, not for its cache (>= 64 KiB)
        free = total // 20 + parsed.table.nbytes + 8_000
        monkeypatch.setattr(space_module.shutil, "disk_usage",
                            lambda path: shutil._ntuple_diskusage(total, total - free, free))
        ws.add_run("c", parsed)
        assert [r.name for r in ws.runs("c")] == ["sys"] and cache_files(ws) == []
        monkeypatch.undo()
        want = rank(ws.load_run("c", "sys"), ws.load_qrels("c"), name="sys")
        assert_same(ws.load_ranked("c", "sys"), want)
        assert len(cache_files(ws)) == 2


def test_the_proxy_variant_round_trips(ws, files, monkeypatch):
    run, qrels, proxy = files
    assert len(cache_files(ws)) == 2  # stored: one rows file for the run and qrels, the join without a proxy
    ws.load_ranked("c", "sys", inferred=True)
    assert len(cache_files(ws)) == 3  # one join file per proxy
    ws.load_ranked("c", "sys")
    assert len(cache_files(ws)) == 3
    monkeypatch.setattr(cached_module, "rank", lambda *a, **k: pytest.fail("not read from the cache"))
    want = rank(io.read_run(run), io.read_qrels(qrels), inferred=io.read_qrels(proxy), name="sys")
    assert want.inferred.any()
    assert_same(ws.load_ranked("c", "sys", inferred=True), want)


@pytest.mark.parametrize("damage", ["truncate join", "flip join", "truncate rows", "grow rows", "garbage"])
def test_a_damaged_cache_file_is_never_trusted_and_is_rebuilt(ws, files, damage):
    run, qrels, _ = files
    ws.load_ranked("c", "sys")
    folder = workspace_module.cache_folder(ws.path)
    join = next(folder.glob("join-*"))
    rows = next(folder.glob("rows-*"))
    if damage == "truncate join":
        join.write_bytes(join.read_bytes()[:-100])
    elif damage == "flip join":
        data = bytearray(join.read_bytes())
        data[len(data) // 3] ^= 0xFF
        join.write_bytes(bytes(data))
    elif damage == "truncate rows":
        rows.write_bytes(rows.read_bytes()[: rows.stat().st_size // 2])
    elif damage == "grow rows":
        rows.write_bytes(rows.read_bytes() + b"\0" * 8)
    else:
        join.write_bytes(b"not arrow at all")
    rebuilt = ws.load_ranked("c", "sys")
    assert_same(rebuilt, rank(io.read_run(run), io.read_qrels(qrels), name="sys"))
    assert len(cache_files(ws)) == 2
    assert_same(ws.load_ranked("c", "sys"), rebuilt)  # and the rebuilt files are read back whole


def test_a_flipped_byte_anywhere_in_the_join_file_never_changes_a_value(ws, files):
    run, qrels, _ = files
    want = metrics.evaluate_ranked(rank(io.read_run(run), io.read_qrels(qrels), name="sys"), MEASURES)
    ws.load_ranked("c", "sys")
    join = next(workspace_module.cache_folder(ws.path).glob("join-*"))
    original = join.read_bytes()
    for at in range(0, len(original), max(len(original) // 40, 1)):
        data = bytearray(original)
        data[at] ^= 0x01
        join.write_bytes(bytes(data))
        got = metrics.evaluate_ranked(ws.load_ranked("c", "sys"), MEASURES)
        assert all(np.array_equal(got[m], want[m]) for m in MEASURES), at


def test_deleting_and_replacing_remove_the_cache_and_renaming_keeps_it(ws, files, monkeypatch):
    run, qrels, proxy = files
    ws.load_ranked("c", "sys")
    ws.rename_run("c", "sys", "renamed")
    ws.rename_collection("c", "d")
    assert len(cache_files(ws)) == 2  # keyed by content: still the same run and qrels
    monkeypatch.setattr(cached_module, "rank", lambda *a, **k: pytest.fail("not read from the cache"))
    assert ws.load_ranked("d", "renamed").name == "renamed"
    monkeypatch.undo()
    ws.set_qrels("d", io.read_qrels(proxy))  # other judgments: the old pair is stale
    assert cache_files(ws) == []
    ws.load_ranked("d", "renamed")
    ws.delete_run("d", "renamed")
    assert cache_files(ws) == []
    ws.add_run("d", io.read_run(run), name="sys")
    ws.load_ranked("d", "sys")
    ws.delete_collection("d")
    assert cache_files(ws) == []


def test_stale_files_are_removed_when_the_workspace_opens(ws, tmp_path):
    ws.load_ranked("c", "sys")
    folder = workspace_module.cache_folder(ws.path)
    (folder / "join-0-0-none.arrow").write_bytes(b"old")
    ws.close()
    with Workspace(ws.path) as again:
        assert len(cache_files(again)) == 2 and not (folder / "join-0-0-none.arrow").exists()


def test_cache_files_count_in_the_usage_and_stay_within_the_quota(tmp_path, files):
    run, qrels, _ = files
    path = tmp_path / "q.duckdb"
    with Workspace(path) as ws:
        ws.create_collection("c", io.read_qrels(qrels))
        ws.add_run("c", io.read_run(run), name="sys")
        data = ws.usage().bytes
        ws.load_ranked("c", "sys")
        used = ws.usage()
        assert used.bytes == data and used.cache_bytes == sum(
            p.stat().st_size for p in workspace_module.cache_folder(path).iterdir()) > 0
    with Workspace(path, quota=Quota(bytes=data + 100)) as tight:  # opening trims the cache to the room left
        assert tight.usage().cache_bytes == 0
        want = rank(io.read_run(run), io.read_qrels(qrels), name="sys")
        assert_same(tight.load_ranked("c", "sys"), want)  # computed, not written: no room
        assert tight.usage().cache_bytes == 0


def test_a_read_only_view_reads_the_cache_and_never_writes_it(ws, files, monkeypatch):
    run, qrels, _ = files
    shutil.rmtree(workspace_module.cache_folder(ws.path))   # the files written when the run was stored
    view = ws.read_only_view()
    want = rank(io.read_run(run), io.read_qrels(qrels), name="sys")
    assert_same(view.load_ranked("c", "sys"), want)
    assert cache_files(ws) == []
    ws.load_ranked("c", "sys")
    folder = workspace_module.cache_folder(ws.path)
    (folder / "join-0-0-none.arrow").write_bytes(b"a stale file a read-only view must leave alone")
    monkeypatch.setattr(cached_module, "rank", lambda *a, **k: pytest.fail("not read from the cache"))
    assert_same(view.load_ranked("c", "sys"), want)
    assert (folder / "join-0-0-none.arrow").exists()
    with pytest.raises(MetricsError):
        view.delete_run("c", "sys")


def test_a_workspace_opened_read_only_reads_the_cache(ws, files, monkeypatch):
    run, qrels, _ = files
    ws.load_ranked("c", "sys")
    ws.close()
    monkeypatch.setattr(cached_module, "rank", lambda *a, **k: pytest.fail("not read from the cache"))
    with Workspace(ws.path, read_only=True) as reader:
        assert_same(reader.load_ranked("c", "sys"), rank(io.read_run(run), io.read_qrels(qrels), name="sys"))


def test_two_workspace_objects_on_one_file_share_the_cache_safely(ws, files, monkeypatch):
    run, qrels, _ = files
    other = Workspace(ws.path)
    try:
        first = other.load_ranked("c", "sys")
        monkeypatch.setattr(cached_module, "rank", lambda *a, **k: pytest.fail("not read from the cache"))
        assert_same(ws.load_ranked("c", "sys"), first)
        monkeypatch.undo()
        ws.delete_run("c", "sys")
        assert cache_files(ws) == []
        with pytest.raises(MetricsError, match="no run named"):
            other.load_ranked("c", "sys")
        ws.add_run("c", io.read_run(run), name="sys")
        with pytest.raises(MetricsError, match="changed while it was being read"):
            ws.load_ranked("c", "sys", digest="another digest")
        with pytest.raises(MetricsError, match="judgments of 'c' changed"):
            other.load_ranked("c", "sys", qrels_digest="another digest")
        with pytest.raises(MetricsError, match="judgments of 'c' changed"):
            other.load_ranked("c", "sys", inferred=True, proxy_digest="another digest")
        info = ws.collections()[0]
        assert other.load_ranked("c", "sys", digest=info.runs[0].digest, qrels_digest=info.qrels_digest,
                                 inferred=True, proxy_digest=info.proxy_digest).inferred.any()
    finally:
        other.close()


def test_the_coded_run_layout_upgrades_an_old_file_line_for_line(tmp_path):
    path = schema_1_file(tmp_path)
    with Workspace(path) as ws:
        run = ws.load_run("old", "bm25")
        assert run.table.to_pylist() == [
            {"qid": "q1", "docno": "d1", "score": 2.5, "rank": 1, "tag": "bm25"},
            {"qid": "q1", "docno": "doc22", "score": 1.5, "rank": 2, "tag": "bm25"}]
        assert ws.stats()["run_lines"] == 2
