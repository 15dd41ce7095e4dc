"""Shared inputs and checks of the metrics.io tests: a three-line run and qrels, their rows, and
``fails``, which checks the four parts of a MetricsError (file, line, problem, fix)."""
from __future__ import annotations

import re

import pytest

from metrics.errors import MetricsError

RUN = b"007 Q0 d1 1 3.0 bm25\n007 Q0 d2 2 2.0 bm25\n008 Q0 d1 1 1.5 bm25\n"
QRELS = b"007 0 d1 1\n007 0 d2 0\n008 0 d1 2\n"
RUN_ROWS = [("007", "d1", 3.0, 1, "bm25"), ("007", "d2", 2.0, 2, "bm25"), ("008", "d1", 1.5, 1, "bm25")]
QRELS_ROWS = [("007", "d1", 1), ("007", "d2", 0), ("008", "d1", 2)]


def rows(parsed) -> list[tuple]:
    return [tuple(r.values()) for r in parsed.table.to_pylist()]


def fails(fn, *, source: str, line: int | None, problem: str, fix: str) -> MetricsError:
    """Run ``fn``, expect a MetricsError naming source, line, problem (regex) and fix (substring)."""
    with pytest.raises(MetricsError) as info:
        fn()
    err = info.value
    text = str(err)
    assert err.source == source and source in text
    assert err.line == line
    if line is not None:
        assert text.startswith(f"{source} line {line}: ")
    assert re.search(problem, err.problem), err.problem
    assert err.fix and fix in err.fix and fix in text
    return err


def write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path
