"""`ndcg-lab task`: create, join, submit (scores; a refusal is one line and exit 2), close,
release, standings; and a submit that waits for a task file another process holds."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time

import pytest

from metrics import settings
from metrics.cli import main
from metrics.tasks import Tasks, views
from tests.metrics.tasks.conftest import LEGAL, ROOT


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(["task", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("NDCG_LAB_HOME", str(tmp_path))
    monkeypatch.setenv("NDCG_LAB_PUBLIC_URL", "https://lab.example.org/ir")
    return tmp_path


def test_the_teachers_and_a_teams_script(home, capsys, tmp_path):
    public = tmp_path / "public.txt"
    public.write_text("1\n2\n3\n4\n5\n")
    code, out, _ = run(capsys, "create", "--title", "Legal IR", "--topics", LEGAL / "topics.tsv",
                       "--qrels", LEGAL / "qrels.txt", "--baseline", LEGAL / "bm25.run", "--measure", "nDCG@10",
                       "--measure", "AP", "--public-topics", public, "--closes", "2099-01-01T00:00Z",
                       "--total", "1")
    lines = out.splitlines()
    assert code == 0 and [x.split(": ")[0] for x in lines] == ["instructor", "join", "projector"]
    links = {x.split(": ")[0]: x.split(": ")[1] for x in lines}
    assert all(u.startswith("https://lab.example.org/ir/task?task=") for u in links.values())
    code, out, _ = run(capsys, "join", links["join"], "--team", "Alpha")
    assert code == 0 and out.startswith("team: https://lab.example.org/ir/task?task=")
    team = out.split(": ")[1].strip()
    code, out, _ = run(capsys, "submit", team, LEGAL / "dense.run", "--label", "dense v1")
    assert code == 0 and "public scores over 5 topics" in out
    tasks = Tasks(settings.load())
    mine = views.view(tasks.open(team)).submissions[0].means_public
    assert f"nDCG@10\t{mine['nDCG@10']:.4f}" in out and f"AP\t{mine['AP']:.4f}" in out
    code, out, err = run(capsys, "submit", team, LEGAL / "bm25_ce.run")
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "used all 1 submissions" in err
    code, out, _ = run(capsys, "standings", team, "--format", "json")
    board = json.loads(out)
    assert board["stamp"]["board"] == "public board" and set(board["means"]) == {"Alpha", "baseline: bm25"}
    code, out, err = run(capsys, "close", team)
    assert code == 2 and "team link cannot" in err
    assert run(capsys, "close", links["instructor"])[0] == 0
    assert run(capsys, "release", links["instructor"], "--qrels")[0] == 0
    code, out, _ = run(capsys, "standings", links["projector"], "--format", "csv")
    assert '# board: "final standings"' in out and '# topics: "hidden (45)"' in out
    code, out, _ = run(capsys, "standings", links["instructor"], "--format", "latex")
    assert out.startswith('% tool: "nDCG Lab') and "\\begin{tabular}" in out
    assert re.search(r"^Alpha \[[A-Z]\] & ", out, re.MULTILINE)  # the group after the name
    code, _, err = run(capsys, "join", "https://lab.example.org/ir/task?task=" + "x" * 32, "--team", "B")
    assert code == 2 and "no task has this link" in err


def test_a_submit_waits_for_a_file_another_process_holds(home, capsys):
    code, out, _ = run(capsys, "create", "--title", "T", "--topics", LEGAL / "topics.tsv", "--qrels",
                       LEGAL / "qrels.txt", "--closes", "2099-01-01")
    join = out.splitlines()[1].split(": ")[1]
    team = run(capsys, "join", join, "--team", "A")[1].split(": ")[1].strip()
    tasks = Tasks(settings.load())
    task = tasks.open(team).task
    held = threading.Event()

    def hold():
        with task.transaction():  # this process holds the DuckDB file (and its lock) for a while
            held.set()
            time.sleep(6)  # longer than the command takes to start and read its run

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait()
    done = subprocess.run([sys.executable, "-m", "metrics", "task", "submit", team, str(LEGAL / "dense.run")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    holder.join()
    assert done.returncode == 0, done.stderr
    assert "public scores over 15 topics" in done.stdout
