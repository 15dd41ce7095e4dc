"""Real threads on one manager, as Streamlit runs its sessions: reloads while others read,
visitors side by side with the open-file bound forcing reopens, forged tokens meanwhile."""
from __future__ import annotations

import secrets
import threading
from pathlib import Path

import pytest

from metrics import settings
from metrics.errors import MetricsError
from metrics.store import ReadOnlyWorkspace, Sample, WorkspaceNotFound, WorkspaceRegistry

QRELS = "q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 1\n"


def write_run(path: Path, tag: str, n: int = 200) -> Path:
    path.write_text("".join(f"q{i % 7} Q0 d{i} {i + 1} {n - i} {tag}\n" for i in range(n)))
    return path


@pytest.fixture
def samples(tmp_path) -> list[Sample]:
    out = []
    for name, runs in (("legal", ("bm25", "dense", "splade")), ("web", ("lexical",))):
        folder = tmp_path / "samples" / name
        folder.mkdir(parents=True)
        (folder / "qrels.txt").write_text(QRELS)
        for run in runs:
            write_run(folder / f"{run}.run", run)
        out.append(Sample(name, folder, "bm25" if name == "legal" else None))
    return out


def run_threads(targets, *, stop: threading.Event | None = None) -> list[BaseException]:
    """Start every target, join them all; the exceptions they raised (pytest sees none of them)."""
    errors: list[BaseException] = []

    def guarded(target):
        try:
            target()
        except BaseException as exc:  # noqa: BLE001 - reported to the test below
            errors.append(exc)
            if stop is not None:
                stop.set()

    threads = [threading.Thread(target=guarded, args=(t,)) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    return errors


def reader(ws, expected_runs: list[str], stop: threading.Event, seen: list):
    """What a page does: list the collections, then load each run of legal by its digest."""
    def read():
        while not stop.is_set():
            legal = {c.name: c for c in ws.collections()}["legal"]  # KeyError if it is ever missing
            assert [r.name for r in legal.runs] == expected_runs
            for info in legal.runs:
                run = ws.load_run("legal", info.name, digest=info.digest)
                assert len(run) == info.n_lines
            assert ws.load_qrels("legal").digest == legal.qrels_digest
            seen.append(1)
    return read


def test_a_personal_sample_reload_never_shows_a_missing_or_half_collection(tmp_path, samples):
    m = WorkspaceRegistry(settings.load({"NDCG_LAB_HOME": str(tmp_path / "home")}), samples=samples)
    ws = m.personal()
    ws.add_run("legal", write_run(tmp_path / "mine.run", "mine"))
    stop, seen = threading.Event(), []

    def reload():
        try:
            for _ in range(25):
                assert [r.name for r in m.reload_sample(ws, "legal")] == ["mine"]
        finally:
            stop.set()

    expected = ["bm25", "dense", "splade", "mine"]
    errors = run_threads([reload] + [reader(ws, expected, stop, seen) for _ in range(4)], stop=stop)
    m.close()
    assert errors == [] and len(seen) > 0


def test_the_harness_catches_a_reload_made_of_separate_steps(tmp_path, samples):
    """The readers above do see the race when a reload is delete, create and add in turn."""
    m = WorkspaceRegistry(settings.load({"NDCG_LAB_HOME": str(tmp_path / "home")}), samples=samples)
    ws = m.personal()
    content = samples[0].read()
    stop, seen = threading.Event(), []

    def reload_in_steps():
        for _ in range(300):
            if stop.is_set():
                return
            ws.delete_collection("legal")
            ws.create_collection("legal", content["qrels"])
            for run in content["runs"]:
                ws.add_run("legal", run)
        stop.set()

    errors = run_threads([reload_in_steps] + [reader(ws, ["bm25", "dense", "splade"], stop, seen)
                                              for _ in range(3)], stop=stop)
    m.close()
    assert errors and all(isinstance(e, (KeyError, AssertionError, MetricsError)) for e in errors)


def test_a_shared_sample_reload_while_the_visitor_and_others_read(tmp_path, samples):
    m = WorkspaceRegistry(settings.load({"NDCG_LAB_MODE": "shared", "NDCG_LAB_HOME": str(tmp_path / "home")}),
                   samples=samples)
    a, b = m.create(), m.create()
    a.workspace.add_run("legal", write_run(tmp_path / "mine.run", "mine"))
    view = m.open(a.view_token).workspace
    stop, seen = threading.Event(), []

    def reload():
        try:
            for _ in range(20):
                assert [r.name for r in m.reload_sample(a.workspace, "legal")] == ["mine"]
        finally:
            stop.set()

    def view_cannot_write():
        while not stop.wait(0.002):  # a pure-Python loop without a pause would hog the GIL
            with pytest.raises(ReadOnlyWorkspace):
                view.add_run("legal", tmp_path / "mine.run")

    mine = ["bm25", "dense", "splade", "mine"]
    errors = run_threads([reload, view_cannot_write, reader(a.workspace, mine, stop, seen),
                          reader(view, mine, stop, seen),
                          reader(b.workspace, ["bm25", "dense", "splade"], stop, seen)], stop=stop)
    m.close()
    assert errors == [] and len(seen) > 0


def test_visitors_side_by_side_never_see_each_other(tmp_path, samples):
    m = WorkspaceRegistry(settings.load({"NDCG_LAB_MODE": "shared", "NDCG_LAB_HOME": str(tmp_path / "home"),
                                  "NDCG_LAB_OPEN_WORKSPACES": "2"}), samples=samples)
    stop = threading.Event()
    tokens: dict[int, str] = {}

    def visitor(i: int):
        def visit():
            access = m.create()
            tokens[i] = access.token
            ws = access.workspace
            ws.create_collection(f"private-{i}", QRELS.encode())
            for round_ in range(8):
                ws.add_run(f"private-{i}", write_run(tmp_path / f"v{i}-{round_}.run", f"v{i}-{round_}", n=50))
                if round_ % 3 == 0:
                    ws.add_run("legal", tmp_path / f"v{i}-{round_}.run")  # into this visitor's copy only
                again = m.open(access.token).workspace  # as a reload of the page does
                assert [c.name for c in again.collections()] == ["legal", "web", f"private-{i}"]
                assert [r.name for r in again.runs(f"private-{i}")] == [f"v{i}-{r}" for r in range(round_ + 1)]
                assert [r.name for r in again.runs("legal")][3:] == [f"v{i}-{r}" for r in range(0, round_ + 1, 3)]
                for j in range(6):
                    if j != i:
                        with pytest.raises(MetricsError, match="no collection named"):
                            again.runs(f"private-{j}")
        return visit

    def forger():
        while not stop.wait(0.002):
            with pytest.raises(WorkspaceNotFound):
                m.open(secrets.token_urlsafe(24))

    def sweeper():
        while not stop.wait(0.002):
            assert m.sweep() == []

    visitors = [visitor(i) for i in range(6)]

    def visitors_then_stop():
        try:
            assert run_threads(visitors) == []
        finally:
            stop.set()

    errors = run_threads([visitors_then_stop, forger, sweeper], stop=stop)
    assert errors == []
    assert len(set(tokens.values())) == 6
    for i, token in tokens.items():  # and after a restart, each link still opens only its own
        m.close()
        m = WorkspaceRegistry(m.settings, samples=samples)
        assert [c.name for c in m.open(token).workspace.collections()] == ["legal", "web", f"private-{i}"]
    m.close()


def test_visitors_arriving_together_create_their_workspaces_at_once(tmp_path, samples, monkeypatch):
    """Two threads are inside the making of a workspace file at the same time (a barrier both must
    reach): the manager lock is not held while a file is made. Each gets a workspace of its own,
    registered, open and counted in the bound of open files."""
    from metrics.store import workspaces as workspaces_module

    m = WorkspaceRegistry(settings.load({"NDCG_LAB_MODE": "shared", "NDCG_LAB_HOME": str(tmp_path / "home")}),
                   samples=samples)
    m.open(m.create().token)          # the shared samples are built (once, under the lock) before the race
    inside = threading.Barrier(2, timeout=30)
    made = workspaces_module.Workspace

    def making(path, **options):
        if Path(path).parent == m._folder:
            inside.wait()               # BrokenBarrierError unless the other thread is making one too
        return made(path, **options)

    monkeypatch.setattr(workspaces_module, "Workspace", making)
    opened = []
    errors = run_threads([lambda: opened.append(m.create()) for _ in range(2)])
    assert errors == []
    assert len({a.token for a in opened}) == 2 and len({a.workspace.path for a in opened}) == 2
    for access in opened:
        again = m.open(access.token)
        assert again.workspace is access.workspace and [c.name for c in again.workspace.collections()] == \
            ["legal", "web"]
        assert Path(access.workspace.path).stem in m._open
    assert len(m._query_all("SELECT id FROM workspaces", [])) == 3
    m.close()
