"""Small inputs for the analysis tests: qrels from (qid, docno, grade) rows, runs from ranked lists."""
from __future__ import annotations

import pandas as pd

import metrics


def qrels_of(rows):
    """Qrels from (qid, docno, grade) rows."""
    return metrics.read_qrels(pd.DataFrame(rows, columns=["qid", "docno", "label"]))


def run_of(lists: dict, name: str):
    """A run from {qid: [docno, ...]} in rank order (scores n, n-1, ..., 1)."""
    rows = [(q, d, float(len(docs) - i)) for q, docs in lists.items() for i, d in enumerate(docs)]
    return metrics.read_run(pd.DataFrame(rows, columns=["qid", "docno", "score"]), name=name)
