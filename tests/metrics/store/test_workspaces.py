"""Private workspaces of shared mode: tokens, read-only links, shared samples, quotas, TTL, the LRU.

Each test tries to break the isolation the way a visitor could: another's token, a forged
one, a view link used for writing, a change to a shared sample.
"""
from __future__ import annotations

import base64
import hashlib
import inspect
import os
import secrets
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

import metrics
from metrics import settings
from metrics.errors import MetricsError
from metrics.store import (
    QuotaExceeded,
    ReadOnlyWorkspace,
    Sample,
    Usage,
    Workspace,
    WorkspaceExpired,
    WorkspaceNotFound,
    WorkspaceRegistry,
    view_token_of,
)
from metrics.store.workspace import cache_folder

ROOT = Path(__file__).resolve().parents[3]
DAY = 86400.0

QRELS = "q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def write_run(path: Path, tag: str, docs=("d1", "d2", "d3")) -> Path:
    path.write_text("".join(f"q1 Q0 {d} {i + 1} {10 - i} {tag}\n" for i, d in enumerate(docs)))
    return path


@pytest.fixture
def sample_folders(tmp_path) -> list[Sample]:
    """Two small samples: 'legal' (two runs, topics, baseline bm25) and 'web' (one run)."""
    samples = []
    for name, runs in (("legal", ("bm25", "dense")), ("web", ("lexical",))):
        folder = tmp_path / "samples" / name
        folder.mkdir(parents=True)
        (folder / "qrels.txt").write_text(QRELS)
        (folder / "topics.tsv").write_text("qid\ttext\nq1\tfirst topic\nq2\tsecond topic\n")
        for i, run in enumerate(runs):
            write_run(folder / f"{run}.run", run, docs=("d1", "d2", "d3")[i:] + ("d9",))
        samples.append(Sample(name, folder, "bm25" if name == "legal" else None))
    return samples


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def manager(tmp_path, sample_folders, clock):
    made = []

    def make(samples=True, **env) -> WorkspaceRegistry:
        config = settings.load({"NDCG_LAB_MODE": "shared", "NDCG_LAB_HOME": str(tmp_path / "home"), **env})
        made.append(WorkspaceRegistry(config, samples=sample_folders if samples else (), clock=clock))
        return made[-1]

    yield make
    for m in made:
        m.close()


def names(ws: Workspace) -> list[str]:
    return [c.name for c in ws.collections()]


def run_names(ws: Workspace, collection: str) -> list[str]:
    return [r.name for r in ws.runs(collection)]


# -- tokens ---------------------------------------------------------------------------

def test_tokens_are_random_192_bits_and_only_their_hashes_are_stored(manager, tmp_path):
    m = manager()
    accesses = [m.create() for _ in range(20)]
    tokens = [a.token for a in accesses] + [a.view_token for a in accesses]
    assert len(set(tokens)) == 40
    for token in tokens:
        assert len(base64.urlsafe_b64decode(token)) * 8 == 192  # at least 128 bits asked
    accesses[0].workspace.create_collection("notes", QRELS.encode())
    m.close()
    home = tmp_path / "home"
    files = [p for p in home.rglob("*") if p.is_file()]
    assert files
    for path in files:
        content = path.read_bytes()
        for token in tokens:
            assert token not in str(path.relative_to(home)) and token.encode() not in content
    with sqlite3.connect(home / "shared" / "registry.sqlite3") as db:
        stored = {row[0] for row in db.execute("SELECT hash FROM tokens")}
    assert stored == {hashlib.sha256(t.encode()).hexdigest() for t in tokens}


def test_a_token_opens_its_own_workspace_and_nothing_else(manager):
    m = manager()
    a, b = m.create(), m.create()
    a.workspace.create_collection("a-private", QRELS.encode())
    b.workspace.create_collection("b-private", QRELS.encode())
    assert names(m.open(a.token).workspace) == ["legal", "web", "a-private"]
    assert names(m.open(b.token).workspace) == ["legal", "web", "b-private"]
    with pytest.raises(MetricsError, match="no collection named 'b-private'"):
        a.workspace.runs("b-private")
    m.close()
    again = manager()  # a restart of the server: the link still works
    assert names(again.open(a.token).workspace) == ["legal", "web", "a-private"]


