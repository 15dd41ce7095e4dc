"""Every hostile input of tests/hostile_corpus.py gives one clear MetricsError, through the
library and through ``python -m metrics eval`` (exit 2, one line naming file and line)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import metrics
from metrics.errors import MetricsError
from metrics.io.topics import read_topics
from tests.hostile_corpus import BOMBS, CASES, GOOD_QRELS, GOOD_RUN, INFLATE_LIMIT

ROOT = Path(__file__).resolve().parents[3]
READERS = {"run": metrics.read_run, "qrels": metrics.read_qrels, "topics": read_topics}


def _check(message: str, case, name: str | None = None) -> None:
    name = name or case.name
    assert name in message
    assert case.message.lower() in message.lower(), message
    if case.line is None:
        assert f"{name} line " not in message, message
    else:
        assert f"{name} line {case.line}: " in message, message


def test_the_corpus_is_large_and_varied():
    assert len(CASES) >= 50
    assert len({c.name for c in CASES}) == len(CASES)
    assert {c.kind for c in CASES} == {"run", "qrels", "topics"}
    assert len(BOMBS) >= 4
    for bomb in BOMBS:
        assert len(bomb.data) < INFLATE_LIMIT // 16   # small compressed, large inflated


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_library_gives_one_metrics_error(case, monkeypatch):
    monkeypatch.setenv("NDCG_LAB_INFLATE_LIMIT", str(INFLATE_LIMIT))
    with pytest.raises(MetricsError) as caught:
        READERS[case.kind](case.data, source=case.name)
    assert type(caught.value) is MetricsError
    message = str(caught.value)
    assert "\n" not in message
    _check(message, case)


@pytest.mark.parametrize("case", [c for c in CASES if c.kind != "topics"], ids=lambda c: c.id)
def test_cli_exits_2_with_one_line(case, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    name = case.name.replace("/", "_")   # a file name cannot hold a slash
    bad = folder / name
    bad.write_bytes(case.data)
    qrels, run = folder / "good.qrels", folder / "good.run"
    qrels.write_bytes(GOOD_QRELS)
    run.write_bytes(GOOD_RUN)
    args = [str(qrels), str(bad)] if case.kind == "run" else [str(bad), str(run)]
    env = dict(os.environ, NDCG_LAB_INFLATE_LIMIT=str(INFLATE_LIMIT), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "metrics", "eval", *args, "-m", "nDCG@10"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in done.stderr
    _check(lines[0], case, name)
