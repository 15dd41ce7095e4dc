"""A process killed with SIGKILL while it stores a 3M-line run: the workspace opens again, the
run is there whole or not at all, and everything stored before is intact."""
from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pytest

from metrics import io
from metrics.store import Workspace

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
N_LINES = 3_000_000
DEPTH = 1000

CHILD = """
import sys, time
from metrics import io
from metrics.store import values as store_values
from metrics.store import Workspace

path, run_path, mode = sys.argv[1:4]
ws = Workspace(path)
run = io.read_run(run_path)
if mode == "after-rows":
    def stall(findings):  # called once every line is in, before the object row, its link and COMMIT
        print("rows-inserted", flush=True)
        time.sleep(600)
    store_values.findings_to_json = stall
print("storing", flush=True)
ws.add_run("dl19", run)
print("stored", flush=True)
time.sleep(600)
"""


@pytest.fixture(scope="module")
def big_run(tmp_path_factory) -> Path:
    """A TREC run of 3M lines: 3,000 queries of 1,000 documents."""
    i = np.arange(N_LINES)
    def text(prefix, values):
        return pc.binary_join_element_wise(prefix, pc.cast(pa.array(values), pa.string()), "")

    table = pa.table({"qid": text("q", i // DEPTH), "q0": pa.array(["Q0"] * N_LINES),
                      "docno": text("doc", (i * 7919) % 10_000_000), "rank": pa.array(i % DEPTH + 1),
                      "score": pa.array(1000.0 - (i % DEPTH) * 0.5), "tag": pa.array(["big"] * N_LINES)})
    path = tmp_path_factory.mktemp("crash") / "big.run"
    pacsv.write_csv(table, path, pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none"))
    return path


def _small_run(tag: str, first: int) -> io.Run:
    text = "".join(f"q{q} Q0 doc{d} {r + 1} {9 - r} {tag}\n"
                   for q in (1, 2) for r, d in enumerate(range(first, first + 5)))
    return io.read_run(text.encode(), name=tag, source=f"{tag}.run")


@pytest.fixture(scope="module")
def before(tmp_path_factory):
    """A workspace with a collection, two runs, proxy judgments and topics; what it holds."""
    path = tmp_path_factory.mktemp("before") / "ws.duckdb"
    qrels = io.read_qrels(b"q1 0 doc0 2\nq1 0 doc7919 1\nq2 0 doc5 1\n", name="qrels", source="qrels.txt")
    runs = [_small_run("bm25", 0), _small_run("dense", 3)]
    with Workspace(path) as ws:
        ws.create_collection("dl19", qrels, proxy=qrels,
                             topics=pd.DataFrame({"qid": ["q1", "q2"], "text": ["one", "two"]}))
        for run in runs:
            ws.add_run("dl19", run)
        ws.set_baseline("dl19", "bm25")
        state = {"stats": ws.stats(), "collections": ws.collections(), "runs": {r.name: r for r in runs}}
    return path, state


def _kill_while_storing(workspace: Path, big_run: Path, mode: str, delay: float) -> str:
    """Run the child until it reports ``mode``'s moment (plus ``delay`` seconds), then SIGKILL it."""
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(workspace), str(big_run), mode], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for = {"after-rows": "rows-inserted", "during": "storing", "after-commit": "stored"}[mode]
        last = ""
        while last != wait_for:
            last = child.stdout.readline().strip()
            if not last and child.poll() is not None:
                raise AssertionError(f"the child ended early: {child.stderr.read()}")
        time.sleep(delay)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert child.returncode == -signal.SIGKILL
    return last


@pytest.mark.parametrize("mode, delay", [
    ("after-rows", 0.0),    # every line inserted, the transaction still open: must vanish
    ("during", 0.3),        # early in the insert
    ("during", 1.0),        # late in the insert (here: 36 of 44 MB written)
    ("during", 1.5),        # about the COMMIT (here: just after it; the log not yet checkpointed)
    ("after-commit", 0.0),  # committed: must be there whole (so the check below can tell)
])
def test_sigkill_while_storing_leaves_all_or_nothing(tmp_path, big_run, before, mode, delay):
    source, state = before
    workspace = tmp_path / "ws.duckdb"
    shutil.copy(source, workspace)
    _kill_while_storing(workspace, big_run, mode, delay)

    with Workspace(workspace) as ws:
        stats = ws.stats()
        names = [r.name for r in ws.runs("dl19")]
        stored = "big" in names
        if mode == "after-rows":
            assert not stored
        if mode == "after-commit":
            assert stored
        old_lines = state["stats"]["run_lines"]
        assert stats["run_lines"] == old_lines + (N_LINES if stored else 0)  # never a part of it
        assert stats["objects"] == state["stats"]["objects"] + stored
        assert names == ["bm25", "dense"] + (["big"] if stored else [])
        if stored:
            big = ws.load_run("dl19", "big")
            assert len(big) == N_LINES and big.table.column("qid")[N_LINES - 1].as_py() == f"q{N_LINES // DEPTH - 1}"
        listed = ws.collections()[0]
        expected = state["collections"][0]
        assert (listed.qrels, listed.proxy, listed.baseline, listed.n_topics, listed.runs[:2]) == \
            (expected.qrels, expected.proxy, expected.baseline, expected.n_topics, expected.runs)
        for name, run in state["runs"].items():
            assert ws.load_run("dl19", name).table.equals(run.table)
        assert ws.load_topics("dl19")["text"].tolist() == ["one", "two"]
        # and it takes new work
        ws.add_run("dl19", io.read_run(b"q1 Q0 doc1 1 1 after\n", name="after", source="after.run"))
        assert [r.name for r in ws.runs("dl19")][-1] == "after"
