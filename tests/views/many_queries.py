"""A workspace of many one-judgment queries and two runs: "a" finds the relevant document at rank 1
on every query, "b" at a rank that turns with the query (the pages' drawings beyond their limits)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

import metrics
from metrics.store import Workspace


def home_of_two_runs(tmp_path: Path, n: int, depth: int) -> Path:
    """NDCG_LAB_HOME of a workspace whose collection "many" holds ``n`` queries q0.. with one relevant
    document "rel" each, and runs "a" (rel first, then ``depth - 1`` others) and "b" (the same
    documents, rel at rank 1 + i % depth on query i)."""
    qids = [f"q{i}" for i in range(n)]
    qrels = pd.DataFrame({"qid": qids, "docno": "rel", "rel": 1})
    docnos = ["rel", *(f"x{j}" for j in range(1, depth))]
    scores = [float(depth - j) for j in range(depth)]
    first = pd.DataFrame({"qid": np.repeat(qids, depth), "docno": docnos * n, "score": scores * n})
    second = first.assign(score=[s for i in range(n) for s in np.roll(scores, i % depth)])
    home = tmp_path / "home"
    home.mkdir()
    with Workspace(home / "workspace.duckdb") as ws:
        ws.create_collection("many", metrics.read_qrels(qrels))
        ws.add_run("many", metrics.read_run(first, name="a"), name="a")
        ws.add_run("many", metrics.read_run(second, name="b"), name="b")
    return home
