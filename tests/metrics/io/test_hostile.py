"""Every hostile input of tests/hostile_corpus.py gives one clear MetricsError, through the
library and through ``python -m metrics eval`` (exit 2, one line naming file and line)."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import metrics
import metrics.settings
from metrics.errors import MetricsError
from metrics.io.paths import expand
from metrics.io.raw_input import sha256_later
from metrics.io.topics import read_topics
from metrics.io.upload_limits import check_upload, upload_refusals
from tests.hostile_corpus import BOMBS, CASES, GOOD_QRELS, GOOD_RUN, INFLATE_LIMIT, STREAMING

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


@pytest.mark.parametrize("case", STREAMING, ids=lambda c: c.id)
def test_the_streaming_engine_gives_the_same_one_error(case, tmp_path, monkeypatch):
    """The streaming engine reads a file in pieces (metrics.engines.parts): the bombs, the long
    lines and the binary files are refused there too, naming the same file, line and problem."""
    monkeypatch.setenv("NDCG_LAB_INFLATE_LIMIT", str(INFLATE_LIMIT))
    qrels = tmp_path / "good.qrels"
    qrels.write_bytes(GOOD_QRELS)
    bad = tmp_path / case.name
    bad.write_bytes(case.data)
    with pytest.raises(MetricsError) as caught:
        metrics.evaluate(qrels, {"bad": str(bad)}, ["nDCG@10"], engine="streaming")
    _check(str(caught.value), case)


def test_inputs_read_at_once_share_one_budget_of_inflated_bytes(monkeypatch):
    """A bomb read while others hold the process's budget (NDCG_LAB_INFLATE_TOTAL) is refused at
    its first block: N bombs at once hold at most the budget, not N times the limit."""
    from metrics.io import inflate

    monkeypatch.setenv("NDCG_LAB_INFLATE_LIMIT", "64MB")
    monkeypatch.setenv("NDCG_LAB_INFLATE_TOTAL", "40MB")
    data = BOMBS[0].data                                           # inflates to 4 MiB
    inflate._IN_FLIGHT[0] = 38 * 10**6                             # other visitors' uploads hold 38 MB
    try:
        with pytest.raises(MetricsError, match="unpacking other large inputs"):
            inflate.decompress(data, "bomb.run.gz")
        assert inflate.in_flight() == 38 * 10**6                   # this read gave back what it held
    finally:
        inflate._IN_FLIGHT[0] = 0
    assert len(inflate.decompress(data, "bomb.run.gz")) == 4 * INFLATE_LIMIT + 19 - 4 * INFLATE_LIMIT % 19
    assert inflate.in_flight() == 0


# --------------------------------------------------------------------------- server files


SECRET = "root:x:0:0:root:/root:/bin/bash"


@pytest.fixture
def server(tmp_path):
    """A data root holding a good qrels, a run with a bad line, and two symlinks that escape it."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "passwd").write_text(SECRET + "\n")
    (root / "qrels.txt").write_bytes(GOOD_QRELS)
    (root / "bad.run").write_text(f"q1 Q0 d1 1 2.5 sys\n{SECRET}\n")
    (root / "link.run").symlink_to(outside / "passwd")
    (root / "sub").mkdir()
    (root / "sub" / "part-1.run").write_bytes(GOOD_RUN)
    (root / "sub" / "part-2.run").symlink_to(outside / "passwd")
    settings = metrics.settings.Settings(data_roots=(root.resolve(),), url_schemes=frozenset({"s3"}))
    return root, outside, settings


def test_expand_lets_the_local_user_read_anything(server):
    root, outside, _ = server
    assert expand(str(outside / "passwd")) == [str(outside / "passwd")]
    assert expand(str(root / "link.run")) == [str(root / "link.run")]


def test_expand_with_settings_keeps_paths_under_the_roots(server):
    root, outside, settings = server
    assert expand(str(root / "qrels.txt"), allowed=settings) == [str((root / "qrels.txt").resolve())]
    for escape in (str(root / ".." / "outside" / "passwd"), str(outside / "passwd"), str(root / "link.run"),
                   str(root / "sub" / "*.run"), "/etc/passwd", f"file://{outside}/passwd"):
        with pytest.raises(MetricsError, match="outside the folders this server may read"):
            expand(escape, allowed=settings)
    with pytest.raises(MetricsError, match="may not hold '..'"):
        expand(str(root / ".." / "*" / "passwd"), allowed=settings)
    for url in ("http://example.com/run.txt", "ftp://host/run", "s3://bucket/a::gcs://b/c"):
        with pytest.raises(MetricsError, match="not allowed"):
            expand(url, allowed=settings)


