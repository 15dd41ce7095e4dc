"""The processes of one deployment (``NDCG_LAB_DEPLOYMENT``) share one home: the home lock lets
them in and keeps others out, and they take turns on each workspace file, so the owner on one
process and a read-only visitor on another see each other's writes, and writes of both
processes are all kept."""
from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

import metrics
from metrics.errors import MetricsError
from metrics.settings import Settings
from metrics.store import WorkspaceRegistry, connection

ROOT = Path(__file__).resolve().parents[3]
LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"

# A second process of the deployment: makes a workspace (a collection of the legal qrels), prints
# its token, then answers one command a line: "runs" prints the names of its runs, "add NAME FILE"
# adds the legal run FILE under NAME, "quit" ends.
PEER = """
import sys
from pathlib import Path
import metrics
from metrics.settings import Settings
from metrics.store import WorkspaceRegistry
home, legal = Path(sys.argv[1]), Path(sys.argv[2])
registry = WorkspaceRegistry(Settings(mode="shared", home=home, deployment="d1"))
access = registry.create()
access.workspace.create_collection("c", metrics.read_qrels(legal / "qrels.txt"))
print(access.token, flush=True)
for line in sys.stdin:
    command = line.split()
    if command[0] == "runs":
        print(" ".join(sorted(r.name for r in access.workspace.runs("c"))) or "-", flush=True)
    elif command[0] == "add":
        access.workspace.add_run("c", metrics.read_run(legal / command[2]), name=command[1])
        print("added", flush=True)
    else:
        break
"""


@pytest.fixture
def peer(tmp_path):
    process = subprocess.Popen([sys.executable, "-c", PEER, str(tmp_path / "home"), str(LEGAL)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    process.token = process.stdout.readline().strip()

    def ask(line: str) -> str:
        process.stdin.write(line + "\n")
        process.stdin.flush()
        return process.stdout.readline().strip()

    process.ask = ask
    yield process
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    connection._SHARED_FOLDERS.clear()


def test_the_home_lock_lets_in_the_processes_of_the_deployment_only(tmp_path, peer):
    home = tmp_path / "home"
    assert peer.token
    with pytest.raises(MetricsError, match="another nDCG Lab server is serving this workspace folder"):
        WorkspaceRegistry(Settings(mode="shared", home=home))                    # a lone server
    with pytest.raises(MetricsError, match="another nDCG Lab server is serving this workspace folder"):
        WorkspaceRegistry(Settings(mode="shared", home=home, deployment="d2"))   # another deployment
    assert WorkspaceRegistry(Settings(mode="shared", home=home, deployment="d1")).open(peer.token)


def test_two_processes_take_turns_on_a_workspace_and_keep_every_write(tmp_path, peer):
    mine = WorkspaceRegistry(Settings(mode="shared", home=tmp_path / "home", deployment="d1"))
    owner = mine.open(peer.token)
    viewer = mine.open(owner.view_token)
    assert viewer.read_only and [c.name for c in viewer.workspace.collections()] == ["c"]
    here, there = ["bm25.run", "bm25_ce.run"], ["dense.run", "bm25_qe.run"]   # distinct contents: all kept
    for i in range(2):                   # alternate writers: each sees the other's runs at once
        owner.workspace.add_run("c", metrics.read_run(LEGAL / here[i]), name=f"here{i}")
        assert peer.ask(f"add there{i} {there[i]}") == "added"
        expected = sorted([f"here{j}" for j in range(i + 1)] + [f"there{j}" for j in range(i + 1)])
        assert peer.ask("runs") == " ".join(expected)
        assert sorted(r.name for r in viewer.workspace.runs("c")) == expected
