"""``python -m metrics eval`` on hostile inputs, as a real process: a compression bomb is refused by
both engines at the inflate limit (set small here: NDCG_LAB_INFLATE_LIMIT), a line longer than
NDCG_LAB_MAX_LINE is refused naming its line, in every compression and in plain text; each is
one line on stderr and exit code 2."""
from __future__ import annotations

import bz2
import gzip
import lzma
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

ROOT = Path(__file__).resolve().parents[3]
QRELS = ROOT / "ndcg_lab" / "sample_data" / "legal" / "qrels.txt"
COMPRESS = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress,
            "zst": lambda data: pa.compress(data, "zstd", asbytes=True)}


def valid_lines(megabytes: int) -> bytes:
    """Run lines that parse (no duplicate, no NUL): a bomb only the inflate limit can stop."""
    line = b"%d Q0 doc%d %d 1.5 bomb\n"
    count = megabytes * 10**6 // 24
    return b"".join(line % (i // 1000, i % 1000, i % 1000 + 1) for i in range(count))


def evaluate(path: Path, *extra: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "metrics", "eval", str(QRELS), str(path), "-m", "nDCG@10",
                           "--no-progress", *extra], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env})


def refused(result: subprocess.CompletedProcess) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and len(lines) == 1, (result.returncode, result.stderr[-2000:])
    assert "Traceback" not in result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def valid_bomb() -> bytes:
    return valid_lines(6)


@pytest.mark.parametrize("suffix", sorted(COMPRESS))
@pytest.mark.parametrize("engine", ["streaming", "local"])
def test_a_bomb_of_valid_lines_stops_at_the_inflate_limit(tmp_path, suffix, engine, valid_bomb):
    path = tmp_path / f"bomb.run.{suffix}"
    path.write_bytes(COMPRESS[suffix](valid_bomb))
    line = refused(evaluate(path, "--engine", engine, NDCG_LAB_INFLATE_LIMIT="2MB",
                            NDCG_LAB_INFLATE_RATIO="unlimited"))   # the limit alone; the ratio stops it sooner
    assert line.startswith(f"error: {path.name}: the file inflates to more than 2,000,000 bytes"), line


@pytest.mark.parametrize("engine", ["streaming", "local"])
def test_a_bomb_of_zeros_is_refused_as_binary_within_a_block(tmp_path, engine):
    path = tmp_path / "zeros.run.xz"
    path.write_bytes(lzma.compress(b"\0" * (40 << 20)))
    line = refused(evaluate(path, "--engine", engine))
    assert "NUL byte" in line or "binary data" in line, line


@pytest.mark.parametrize("suffix", [None, "gz", "xz"])
@pytest.mark.parametrize("engine", ["streaming", "local"])
def test_a_line_longer_than_the_bound_is_refused_naming_it(tmp_path, suffix, engine):
    data = b"1 Q0 d1 1 2.0 t\n1 Q0 d2 2 1.0 t\n" + b"7" * (3 << 20) + b" Q0 d3 3 0.5 t\n"
    path = tmp_path / ("long.run" + (f".{suffix}" if suffix else ""))
    path.write_bytes(COMPRESS[suffix](data) if suffix else data)
    line = refused(evaluate(path, "--engine", engine, NDCG_LAB_MAX_LINE="1MB"))
    assert line.startswith(f"error: {path.name} line 3: the line is longer than 1,000,000 bytes"), line
    assert len(line) < 300


def test_a_million_digit_grade_is_quoted_by_a_bounded_prefix(tmp_path):
    qrels = tmp_path / "big.qrels"
    qrels.write_text("1 0 d1 " + "9" * 500_000 + "\n")     # under NDCG_LAB_MAX_LINE
    run = tmp_path / "r.run"
    run.write_text("1 Q0 d1 1 1.0 r\n")
    result = subprocess.run([sys.executable, "-m", "metrics", "eval", str(qrels), str(run)], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    line = refused(result)
    assert line.startswith("error: big.qrels line 1: grade '9999") and len(line) < 1000, line[:300]
