"""Compressed and uploaded runs read as a stream: inflated block by block into the block parser.

The block path must answer exactly as the whole-file path (same table, findings, digest of the
raw bytes, same one-line error), and hold a block or two of inflated text, not the whole text:
the peak memory of real processes is measured with ``wait4``.
"""
from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import metrics
from metrics import io
from metrics.errors import MetricsError
from metrics.io import inflate, raw_input, read, trec
from tests.hostile_corpus import GOOD_QRELS, INFLATE_LIMIT, STREAMED, block_run

ROOT = Path(__file__).resolve().parents[3]
QRELS = ROOT / "ndcg_lab" / "sample_data" / "legal" / "qrels.txt"
COMPRESS = {"gz": lambda d: gzip.compress(d, 1), "bz2": bz2.compress, "xz": lzma.compress,
            "zst": lambda d: __import__("pyarrow").compress(d, "zstd", asbytes=True)}


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 4 kB, so that inputs of a few hundred kB stream through many of them; the
    block path's calls are recorded (None: it handed the input to the whole-file path)."""
    monkeypatch.setattr(trec, "FILE_BLOCK", 4096)
    calls = []
    blocks = trec.read_trec_blocks
    monkeypatch.setattr(read, "read_trec_blocks", lambda *a: calls.append(blocks(*a)) or calls[-1])
    return calls


def _whole(monkeypatch):
    """The whole-file path alone: the reference the block path must equal."""
    monkeypatch.setattr(read, "_from_blocks", lambda *a: (None, False))


@pytest.mark.parametrize("suffix", sorted(COMPRESS))
@pytest.mark.parametrize("given", ["path", "bytes"])
def test_compressed_runs_in_blocks_equal_the_whole_file(tmp_path, monkeypatch, small_blocks, suffix, given):
    data = block_run()
    raw = COMPRESS[suffix](data)
    path = tmp_path / f"big.run.{suffix}"
    path.write_bytes(raw)
    src = path if given == "path" else raw
    run = io.read_run(src, name="big", source=path.name)
    assert small_blocks and small_blocks[-1] is not None   # read in blocks, not handed over
    _whole(monkeypatch)
    whole = io.read_run(src, name="big", source=path.name)
    assert run.table.equals(whole.table)
    assert run.digest == whole.digest == hashlib.sha256(raw).hexdigest()   # the raw (compressed) bytes
    assert [(f.kind, f.message, f.examples) for f in run.findings] == \
        [(f.kind, f.message, f.examples) for f in whole.findings]
    assert list(run.line_of([0, 5, len(run) - 1])) == [1, 6, len(run)]


def test_uploaded_plain_bytes_in_blocks_equal_the_whole_file(monkeypatch, small_blocks):
    data = block_run()
    run = io.read_run(data, source="upload.run")
    assert small_blocks and small_blocks[-1] is not None
    _whole(monkeypatch)
    whole = io.read_run(data, source="upload.run")
    assert run.table.equals(whole.table)
    assert run.digest == whole.digest == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("case", STREAMED, ids=lambda c: c.name)
@pytest.mark.parametrize("given", ["path", "bytes"])
def test_streamed_inputs_give_the_whole_file_paths_one_error(tmp_path, monkeypatch, small_blocks, case, given):
    """A bad line deep inside, a truncated stream, a NUL after the first block, a long line, a
    bomb of valid text: the same message (file, line, problem, quote) as the whole-file path."""
    monkeypatch.setenv("NDCG_LAB_INFLATE_LIMIT", str(INFLATE_LIMIT))
    path = tmp_path / case.name
    path.write_bytes(case.data)
    src = path if given == "path" else case.data
    with pytest.raises(MetricsError) as streamed:
        io.read_run(src, source=case.name)
    _whole(monkeypatch)
    with pytest.raises(MetricsError) as whole:
        io.read_run(src, source=case.name)
    assert str(streamed.value) == str(whole.value)
    assert case.message.lower() in str(streamed.value).lower()
    assert (f"{case.name} line {case.line}: " in str(streamed.value)) if case.line else \
        (f"{case.name} line " not in str(streamed.value))
    assert inflate.in_flight() == 0


