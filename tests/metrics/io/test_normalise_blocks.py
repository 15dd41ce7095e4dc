"""Text that must be normalised (leading, doubled or odd blanks, comments, \\r line ends) is
normalised and parsed block by block: the result is byte for byte what normalising the whole text
at once gives (the whole-buffer version is kept below as the oracle), on seeded random texts cut
into blocks of every small size, and a large such text is read within about four times its size
(a child process's peak resident memory, from the kernel)."""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from metrics.errors import MetricsError
from metrics.io import trec
from metrics.io.trec import line_bounds, normalise, ranges
from metrics.io.validate import QRELS, RUN, LineMap, Origin

ROOT = Path(__file__).resolve().parents[3]

_BLANKS = bytes.maketrans(b"\t\v\f", b"   ")


def whole_normalise(data: bytes) -> tuple[bytes, LineMap]:
    """The whole-buffer normalisation the block version replaced, kept as the oracle."""
    if not data:
        return data, LineMap()
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if b"\t" in data or b"\v" in data or b"\f" in data:
        data = data.translate(_BLANKS)
    a = np.frombuffer(data, dtype=np.uint8)
    blank = a == 32
    drop = np.empty(len(a), dtype=bool)
    drop[:-1] = blank[:-1] & (blank[1:] | (a[1:] == 10))
    drop[-1] = blank[-1]
    if drop.any():
        a = a[~drop]
    _, starts, ends = line_bounds(a)
    present = starts < ends
    first = np.full(len(starts), 10, dtype=np.uint8)
    first[present] = a[starts[present]]
    second = np.full(len(starts), 10, dtype=np.uint8)
    longer = ends - starts > 1
    second[longer] = a[starts[longer] + 1]
    comment = (first == 35) | ((first == 32) & (second == 35))
    lead = (first == 32) & ~comment
    if comment.any() or lead.any():
        removed = np.concatenate((starts[lead], ranges(starts[comment], ends[comment])))
        removed.sort()
        a = np.delete(a, removed)
        starts = starts - np.searchsorted(removed, starts)
        ends = ends - np.searchsorted(removed, ends)
    norm = data if len(a) == len(data) else a.tobytes()
    nonempty = ends > starts
    if nonempty.all():
        return norm, LineMap()
    return norm, LineMap(np.flatnonzero(nonempty) + 1, 0)


def whole_read(data: bytes, kind, source: str = "t.run"):
    """``read_trec``'s text-that-must-be-normalised path with the whole text normalised at once."""
    norm, lines = whole_normalise(data)
    origin = Origin(source, lines, data, trec=True)
    counts = trec._first_line_fields(norm)
    if trec._fields_fit(counts, kind):
        try:
            table = trec._pyarrow_read(norm, kind, b" ", counts, typed=True, ignore_empty=True)
            if table.num_rows == trec._row_count(lines, norm):
                return table, origin
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass
    return trec._diagnose(norm, kind, origin), origin


SEPARATORS = [b" ", b" ", b" ", b"  ", b"\t", b" \t ", b"\f", b"\v", b"   "]
ENDS = [b"\n"] * 8 + [b"\r\n", b"\r"]


def random_text(rng: random.Random, kind, n_lines: int, bad: bool) -> bytes:
    out = []
    for i in range(n_lines):
        roll = rng.random()
        if roll < 0.08:
            line = rng.choice([b"", b" ", b"\t", b"  \t "])
        elif roll < 0.16:
            line = rng.choice([b"#", b" #", b"\t# x"]) + b" comment %d" % i
        else:
            if kind is RUN:
                fields = [b"q%d" % rng.randrange(50), b"Q0", b"d%d#%d" % (i, rng.randrange(9)), b"%d" % (i + 1),
                          b"%.3f" % rng.uniform(-5, 5), b"tag"]
                if rng.random() < 0.05:
                    fields.append(b"extra")
            else:
                fields = [b"q%d" % rng.randrange(50), b"0", b"d%d" % i, b"%d" % rng.randrange(-1, 4)]
            if bad and rng.random() < 0.02:
                fields = fields[:-1] if rng.random() < 0.5 else fields[:-1] + [b"x"]
            line = rng.choice([b"", b"", b" ", b"\t", b"  "]) + b"".join(
                f + rng.choice(SEPARATORS) for f in fields[:-1]) + fields[-1] + rng.choice([b"", b"", b" ", b"\t"])
        out.append(line + rng.choice(ENDS))
    text = b"".join(out)
    return text[:-1] if rng.random() < 0.3 else text


def _lines(lines: LineMap):
    return None if lines.lines is None else lines.lines.tolist(), lines.offset


@pytest.mark.parametrize("seed", range(40))
def test_blocks_normalise_as_the_whole_text_does(seed, monkeypatch):
    rng = random.Random(seed)
    data = random_text(rng, rng.choice([RUN, QRELS]), rng.randrange(1, 400), bad=False)
    expected, expected_lines = whole_normalise(data)
    for size in sorted({1, 2, 3, 7, rng.randrange(1, 64), rng.randrange(64, 2048), len(data) + 1}):
        monkeypatch.setattr(trec, "NORMALISE_BLOCK", size)
        norm, lines = normalise(data)
        assert norm == expected, size
        assert _lines(lines) == _lines(expected_lines), size