def test_wrong_and_forged_tokens_are_refused_alike(manager):
    m = manager()
    a = m.create()
    a.workspace.create_collection("secret", QRELS.encode())
    workspace_id = Path(a.workspace.path).stem
    flipped = ("B" if a.token[5] != "B" else "C").join((a.token[:5], a.token[6:]))
    forged = [secrets.token_urlsafe(24), "", " ", "../../../etc/passwd", workspace_id, f"{workspace_id}.duckdb",
              hashlib.sha256(a.token.encode()).hexdigest(), a.token[:-1], a.token + "A", flipped,
              a.token.swapcase(), f" {a.token}", f"{a.token}\n", a.token + "==", view_token_of(a.view_token),
              None, 123, a.token.encode()]
    messages = set()
    for token in forged:
        with pytest.raises(WorkspaceNotFound) as caught:
            m.open(token)
        assert not isinstance(caught.value, WorkspaceExpired)
        messages.add(str(caught.value))
    assert len(messages) == 1  # one answer for all: nothing tells a near miss from a wild guess
    assert names(m.open(a.token).workspace)[-1] == "secret"


def test_modes_keep_their_own_entry_points(manager, tmp_path):
    shared = manager()
    with pytest.raises(MetricsError, match="shared mode"):
        shared.personal()
    personal = WorkspaceRegistry(settings.load({"NDCG_LAB_HOME": str(tmp_path / "p")}))
    with pytest.raises(MetricsError, match="only in shared mode"):
        personal.create()
    with pytest.raises(MetricsError, match="only in shared mode"):
        personal.open("x" * 32)
    personal.close()


# -- read-only links ------------------------------------------------------------------

def _call_with_placeholders(method):
    """Call a workspace method with placeholder arguments (the read-only guard comes first)."""
    params = [p for p in inspect.signature(method).parameters.values()
              if p.default is inspect.Parameter.empty and p.kind == p.POSITIONAL_OR_KEYWORD]
    return method(*["legal"] * len(params))


def test_a_view_link_reads_everything_and_changes_nothing(manager):
    m = manager()
    owner = m.create()
    owner.workspace.add_run("legal", write_run(Path(owner.workspace.path).parent / "extra.run", "extra"))
    view = m.open(owner.view_token)
    assert view.read_only and view.view_token is None and not owner.read_only
    assert view.workspace.collections() == owner.workspace.collections()
    assert view.workspace.load_run("legal", "extra").table.equals(owner.workspace.load_run("legal", "extra").table)
    writes = [name for name, member in inspect.getmembers(Workspace) if getattr(member, "changes_workspace", False)]
    assert {"add_run", "delete_run", "rename_run", "create_collection", "delete_collection", "rename_collection",
            "replace_collection", "restore_shared", "set_qrels", "set_proxy", "set_topics", "set_docs",
            "set_baseline"} <= set(writes)
    before = (view.workspace.stats(), view.workspace.collections())
    for name in writes:
        with pytest.raises(ReadOnlyWorkspace, match="read-only"):
            _call_with_placeholders(getattr(view.workspace, name))
    with pytest.raises(ReadOnlyWorkspace):
        m.reload_sample(view.workspace, "legal")
    assert (owner.workspace.stats(), owner.workspace.collections()) == before
    view.workspace.close()  # closing a view leaves the owner's workspace open
    assert run_names(owner.workspace, "legal")[-1] == "extra"


# -- shared samples, copy on write ----------------------------------------------------

