"""trec_eval's other judgment files: ``prefs``, ``qrels_prefs``, ``qrels_jg``, and its z-score file.

Each is whitespace-separated text, one record a line, read as trec_eval 10 reads it:

- ``prefs``: ``qid jg jsg docno rel_level`` (a preference judgment group, a sub-group
  within it, and a real-valued level whose order within a sub-group states preferences);
- ``qrels_prefs``: a qrels file ``qid iter docno rel`` read as preferences, the ``iter``
  field naming the judgment group, one sub-group per group;
- ``qrels_jg``: a qrels file whose ``iter`` field names a judgment group (one judge);
- ``zscores``: ``qid measure mean stddev`` (trec_eval ``-Z``).

A line whose first character is ``#`` is a comment in the three judgment files (trec_eval
skips one such line at a time; here every one), never in the z-score file. Any other line
must hold exactly its fields: a blank line or a missing or extra field is refused with the
file, line and problem, as trec_eval refuses it ("Malformed line"). Numbers stay text here:
the measures read them as trec_eval does (C's ``atof``/``atol``).

The files are split into lines and fields in Python: judgment files are small beside runs
(a qrels of 100,000 lines splits in about 0.1 s).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import MetricsError
from .inflate import decompress, read_path

FIELDS = {
    "prefs": ("qid", "jg", "jsg", "docno", "rel"),
    "qrels_prefs": ("qid", "jg", "docno", "rel"),
    "qrels_jg": ("qid", "jg", "docno", "rel"),
    "zscores": ("qid", "measure", "mean", "stddev"),
}
LAYOUT = {
    "prefs": "qid jg jsg docno rel_level",
    "qrels_prefs": "qid iter docno rel",
    "qrels_jg": "qid jg docno rel",
    "zscores": "qid measure mean stddev",
}


@dataclass(frozen=True)
class JudgmentLines:
    """The fields of a file's records as numpy string arrays (one per field), with their line numbers."""

    kind: str
    source: str
    columns: dict
    lines: np.ndarray

    def __len__(self) -> int:
        return len(self.lines)

    def column(self, name: str) -> np.ndarray:
        return self.columns[name]


def read_judgment_lines(src, kind: str, *, source: str | None = None) -> JudgmentLines:
    """Read a ``prefs``, ``qrels_prefs``, ``qrels_jg`` or ``zscores`` file (a path or bytes)."""
    if kind not in FIELDS:
        raise MetricsError(f"unknown judgment file kind {kind!r}", fix=f"one of {', '.join(FIELDS)}")
    if isinstance(src, (bytes, bytearray)):
        label = source or f"<{kind}>"
        data = bytes(src)
    else:
        label = source or str(src)
        try:
            data = read_path(Path(src), label)
        except OSError as exc:
            raise MetricsError(f"cannot read the {kind} file: {exc.strerror or exc}", source=label,
                               fix="check the path") from None
    data = decompress(data, label)
    if not data:
        raise MetricsError(f"the {kind} file is empty", source=label, fix=f"one record a line: {LAYOUT[kind]}")
    names = FIELDS[kind]
    rows: list[list[str]] = []
    numbers: list[int] = []
    comments = kind != "zscores"
    text = data.decode("utf-8", errors="surrogateescape")
    body = text[:-1] if text.endswith("\n") else text
    for number, line in enumerate(body.split("\n"), start=1):
        if comments and line.startswith("#"):
            continue
        fields = line.split()
        if len(fields) != len(names):
            problem = "a blank line" if not fields else f"expected {len(names)} fields, found {len(fields)}"
            raise MetricsError(f"malformed {kind} line: {problem}", source=label, line=number,
                               fix=f"one record a line: {LAYOUT[kind]}")
        rows.append(fields)
        numbers.append(number)
    if not rows:
        raise MetricsError(f"the {kind} file holds no records", source=label, fix=f"one record a line: {LAYOUT[kind]}")
    table = np.array(rows, dtype=object)
    columns = {name: table[:, i] for i, name in enumerate(names)}
    return JudgmentLines(kind, label, columns, np.asarray(numbers, dtype=np.int64))


__all__ = ["FIELDS", "JudgmentLines", "read_judgment_lines"]