def test_a_bomb_of_valid_text_is_refused_holding_one_block(monkeypatch, small_blocks):
    """Inflated bytes are counted as they stream and dropped: nothing is held but the block in hand."""
    monkeypatch.setenv("NDCG_LAB_INFLATE_LIMIT", str(INFLATE_LIMIT))
    seen = []
    checked = inflate.checked_blocks

    def watched(*args, **kwargs):
        for block in checked(*args, **kwargs):
            seen.append(inflate.in_flight())
            yield block
    monkeypatch.setattr(inflate, "checked_blocks", watched)
    monkeypatch.setattr(read, "checked_blocks", watched)
    bomb = gzip.compress(b"q1 Q0 d1 1 2.5 sys\n" * (4 * INFLATE_LIMIT // 19 + 1), 1)
    with pytest.raises(MetricsError, match="inflates to more than"):
        io.read_run(bomb, source="bomb.run.gz")
    assert len(seen) > 200 and max(seen) <= 4096   # a 4 kB block in flight at a time, never more
    assert inflate.in_flight() == 0


@pytest.fixture
def opens(monkeypatch):
    """How often a reader opens an input's text (each opening inflates it from its start)."""
    count = []
    text = raw_input.RawInput.text

    def counted(self):
        count.append(1)
        return text(self)
    monkeypatch.setattr(raw_input.RawInput, "text", counted)
    return count


@pytest.mark.parametrize("suffix", sorted(COMPRESS))
def test_a_compressed_run_is_inflated_once(monkeypatch, small_blocks, opens, suffix):
    """A run that inflates a few times its size is parsed as it is inflated: its text is opened
    once (the reader before this one counted every compressed input in a pass of its own)."""
    raw = COMPRESS[suffix](block_run())
    run = io.read_run(raw, source=f"big.run.{suffix}")
    assert small_blocks[-1] is not None and len(opens) == 1
    _whole(monkeypatch)
    assert run.table.equals(io.read_run(raw, source=f"big.run.{suffix}").table)


def test_a_bomb_after_a_plain_head_is_counted_then_read_again(monkeypatch, small_blocks, opens):
    """A plain run followed by megabytes of one line: parsing stops where the text passes
    PLAIN_RATIO times the raw bytes read, the rest is counted, and the input, within the limit,
    is read again from its start; the run equals the whole-file path's."""
    parsed = []   # (the opening it belongs to, bytes) of every block parsed
    block = trec._parsed_block
    monkeypatch.setattr(trec, "_parsed_block", lambda *a: parsed.append((len(opens), len(a[0]))) or block(*a))
    raw = gzip.compress(block_run() + b"q9 Q0 dz 1 0 tag\n" * 250_000, 9)
    run = io.read_run(raw, source="headed.run.gz", on_duplicate="first")
    assert len(opens) == 2 and small_blocks[-1] is not None
    first_pass = sum(size for opening, size in parsed if opening == 1)
    assert len(block_run()) < first_pass <= read.PLAIN_RATIO * len(raw) + 2 * 4096
    _whole(monkeypatch)
    assert run.table.equals(io.read_run(raw, source="headed.run.gz", on_duplicate="first").table)


def test_a_bomb_is_known_at_its_first_block_and_nothing_of_it_is_parsed(monkeypatch, opens):
    monkeypatch.setenv("NDCG_LAB_INFLATE_LIMIT", str(48 << 20))
    monkeypatch.setenv("NDCG_LAB_INFLATE_RATIO", "unlimited")   # the limit alone; the ratio stops it sooner
    parsed = []
    monkeypatch.setattr(trec, "_parsed_block", lambda *a: parsed.append(1))
    bomb = gzip.compress(b"q1 Q0 d1 1 2.5 sys\n" * ((64 << 20) // 19), 1)
    with pytest.raises(MetricsError, match="inflates to more than 50,331,648 bytes"):
        io.read_run(bomb, source="bomb.run.gz")
    assert parsed == [] and len(opens) == 1
    assert inflate.in_flight() == 0


# --------------------------------------------------------------------------- real processes


def _text_run(n_queries: int, depth: int) -> bytes:
    return "".join(f"q{q} Q0 doc-{(q * 7919 + i * 104729) % 10_000_019:08d} {i + 1} {(depth - i) / 7:.4f} sys\n"
                   for q in range(n_queries) for i in range(depth)).encode()


_MEASURE = """
import os, subprocess, sys
process = subprocess.Popen(sys.argv[1:])
_, status, usage = os.wait4(process.pid, 0)
sys.stderr.write(f"\\npeak {usage.ru_maxrss}\\n")
"""
"""Runs a command and reports its peak RSS (kB). A small process of its own: a child forked from
pytest would count pytest's pages in its own peak."""


def _run_measured(args: list[str], env: dict | None = None) -> tuple[int, str, str]:
    """(peak RSS in bytes from wait4, stdout, stderr) of ``python ARGS`` run from this checkout."""
    done = subprocess.run([sys.executable, "-c", _MEASURE, sys.executable, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    err, _, peak = done.stderr.rstrip("\n").rpartition("\npeak ")
    return int(peak) * 1024, done.stdout, err


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """A 37 MB run (1,000 queries x 1,000 documents), plain and gzipped, and a bomb of valid
    text: 240 MB of one run line, gzip members of 8 MB concatenated (1.6 MB on disk)."""
    folder = tmp_path_factory.mktemp("stream")
    text = _text_run(1000, 1000)
    (folder / "run.txt").write_bytes(text)
    (folder / "run.gz").write_bytes(gzip.compress(text, 1))
    member = gzip.compress(b"q1 Q0 doc-1 1 2.5 bomb\n" * ((8 << 20) // 23), 1)
    (folder / "bomb.gz").write_bytes(member * 30)
    return folder


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    """A 150 MB run (4,000 queries x 1,000 documents), plain and gzipped: several times the
    blocks (16 MiB) that the streamed path keeps in flight, so that holding the whole text shows."""
    folder = tmp_path_factory.mktemp("stream-large")
    text = _text_run(4000, 1000)
    (folder / "run.txt").write_bytes(text)
    (folder / "run.gz").write_bytes(gzip.compress(text, 1))
    return folder


def test_a_gzipped_run_takes_the_memory_of_the_plain_run_and_prints_the_same_bytes(large):
    text_size = (large / "run.txt").stat().st_size
    plain_peak, plain_out, plain_err = _run_measured(["-m", "metrics", "eval", str(QRELS), str(large / "run.txt")])
    gz_peak, gz_out, gz_err = _run_measured(["-m", "metrics", "eval", str(QRELS), str(large / "run.gz")])
    assert plain_err == gz_err == "" and plain_out
    assert gz_out == plain_out.replace("run.txt", "run.gz")   # byte-identical but for the file name
    # holding the inflated text (and its join) beside the columns adds about twice its size
    assert gz_peak - plain_peak < text_size, (gz_peak >> 20, plain_peak >> 20)


def test_the_digest_of_a_large_gzipped_run_is_the_sha256_of_its_bytes(big):
    raw = (big / "run.gz").read_bytes()
    assert metrics.read_run(big / "run.gz").digest == hashlib.sha256(raw).hexdigest()
    assert metrics.read_run(raw).digest == hashlib.sha256(raw).hexdigest()


def test_a_bomb_of_valid_text_is_refused_in_bounded_memory(big):
    """240 MB of valid-looking lines against a 160 MB limit: refused while holding a block or two,
    not the 160 MB of text that reading it whole holds before it refuses (+168 MB over the imports)."""
    env = {"NDCG_LAB_INFLATE_LIMIT": "160MB", "NDCG_LAB_INFLATE_RATIO": "unlimited"}   # the limit alone
    floor, _, _ = _run_measured(["-c", "import metrics"], env)
    peak, out, err = _run_measured(["-m", "metrics", "eval", str(QRELS), str(big / "bomb.gz")], env)
    assert "inflates to more than 160,000,000 bytes" in err and out == ""
    assert peak - floor < 100 << 20, ((peak - floor) >> 20)


def test_sigterm_while_a_bomb_is_inflated_ends_the_command_at_once(tmp_path):
    """A supervisor's SIGTERM while a bomb streams (a limit high enough that it is still being
    inflated): the process ends within a few seconds and leaves no process behind. The 15 s are
    a hang detector, not a timing."""
    member = gzip.compress(b"q1 Q0 doc-1 1 2.5 bomb\n" * ((16 << 20) // 23), 1)
    bomb = tmp_path / "bomb.gz"
    bomb.write_bytes(member * 800)   # 13 GB of text
    (tmp_path / "qrels").write_bytes(GOOD_QRELS)
    process = subprocess.Popen([sys.executable, "-m", "metrics", "eval", str(tmp_path / "qrels"), str(bomb)],
                               cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), "NDCG_LAB_INFLATE_LIMIT": "40GB",
                                    "NDCG_LAB_INFLATE_RATIO": "unlimited"},   # the limit alone, as the test says
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        time.sleep(3)
        assert process.poll() is None, process.stderr.read()   # still inflating
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=15)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode != 0
    assert _session_members(process.pid) == []


def _session_members(session: int) -> list[int]:
    """Processes still in the session that the command led."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == session:   # field 6 of stat: the session id
                members.append(int(entry.name))
    return members