def _file_digest(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_changes_to_a_sample_go_into_the_visitors_copy(manager, tmp_path):
    m = manager()
    a, b = m.create(), m.create()
    ws = a.workspace
    listed = ws.collections()
    assert [(c.name, c.shared, c.n_runs, c.baseline) for c in listed] == [("legal", True, 2, "bm25"),
                                                                           ("web", True, 1, None)]
    samples_file = next((tmp_path / "home" / "shared").glob("samples-*.duckdb"))
    pristine = (_file_digest(samples_file), b.workspace.collections())
    ws.add_run("legal", write_run(tmp_path / "mine.run", "mine"))
    ws.rename_run("legal", "dense", "dense (tuned)")
    ws.set_baseline("legal", "mine")
    ws.set_topics("legal", None)
    ws.delete_run("web", "lexical")
    ws.rename_collection("web", "my web")
    assert [(c.name, c.shared, c.n_runs, c.baseline, c.n_topics) for c in ws.collections()] == [
        ("legal", False, 3, "mine", 0), ("my web", False, 0, None, 2)]
    assert run_names(ws, "legal") == ["bm25", "dense (tuned)", "mine"]
    assert not ws.has_collection("web")
    assert (_file_digest(samples_file), b.workspace.collections()) == pristine
    assert run_names(m.open(b.token).workspace, "legal") == ["bm25", "dense"]
    # the copy holds the sample's rows as they were
    assert ws.load_run("legal", "bm25").table.equals(b.workspace.load_run("legal", "bm25").table)
    assert ws.load_qrels("legal").digest == b.workspace.load_qrels("legal").digest


def test_setting_what_the_sample_already_says_makes_no_copy(manager):
    ws = manager().create().workspace
    ws.set_baseline("legal", "bm25")
    assert ws.collections()[0].shared and ws.stats()["collections"] == 0
    with pytest.raises(MetricsError, match="no run named 'nope'"):
        ws.set_baseline("legal", "nope")


def test_deleting_a_sample_hides_it_and_reload_brings_it_back(manager, tmp_path):
    m = manager()
    ws, other = m.create().workspace, m.create().workspace
    ws.delete_collection("web")
    assert names(ws) == ["legal"] and names(other) == ["legal", "web"]
    with pytest.raises(MetricsError, match="no collection named 'web'"):
        ws.runs("web")
    ws.create_collection("web", QRELS.encode())  # the name is free again here
    assert [(c.name, c.shared) for c in ws.collections()] == [("legal", True), ("web", False)]
    assert m.reload_sample(ws, "web") == []
    assert [(c.name, c.shared) for c in ws.collections()] == [("legal", True), ("web", True)]
    # runs added to a sample survive its reload; the sample's own runs come back
    ws.add_run("legal", write_run(tmp_path / "mine.run", "mine"))
    ws.delete_run("legal", "bm25")
    kept = m.reload_sample(ws, "legal")
    assert [r.name for r in kept] == ["mine"]
    assert run_names(ws, "legal") == ["bm25", "dense", "mine"] and ws.baseline("legal") == "bm25"
    assert names(other) == ["legal", "web"] and run_names(other, "legal") == ["bm25", "dense"]


def test_a_sample_name_cannot_be_taken_while_it_shows(manager):
    ws = manager().create().workspace
    with pytest.raises(MetricsError, match="already exists"):
        ws.create_collection("legal", QRELS.encode())
    ws.create_collection("mine", QRELS.encode())
    with pytest.raises(MetricsError, match="already exists"):
        ws.rename_collection("mine", "web")
    with pytest.raises(MetricsError, match="no shared collection named 'mine'"):
        ws.restore_shared("mine")


def test_the_bundled_samples_are_shared(tmp_path):
    folder = ROOT / "ndcg_lab" / "sample_data"
    samples = [Sample("legal", folder / "legal", "bm25"), Sample("web", folder / "web")]
    m = WorkspaceRegistry(settings.load({"NDCG_LAB_MODE": "shared", "NDCG_LAB_HOME": str(tmp_path)}), samples=samples)
    try:
        ws = m.create().workspace
        legal = ws.collections()[0]
        assert (legal.name, legal.baseline, legal.n_runs, legal.shared) == ("legal", "bm25", 4, True)
        assert legal.proxy is not None and legal.n_topics > 0 and legal.n_docs > 0
        run = ws.load_run("legal", "bm25")
        assert run.digest == hashlib.sha256((folder / "legal" / "bm25.run").read_bytes()).hexdigest()
    finally:
        m.close()


# -- personal mode ---------------------------------------------------------------------

def test_personal_mode_is_one_workspace_holding_the_samples(tmp_path, sample_folders):
    config = settings.load({"NDCG_LAB_HOME": str(tmp_path / "p")})
    m = WorkspaceRegistry(config, samples=sample_folders)
    ws = m.personal()
    assert m.personal() is ws and ws.path == (tmp_path / "p" / "workspace.duckdb").resolve()
    assert [(c.name, c.shared) for c in ws.collections()] == [("legal", False), ("web", False)]
    ws.add_run("legal", write_run(tmp_path / "mine.run", "mine"))
    assert [r.name for r in m.reload_sample(ws, "legal")] == ["mine"]
    assert run_names(ws, "legal") == ["bm25", "dense", "mine"]
    with pytest.raises(MetricsError, match="no sample named 'trec'"):
        m.reload_sample(ws, "trec")
    ws.delete_collection("web")
    assert m.personal(tmp_path / "p") is ws  # the folder names the same file
    other = m.personal(tmp_path / "elsewhere.duckdb")  # `--workspace PATH`
    assert other is not ws and names(other) == ["legal", "web"]
    m.close()
    again = WorkspaceRegistry(config, samples=sample_folders)  # not empty: the samples are not loaded again
    assert names(again.personal()) == ["legal"]
    again.close()


# -- quotas ---------------------------------------------------------------------------

def _line_bytes(qid: str, docno: str, tag: str) -> int:
    return len(qid) + len(docno) + len(tag) + 16  # score and rank, 8 bytes each


def test_quota_counts_data_bytes_and_refuses_before_writing(manager, tmp_path):
    lines = sum(len(q) + len(d) + 8 for q, d in (("q1", "d1"), ("q1", "d2"), ("q2", "d3")))
    collection = len("c") + 64 + len("qrels") + len("<bytes>") + 64  # the collection and its qrels link
    run_lines = sum(_line_bytes("q1", d, "bm25") for d in ("d1", "d2", "d3"))
    run_link = len("bm25") + len("bm25.run") + 64
    m = manager(samples=False, NDCG_LAB_QUOTA_BYTES=str(lines + collection + run_lines + run_link + 10))
    ws = m.create().workspace
    ws.create_collection("c", QRELS.encode())
    assert ws.usage().bytes == lines + collection
    ws.add_run("c", write_run(tmp_path / "bm25.run", "bm25"))
    assert ws.usage() == Usage(lines + collection + run_lines + run_link, 1)
    before = (ws.stats(), ws.collections())
    with pytest.raises(QuotaExceeded) as caught:
        ws.add_run("c", write_run(tmp_path / "other.run", "other"))
    message = str(caught.value)
    assert message.startswith("other.run: the workspace would hold") and "quota" in message and "\n" not in message
    assert (ws.stats(), ws.collections()) == before
    with pytest.raises(QuotaExceeded):  # linking stored content again costs its links, not its lines
        ws.create_collection("c2", QRELS.encode())
    big = manager(samples=False).open(m.create().token).workspace  # no quota: see what linking costs
    big.create_collection("c", QRELS.encode())
    big.add_run("c", tmp_path / "bm25.run")
    big.create_collection("c2", QRELS.encode())
    big.add_run("c2", tmp_path / "bm25.run")
    big.set_topics("c", pd.DataFrame({"qid": ["q1"], "text": ["abc"]}))
    second = len("c2") + 64 + len("qrels") + len("<bytes>") + 64 + run_link
    topics = len("q1") + len("abc") + 8
    used = big.usage()   # the runs' ranked cache, written as they were stored, is counted apart
    assert (used.bytes, used.runs) == (lines + collection + run_lines + run_link + second + topics, 2)


def test_quota_counts_runs(manager, tmp_path):
    ws = manager(samples=False, NDCG_LAB_QUOTA_RUNS="2").create().workspace
    ws.create_collection("c", QRELS.encode())
    for tag in ("r1", "r2"):
        ws.add_run("c", write_run(tmp_path / f"{tag}.run", tag))
    with pytest.raises(QuotaExceeded, match="3 runs, over its quota of 2"):
        ws.add_run("c", write_run(tmp_path / "r3.run", "r3"))
    assert run_names(ws, "c") == ["r1", "r2"]


def test_a_quota_counts_what_the_visitor_added_not_the_samples_they_changed(manager, tmp_path):
    m = manager(NDCG_LAB_QUOTA_RUNS="3")
    a = m.create()
    for tag in ("x", "y", "z"):                     # legal's 2 shared runs, copied on write, do not count
        a.workspace.add_run("legal", write_run(tmp_path / f"{tag}.run", tag))
    assert a.workspace.usage().runs == 3
    with pytest.raises(QuotaExceeded, match="4 runs, over its quota of 3"):
        a.workspace.add_run("legal", write_run(tmp_path / "w.run", "w"))
    assert run_names(a.workspace, "legal") == ["bm25", "dense", "x", "y", "z"]
    run_bytes = sum(_line_bytes("q1", d, "x") for d in ("d1", "d2", "d3")) + len("x") + len("x.run") + 64
    fresh = manager(samples=True).create().workspace      # no quota: the bytes of one added run
    fresh.add_run("legal", tmp_path / "x.run")
    assert fresh.usage().bytes == run_bytes and fresh.usage().runs == 1
    m.close()
    tight = manager(NDCG_LAB_QUOTA_RUNS="1")  # the operator lowers the quota: over it, but deleting works
    ws = tight.open(a.token).workspace
    ws.delete_run("legal", "x")
    ws.rename_run("legal", "dense", "dense2")
    with pytest.raises(QuotaExceeded):
        ws.add_run("legal", tmp_path / "w.run")


def test_runs_added_together_are_stored_all_or_none_against_each_quota(manager, tmp_path):
    one = sum(_line_bytes("q1", d, "r1") for d in ("d1", "d2", "d3")) + len("r1") + len("r1.run") + 64
    for env in ({"NDCG_LAB_QUOTA_RUNS": "2"}, {"NDCG_LAB_QUOTA_BYTES": str(2 * one + one // 2)}):
        ws = manager(**env).create().workspace
        ws.add_run("legal", write_run(tmp_path / "r0.run", "r0"))
        with pytest.raises(QuotaExceeded, match="r2.run: the workspace would hold"):
            ws.add_runs("legal", [metrics.io.read_run(write_run(tmp_path / f"r{i}.run", f"r{i}")) for i in (1, 2)])
        assert run_names(ws, "legal") == ["bm25", "dense", "r0"]           # nothing of the two
        infos = ws.add_runs("legal", [metrics.io.read_run(tmp_path / "r1.run")])
        assert [i.name for i in infos] == ["r1"] and run_names(ws, "legal")[-1] == "r1"


# -- time to live ---------------------------------------------------------------------

def test_idle_workspaces_expire_and_active_ones_stay(manager, clock, tmp_path):
    m = manager()
    idle, active = m.create(), m.create()
    idle_file = Path(idle.workspace.path)
    clock.now += 6 * DAY
    active.workspace.create_collection("work", QRELS.encode())  # any use counts as a visit
    clock.now += 1 * DAY + 60
    assert m.sweep() == [idle_file.stem]
    assert not idle_file.exists() and not Path(f"{idle_file}.wal").exists()
    with pytest.raises(WorkspaceExpired, match="removed after 7 days"):
        m.open(idle.token)
    with pytest.raises(WorkspaceExpired):
        m.open(idle.view_token)
    with pytest.raises(WorkspaceExpired):  # a page still holding the workspace
        idle.workspace.collections()
    assert names(m.open(active.token).workspace)[-1] == "work"
    m.close()
    clock.now += 2 * DAY  # a restart: the last access was recorded on disk
    later = manager()
    assert later.sweep() == []
    assert names(later.open(active.token).workspace)[-1] == "work"
    clock.now += 31 * DAY + 7 * DAY
    later.sweep()  # the tombstone goes too: an old link is then simply unknown
    with pytest.raises(WorkspaceNotFound) as caught:
        later.open(idle.token)
    assert not isinstance(caught.value, WorkspaceExpired)


def test_an_idle_workspace_opened_after_its_ttl_is_expired_without_a_sweep(manager, clock):
    m = manager(NDCG_LAB_TTL="1h")
    a = m.create()
    clock.now += 3601
    with pytest.raises(WorkspaceExpired, match="0.0416667 days|removed after"):
        m.open(a.token)
    assert not Path(a.workspace.path).exists()


def test_files_the_registry_does_not_know_are_removed(manager, clock, tmp_path):
    m = manager(samples=False)
    kept = Path(m.create().workspace.path)
    folder = kept.parent
    stray, fresh = folder / "0123abcd.duckdb", folder / "4567cdef.duckdb"
    for path, age in ((stray, 2 * 3600), (fresh, 60)):  # fresh: perhaps being made by another process
        with Workspace(path):
            pass
        os.utime(path, (clock.now - age, clock.now - age))
    m.sweep()
    assert not stray.exists() and fresh.exists() and kept.exists()


# -- open files -----------------------------------------------------------------------

def test_open_files_are_bounded_and_closed_ones_reopen(manager, tmp_path):
    m = manager(NDCG_LAB_OPEN_WORKSPACES="2")
    visitors = [m.create() for _ in range(6)]
    for i, v in enumerate(visitors):
        v.workspace.create_collection(f"c{i}", QRELS.encode())
        assert sum(x.workspace.is_open for x in visitors) <= 2
    for i, v in enumerate(visitors):  # each reopens on use, holding what it held
        assert names(v.workspace) == ["legal", "web", f"c{i}"]
        assert sum(x.workspace.is_open for x in visitors) <= 2


def test_shared_samples_rank_without_a_cache_and_an_expired_workspace_takes_its_cache(manager, clock, tmp_path,
                                                                                       sample_folders):
    m = manager()
    access = m.create()
    ws = access.workspace
    sample = sample_folders[0].folder
    expected = metrics.evaluate(sample / "qrels.txt", sample / "bm25.run", ["nDCG@10", "AP"])
    values = metrics.evaluate_ranked(ws.load_ranked("legal", "bm25"), ["nDCG@10", "AP"])  # through the base
    assert values["AP"].tolist() == expected[expected["measure"] == "AP"]["value"].tolist()
    folder = cache_folder(Path(ws.path))
    assert not folder.exists() and not list(tmp_path.rglob("*.cache"))  # the read-only samples write none
    ws.add_run("legal", write_run(tmp_path / "mine.run", "mine"))
    ws.load_ranked("legal", "mine")
    assert len(list(folder.iterdir())) == 2
    view = m.open(access.view_token).workspace
    assert view.load_ranked("legal", "mine").name == "mine"
    clock.now += 8 * DAY
    assert m.sweep() == [Path(ws.path).stem]
    assert not folder.exists()


def test_a_second_server_process_on_one_home_serves_nothing(tmp_path):
    """A shared server holds a lock on its NDCG_LAB_HOME: a second process on the same folder is
    refused (in one line, naming no path) until the first ends, however it ends."""
    import signal
    import subprocess
    import sys

    from metrics.settings import Settings
    from metrics.store import WorkspaceRegistry

    home = tmp_path / "home"
    first = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from metrics.settings import Settings; "
         "from metrics.store import WorkspaceRegistry; from pathlib import Path; "
         "WorkspaceRegistry(Settings(mode='shared', home=Path(sys.argv[1]))); print('ready', flush=True); "
         "time.sleep(120)",
         str(home)], stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[3])
    try:
        assert first.stdout.readline().strip() == "ready"
        with pytest.raises(MetricsError, match="another nDCG Lab server is serving this workspace folder") as caught:
            WorkspaceRegistry(Settings(mode="shared", home=home))
        assert str(home) not in str(caught.value)
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    second = WorkspaceRegistry(Settings(mode="shared", home=home))        # the lock died with the process
    assert second.create().token
    WorkspaceRegistry(Settings(mode="shared", home=home))                 # a second manager of this process shares it


# -- a new visitor before their first change --------------------------------------------

def workspace_files(tmp_path) -> list[Path]:
    return sorted((tmp_path / "home" / "shared" / "workspaces").glob("*.duckdb"))


def registry_rows(m: WorkspaceRegistry) -> int:
    return len(m._query_all("SELECT id FROM workspaces", []))


def test_a_pristine_visitor_reads_what_a_new_workspace_shows_and_nothing_is_made(manager, tmp_path):
    from metrics.store import Pristine

    m = manager()
    made = []
    pristine = Pristine(m.blank(), lambda: made.append(m.create()) or made[-1])
    new = m.create().workspace                                    # a new visitor's workspace, for comparison
    before = (workspace_files(tmp_path), registry_rows(m))
    assert pristine.collections() == new.collections() and all(c.shared for c in pristine.collections())
    assert pristine.runs("legal") == new.runs("legal") and pristine.baseline("legal") == "bm25"
    assert pristine.load_run("legal", "dense").table.equals(new.load_run("legal", "dense").table)
    assert pristine.load_topics("legal").equals(new.load_topics("legal"))
    assert pristine.load_ranked("legal", "bm25").n_queries == new.load_ranked("legal", "bm25").n_queries
    assert pristine.usage() == new.usage() and pristine.quota == new.quota
    assert not pristine.read_only and pristine.access is None and made == []
    assert (workspace_files(tmp_path), registry_rows(m)) == before


def test_the_first_change_creates_the_workspace_once_and_lands_there(manager, tmp_path):
    from metrics.store import Pristine

    m = manager()
    made = []
    pristine = Pristine(m.blank(), lambda: made.append(m.create()) or made[-1])
    run = write_run(tmp_path / "mine.run", "mine")
    info = pristine.add_run("legal", metrics.read_run(run))
    assert len(made) == 1 and pristine.access is made[0] and info.name == "mine"
    assert len(workspace_files(tmp_path)) == 1 and registry_rows(m) == 1
    assert run_names(m.open(made[0].token).workspace, "legal") == ["bm25", "dense", "mine"]
    pristine.set_baseline("legal", "mine")                          # later changes go there too
    assert len(made) == 1 and m.open(made[0].token).workspace.baseline("legal") == "mine"
    assert run_names(pristine, "legal") == ["bm25", "dense", "mine"]
    other = Pristine(m.blank(), m.create)                          # the blank is shared: untouched
    assert run_names(other, "legal") == ["bm25", "dense"] and other.baseline("legal") == "bm25"


def test_every_change_of_a_workspace_goes_through_the_first_change(manager):
    """The methods a Pristine sends to a new workspace are exactly those a read-only one refuses."""
    from metrics.store import Pristine

    m = manager()
    changes = {name for name, f in inspect.getmembers(Workspace, inspect.isfunction)
               if getattr(f, "changes_workspace", False)}
    assert {"add_run", "create_collection", "set_baseline", "restore_shared", "delete_run", "set_qrels"} <= changes
    made = []

    def create():
        made.append(1)
        raise RuntimeError("a workspace would be made here")

    for name in changes:
        with pytest.raises(RuntimeError, match="would be made"):
            getattr(Pristine(m.blank(), create), name)("legal", "x")
    assert len(made) == len(changes)
    blank = m.blank()
    with pytest.raises(ReadOnlyWorkspace):                         # nothing reaches the blank itself
        blank.create_collection("mine", QRELS.encode())


def test_threads_changing_a_pristine_workspace_at_once_create_one(manager, tmp_path):
    import threading

    from metrics.store import Pristine

    m = manager()
    made = []
    gate = threading.Barrier(4, timeout=30)

    def create():
        made.append(m.create())
        return made[-1]

    pristine = Pristine(m.blank(), create)
    runs = [metrics.read_run(write_run(tmp_path / f"r{i}.run", f"r{i}", docs=(f"d{i}",))) for i in range(4)]

    def upload(run):
        gate.wait()
        pristine.add_run("legal", run)

    threads = [threading.Thread(target=upload, args=(r,)) for r in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(made) == 1 and len(workspace_files(tmp_path)) == 1 and registry_rows(m) == 1
    assert sorted(run_names(m.open(made[0].token).workspace, "legal")) == ["bm25", "dense", "r0", "r1", "r2", "r3"]