@pytest.mark.parametrize("seed", range(40))
def test_blocks_read_the_table_and_error_of_the_whole_text(seed, monkeypatch):
    rng = random.Random(1000 + seed)
    kind = rng.choice([RUN, QRELS])
    data = b" " + random_text(rng, kind, rng.randrange(1, 400), bad=seed % 3 == 0)
    try:
        expected = whole_read(data, kind)
    except MetricsError as exc:
        expected = str(exc)
    for size in sorted({1, 5, rng.randrange(8, 128), rng.randrange(128, 4096), len(data) + 1}):
        monkeypatch.setattr(trec, "NORMALISE_BLOCK", size)
        try:
            table, origin = trec.read_trec(data, kind, "t.run")
        except MetricsError as exc:
            assert str(exc) == expected, size
            continue
        assert not isinstance(expected, str), (size, expected)
        assert table.combine_chunks().equals(expected[0].combine_chunks()), size
        assert _lines(origin.lines) == _lines(expected[1].lines), size


def test_a_long_line_and_lone_carriage_returns_cut_at_line_ends():
    data = b" a  b\r" * 3 + b"x" * 50 + b"\r\n c d\n" + b"\r" * 5 + b" e\tf"
    expected = whole_normalise(data)
    for size in range(1, len(data) + 2):
        pieces = [norm for norm, _ in trec.normalised_blocks(data, size)]
        assert b"".join(pieces) == expected[0], size


CHILD = r"""
import json, sys
import metrics

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024

read = metrics.read_qrels if sys.argv[1].endswith(".qrels") else metrics.read_run
read(b" q1 0 d1 1\n" if read is metrics.read_qrels else b" q1 Q0 d1 1 1.0 t\n")   # imports and pools warmed
baseline = status("VmRSS")
parsed = read(sys.argv[1])
print(json.dumps({"baseline": baseline, "peak": status("VmHWM"), "rows": len(parsed.table)}))
"""


def _write_run(path: Path, layout: str, n: int) -> int:
    """A run of ``n`` distinct lines with a blank before each (``leading``) or two between its fields
    (``doubled``), written in slices: its size in bytes."""
    with open(path, "wb") as out:
        for at in range(0, n, 100_000):
            text = "".join(f"{i // 1000} Q0 {7_000_000 + i * 7} {i % 1000 + 1} {40 - (i % 1000) / 100:.4f} bm25\n"
                           for i in range(at, min(n, at + 100_000))).encode()
            out.write(b" " + text.replace(b"\n", b"\n ")[:-1] if layout == "leading" else text.replace(b" ", b"  "))
    return path.stat().st_size


def _write_qrels(path: Path, n: int) -> int:
    """Qrels of ``n`` distinct judgments with a blank before each line: its size in bytes."""
    with open(path, "wb") as out:
        for at in range(0, n, 100_000):
            out.write("".join(f" {i // 500} 0 {9_000_000 + i * 3} {i % 4}\n"
                              for i in range(at, min(n, at + 100_000))).encode())
    return path.stat().st_size


@pytest.mark.parametrize(("layout", "bound"), [("leading", 4.0), ("doubled", 4.0), ("qrels", 4.5)])
def test_a_text_that_must_be_normalised_is_read_within_about_four_times_its_size(tmp_path, layout, bound):
    """64 MiB and more of a run with a blank before every line, or two between its fields: the
    whole text normalised at once took 4.8-6.5 times the text (its copies and the passes'
    temporaries); block by block it holds the text, its table and one block's work. Qrels (56 MB,
    short lines: a table of 1.5 times the text) with a blank before every line: 4.90 times with
    the grades copied to numpy beside the duplicates' keys and the blocks' tables in mimalloc,
    4.08 now (bench/RESULTS.md, "Bounded memory, round 5")."""
    n = 3_000_000 if layout == "qrels" else 2_000_000
    path = tmp_path / f"{layout}.{'qrels' if layout == 'qrels' else 'run'}"
    size = _write_qrels(path, n) if layout == "qrels" else _write_run(path, layout, n)
    done = subprocess.run([sys.executable, "-c", CHILD, str(path)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["rows"] == n
    ratio = (found["peak"] - found["baseline"]) / size
    assert ratio <= bound, round(ratio, 2)


@pytest.mark.parametrize("mark", [b"\n# a comment\n", b"\n\n", b"\n q1 Q0 d3 3 0.5 t\n"])
def test_a_comment_blank_line_or_leading_blank_goes_to_normalising_unparsed(mark, monkeypatch):
    """The clean path scans for what only a text to normalise holds, and does not parse that text
    whole only to fail (a wasted parse of a large text, and its peak); a clean text is parsed."""
    parsed = []

    def parse(data, *args, **kwargs):
        parsed.append(data)
        raise pa.ArrowInvalid("recorded")

    monkeypatch.setattr(trec, "_pyarrow_read", parse)
    first, second = b"q1 Q0 d1 1 1.0 t", b"q1 Q0 d2 2 0.9 t\n"
    assert trec._read_clean(first + mark + second, RUN) is None
    assert not parsed
    trec._read_clean(first + b"\n" + second, RUN)
    assert parsed == [first + b"\n" + second]
