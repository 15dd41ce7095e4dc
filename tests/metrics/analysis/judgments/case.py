"""The hand-built case of the judgments tests (ranks are 1-based, runs listed best first):

    qrels  q1: d1=2  d2=0  d3=1  d4=0  d9=3        q2: a1=1  a2=0  a3=-1
    A      q1: d2 d1 u1 d3 d4                      q2: a2 u2 a1
    B      q1: u1 d4 d1 d2                         q2: a3 a1 u3
    C      q1: d1 d2                               q2: (nothing)

u1, u2, u3 are unjudged. At depth 3 the judged non-relevant documents in some
top 3 are d2 (A@1), d4 (B@2), a2 (A@1) and a3 (B@1, grade -1).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

import metrics

ROOT = Path(__file__).resolve().parents[4]
LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"

QRELS_ROWS = [("1", "d1", 2), ("1", "d2", 0), ("1", "d3", 1), ("1", "d4", 0), ("1", "d9", 3),
              ("2", "a1", 1), ("2", "a2", 0), ("2", "a3", -1)]
RUNS = {
    "A": {"1": ["d2", "d1", "u1", "d3", "d4"], "2": ["a2", "u2", "a1"]},
    "B": {"1": ["u1", "d4", "d1", "d2"], "2": ["a3", "a1", "u3"]},
    "C": {"1": ["d1", "d2"]},
}


def make_qrels(rows=QRELS_ROWS) -> metrics.Qrels:
    return metrics.read_qrels(pd.DataFrame(rows, columns=["qid", "docno", "label"]))


def make_run(name: str, lists: dict[str, list[str]]) -> metrics.Run:
    rows = [(q, d, float(len(docs) - i)) for q, docs in lists.items() for i, d in enumerate(docs)]
    return metrics.read_run(pd.DataFrame(rows, columns=["qid", "docno", "score"]), name=name)


def records(frame: pd.DataFrame, columns) -> list[tuple]:
    out = []
    for row in frame[list(columns)].itertuples(index=False):
        out.append(tuple(None if (not isinstance(v, (list, dict)) and pd.isna(v)) else
                         (int(v) if isinstance(v, (np.integer,)) else v) for v in row))
    return out