def test_server_file_errors_name_the_line_without_quoting_it(server):
    root, _, settings = server
    qrels = str(root / "qrels.txt")
    for engine in ("local", "streaming"):
        with pytest.raises(MetricsError) as caught:
            metrics.evaluate(qrels, {"sys": str(root / "bad.run")}, ["nDCG@10"], engine=engine, allowed=settings)
        assert (caught.value.source, caught.value.line) == ("bad.run", 2)
        assert "root:x" not in str(caught.value) and "/bin/bash" not in str(caught.value)
        with pytest.raises(MetricsError, match="outside the folders"):
            metrics.evaluate(qrels, {"sys": str(root / "link.run")}, ["nDCG@10"], engine=engine, allowed=settings)
        with pytest.raises(MetricsError, match="outside the folders"):
            metrics.evaluate(str(root / "link.run"), {"sys": str(root / "sub" / "part-1.run")}, ["nDCG@10"],
                             engine=engine, allowed=settings)
    with pytest.raises(MetricsError) as local_user:
        metrics.evaluate(qrels, {"sys": str(root / "bad.run")}, ["nDCG@10"])
    assert "/bin/bash" in str(local_user.value)   # the local user sees their own file quoted


def test_check_upload_bounds_files_and_bytes():
    settings = metrics.settings.Settings(upload_files=2, upload_bytes=100)
    check_upload([("a.run", b"x" * 50), ("b.run", b"y" * 50)], settings)
    with pytest.raises(MetricsError, match="more than 2 files in one upload"):
        check_upload([("a", b""), ("b", b""), ("c", b"")], settings)
    with pytest.raises(MetricsError, match="would exceed 100 B"):
        check_upload([("a.run", 60), ("b.run", b"z" * 41)], settings)


def test_upload_refusals_keep_files_in_order_while_the_bounds_hold():
    # bounds: 2 files, 100 bytes. 60 kept (60); 50 refused (110 > 100); 40 kept (100); 1 refused (a third file)
    settings = metrics.settings.Settings(upload_files=2, upload_bytes=100)
    refusals = upload_refusals([("a", 60), ("b", 50), ("c", 40), ("d", 1)], settings)
    assert [r is None for r in refusals] == [True, False, True, False]
    assert refusals[1].source == "b" and "would exceed 100 B" in str(refusals[1])
    assert refusals[3].source == "d" and "more than 2 files in one upload" in str(refusals[3])


# --------------------------------------------------------------------------- exit while hashing


def test_the_digest_thread_is_joined_before_the_interpreter_exits():
    """A daemon thread still hashing when the interpreter finalises is ended by pthread_exit as it
    takes the GIL back, which can abort the process (exit 134): the thread must not be a daemon."""
    digest_of = sha256_later(bytes(8 << 20))
    workers = [t for t in threading.enumerate() if t.name == "ndcg-lab-sha256"]
    assert workers and not any(t.daemon for t in workers)
    assert digest_of() == hashlib.sha256(bytes(8 << 20)).hexdigest()


def test_wrong_parquet_columns_exit_2_under_load(tmp_path):
    """The case that once ended in SIGABRT: a parquet run (over 1 MB, so hashed on a thread) whose
    columns are wrong, fails before the hash is done, repeated while every core is busy."""
    rng = np.random.default_rng(3)
    run = tmp_path / "wrong.parquet"
    pq.write_table(pa.table({"a": rng.random(400_000), "b": rng.integers(0, 1 << 40, 400_000)}), run,
                   compression="none")
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(GOOD_QRELS)
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
    try:
        for _ in range(5):
            done = subprocess.run([sys.executable, "-m", "metrics", "eval", str(qrels), str(run)], cwd=ROOT,
                                  env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True,
                                  timeout=120)
            assert done.returncode == 2, (done.returncode, done.stderr)
            assert done.stderr.startswith("error: wrong.parquet: no qid") and done.stderr.count("\n") == 1
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
