"""Reading sources: decompression by magic bytes, missing files, empty, binary and
undecodable input."""
from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma

import numpy as np
import pyarrow as pa
import pytest

from metrics import io
from metrics.errors import MetricsError
from metrics.io import lines
from tests.metrics.io.helpers import QRELS, QRELS_ROWS, RUN, RUN_ROWS, fails, rows, write


def _zstd(data: bytes) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as out:
        out.write(data)
    return sink.getvalue().to_pybytes()


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress, _zstd])
def test_compressed_by_magic_bytes(compress, tmp_path):
    path = write(tmp_path, "bm25.run.gz", compress(RUN))
    run = io.read_run(path)
    assert rows(run) == RUN_ROWS
    assert run.name == "bm25" and run.source == "bm25.run.gz"
    assert run.digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert rows(io.read_qrels(compress(QRELS))) == QRELS_ROWS


def test_corrupt_gzip_is_an_error():
    fails(lambda: io.read_run(gzip.compress(RUN)[:20], source="run.gz"), source="run.gz", line=None,
          problem="cannot decompress", fix="truncated or damaged")


def test_missing_file():
    fails(lambda: io.read_run("/nonexistent/run.txt"), source="run.txt", line=None,
          problem="no such file", fix="check the path")




def test_empty_and_comment_only_files():
    fails(lambda: io.read_run(b"", source="e.txt"), source="e.txt", line=1, problem="the file is empty",
          fix="qid Q0 docno rank score tag")
    fails(lambda: io.read_qrels(b"  \n\n", source="e.txt"), source="e.txt", line=1,
          problem="only blank lines", fix="qid iter docno rel")
    fails(lambda: io.read_run(b"# a\n\n# b\n", source="e.txt"), source="e.txt", line=3,
          problem="no data lines: all 3 lines are blank or comments", fix="qid Q0 docno rank score tag")


def test_binary_and_undecodable_input():
    fails(lambda: io.read_run(RUN + b"301 Q0 d\x009 1 1.0 t\n", source="b.txt"), source="b.txt", line=4,
          problem="NUL byte", fix="plain-text")
    fails(lambda: io.read_run(b"# ok\n301 Q0 caf\xe9 1 1.0 t\n", source="b.txt"), source="b.txt", line=2,
          problem=r"invalid UTF-8 \(byte 0xe9 at column 11\)", fix="save the file as UTF-8")
    # valid UTF-8 is fine
    assert io.read_run("301 Q0 café 1 1.0 t\n".encode()).table["docno"][0].as_py() == "café"


@pytest.mark.parametrize("size", [0, 1, 4095, 4096, 4097, 3 * 4096 + 5, (1 << 20) + 3])
def test_count_newlines_equals_bytes_count(monkeypatch, size):
    rng = np.random.default_rng(size)
    data = rng.choice(np.frombuffer(b"ab \n\r", dtype=np.uint8), size).tobytes()
    assert lines.count_newlines(data) == data.count(b"\n")
    monkeypatch.setattr(lines, "_COUNT_SLICE", 4096)   # many slices, the last one short
    assert lines.count_newlines(data) == data.count(b"\n")
    assert lines.count_newlines(b"\n" * size) == size


@pytest.mark.parametrize("at", [1, 4094, 4095, 4096, 4097, 8191, 9000])
@pytest.mark.parametrize("first", [b"#", b"\n", b" "])
def test_a_line_starting_with_a_byte_is_found_in_any_slice(monkeypatch, at, first):
    """A line after the first that starts with ``first``, with its newline anywhere (the last byte
    of a slice, the first of the next), is found as ``b"\\n" + first in data`` finds it."""
    monkeypatch.setattr(lines, "_COUNT_SLICE", 4096)
    base = bytearray(b"qQ0d12.5t." * 1050)       # 10,500 bytes without a newline or a blank
    base[at - 1] = 10                             # a line ends at byte ``at - 1``
    clean = bytes(base)
    assert not lines.a_line_starts_with(clean, b"#\n ")
    marked = clean[:at] + first + clean[at + 1:]
    assert (b"\n" + first) in marked and lines.a_line_starts_with(marked, b"#\n ")
    assert not lines.a_line_starts_with(marked, bytes(b for b in b"#\n " if b != first[0]))
    assert not lines.a_line_starts_with(first + b"a\nb\n", first)   # the first line is not "after" one
    assert not lines.a_line_starts_with(b"a\n", b"\n")              # the text's last newline ends it


def test_a_long_line_after_megabytes_of_short_ones_is_named_by_its_line():
    short = b"1 Q0 d 1 2.5 t\n" * 100_000          # 1.5 MB, counted in slices
    with pytest.raises(MetricsError) as info:
        lines.check_line_lengths(short + b"x" * 5000 + b"\n", 0, 0, 4096, "r.txt")
    assert info.value.line == 100_001
    open_line, ended = lines.check_line_lengths(short, 0, 7, 4096, "r.txt")
    assert (open_line, ended) == (0, 100_007)
    with pytest.raises(MetricsError) as info:   # the next block: lines carried from the first
        lines.check_line_lengths(b"y" * 5000 + b"\n", open_line, ended, 4096, "r.txt")
    assert info.value.line == 100_008
