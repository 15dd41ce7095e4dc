"""Time RRF fusion of two MS-MARCO-dev-sized runs, ours beside ranx, in the same process.

    python bench/bench_fusion.py                           # 2 runs x 6,980 queries x 1000 docs = 2 x 6.98M lines
    python bench/bench_fusion.py --queries 300 --repeats 3 # a small, quick size

Two seeded runs shaped like bench/generate.py's ``dev`` run (MS MARCO passage docnos, 1000
documents per query, scores on a 1/1024 grid with ~5% of neighbours tied); the second
shares about half of each query's documents with the first, at other ranks. Rows (median of
``--repeats`` timed calls after one untimed warm-up, which also JIT-compiles ranx's numba code):

- building the inputs from the same pandas frames: ``metrics.read_run`` (validation, digest)
  and ``ranx.Run.from_df`` (numba typed dicts, sorted);
- fusing: ``metrics.analysis.fusion.fuse(..., "rrf", k=60)`` (canonical ranks, union of
  candidates, written order: fused score desc, docno desc) and ``ranx.fuse(norm=None,
  method="rrf")`` (ranks from its own sort, ties in arbitrary order).

With ``--check`` the fused scores are compared document by document on the first 50 queries
(scores only: the two break ties differently, see DESIGN.md). Prints a Markdown table.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_stats import timed  # noqa: E402  (median of repeats after a warm-up)

from metrics import read_run  # noqa: E402
from metrics.analysis.fusion import fuse  # noqa: E402

PASSAGES = 8_841_823
STEP = 1 / 1024


def make_runs(queries: int, depth: int, seed: int = 20241) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two runs as frames (qid, docno, score): distinct docnos per query, half of them shared."""
    rng = np.random.default_rng(seed)
    qids = np.sort(rng.choice(np.arange(1, 1_200_000), size=queries, replace=False)).astype(str)
    start = rng.integers(0, PASSAGES, queries)
    stride = rng.integers(1, PASSAGES, queries)
    while (bad := np.gcd(stride, PASSAGES) != 1).any():
        stride[bad] = rng.integers(1, PASSAGES, int(bad.sum()))
    # positions 0..2*depth-1 map to distinct docnos; run 1 takes [0, depth), run 2 [depth/2, 3*depth/2)
    first = rng.permuted(np.tile(np.arange(depth), (queries, 1)), axis=1)
    second = rng.permuted(np.tile(np.arange(depth // 2, depth // 2 + depth), (queries, 1)), axis=1)
    frames = []
    for positions in (first, second):
        docno = ((start[:, None] + positions * stride[:, None]) % PASSAGES).ravel()
        top = np.round(rng.uniform(30.0, 45.0, queries) / STEP) * STEP
        gaps = np.floor(rng.exponential(0.02, (queries, depth - 1)) / STEP) * STEP
        scores = np.concatenate([top[:, None], top[:, None] - np.cumsum(gaps, axis=1)], axis=1).ravel()
        frames.append(pd.DataFrame({"qid": np.repeat(qids, depth), "docno": docno.astype(str), "score": scores}))
    return frames[0], frames[1]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--queries", type=int, default=6980)
    p.add_argument("--depth", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--no-ranx", action="store_true", help="time ours only")
    p.add_argument("--check", action="store_true", help="compare fused scores with ranx on 50 queries")
    args = p.parse_args(argv)

    left, right = make_runs(args.queries, args.depth)
    lines = len(left)
    rows = []
    t, runs = timed(lambda: [read_run(left, name="a"), read_run(right, name="b")], args.repeats)
    rows.append(("ours: read_run of both frames", t))
    t, (fused, _) = timed(lambda: fuse(runs, "rrf", k=60), args.repeats)
    rows.append(("ours: fuse rrf k=60", t))
    theirs = None
    if not args.no_ranx:
        import ranx

        def ranx_runs():
            return [ranx.Run.from_df(f.astype({"qid": object, "docno": object}), q_id_col="qid",
                                     doc_id_col="docno", score_col="score") for f in (left, right)]

        t, peer_runs = timed(ranx_runs, args.repeats)
        rows.append(("ranx: Run.from_df of both frames", t))
        t, theirs = timed(lambda: ranx.fuse(peer_runs, norm=None, method="rrf", params={"k": 60}), args.repeats)
        rows.append(("ranx: fuse rrf k=60", t))

    print(f"RRF of 2 runs x {args.queries:,} queries x {args.depth} documents = 2 x {lines:,} lines; "
          f"{len(fused):,} fused lines; median of {args.repeats}; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}\n")
    print("| step | seconds |\n|---|---:|")
    for name, seconds in rows:
        print(f"| {name} | {seconds:.2f} |")
    if args.check and theirs is not None:
        qids = sorted(set(left["qid"]))[:50]
        table = fused.df[fused.df["qid"].isin(qids)]
        ours = {(q, d): s for q, d, s in zip(table["qid"], table["docno"], table["score"])}
        peer = {(q, d): s for q, docs in theirs.to_dict().items() if q in qids for d, s in docs.items()}
        # a tied document's rank depends on the tie rule; compare the documents untied in every input
        tied = set()
        for frame in (left, right):
            sub = frame[frame["qid"].isin(qids)]
            tied |= set(zip(*sub[sub.duplicated(["qid", "score"], keep=False)][["qid", "docno"]].T.values))
        keys = [key for key in peer if key not in tied]
        worst = max(abs(ours[key] - peer[key]) for key in keys) if ours.keys() == peer.keys() else float("inf")
        print(f"\ncheck on {len(qids)} queries: same documents: {ours.keys() == peer.keys()}; largest score "
              f"difference over the {len(keys):,} documents untied in every input: {worst:.3g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
