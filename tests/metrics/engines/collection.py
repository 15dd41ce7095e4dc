"""A generated collection for the engine tests, with seeded numpy: tied scores, unjudged documents,
negative grades, qrels queries the run lacks (scored 0) and run queries without judgments; one run
is split over six files (plain, tab- and blank-separated with comments, gzip, parquet with tiny
row groups) so that every query straddles files. Pieces, byte ranges and row groups are made tiny
(``TINY``) to push every query across their boundaries too."""
from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

MEASURES = ["nDCG@5", "nDCG@10", "nDCG(dcg='exp-log2')@10", "nDCG", "AP", "RR", "P@5", "R@100",
            "Judged@10", "Rprec", "NumRet", "Success@3"]
TINY = {"piece_bytes": 300, "range_bytes": 1200, "row_group_rows": 4}
MISSING = ("q50", "q51", "q52")       # judged, absent from the run: they score 0
UNJUDGED_QUERIES = ("x1", "x2")       # in the run only: ignored


def make_collection(folder: Path, seed: int = 11) -> tuple[Path, list[Path]]:
    """qrels.txt and a run spread over six files in mixed formats; returns (qrels, files)."""
    rng = np.random.default_rng(seed)
    queries = [f"q{i}" for i in range(56)] + ["101", "9"]
    judged = []
    for q in queries:
        docs = rng.choice(60, size=int(rng.integers(4, 25)), replace=False)
        judged += [f"{q} 0 d{d} {int(g)}" for d, g in zip(docs, rng.choice([-1, 0, 0, 1, 2, 3], len(docs)))]
    qrels = folder / "qrels.txt"
    qrels.write_text("\n".join(judged) + "\n")
    lines = []
    for q in [q for q in queries if q not in MISSING] + list(UNJUDGED_QUERIES):
        docs = rng.choice(60, size=int(rng.integers(3, 40)), replace=False)
        scores = np.round(rng.uniform(0, 3, len(docs)) * 4) / 4          # a coarse grid: many ties
        lines += [(q, f"d{d}", r + 1, float(s)) for r, (d, s) in enumerate(zip(docs, scores))]
    pieces = np.array_split(rng.permutation(len(lines)), 6)
    files = []
    for i, rows in enumerate(pieces):
        rows = [lines[j] for j in sorted(rows)]
        if i == 2:
            path = folder / "part-2.parquet"
            pq.write_table(pa.table({"qid": [r[0] for r in rows], "docno": [r[1] for r in rows],
                                     "rank": [r[2] for r in rows], "score": [r[3] for r in rows]}),
                           path, row_group_size=5)
        else:
            sep = {1: "\t", 3: "  \t "}.get(i, " ")
            text = "".join(f"{q}{sep}Q0{sep}{d}{sep}{k}{sep}{s}{sep}tag\n" for q, d, k, s in rows)
            if i == 3:
                text = "# exported by a search engine\n\n" + text
            if i == 4:
                path = folder / "part-4.txt.gz"
                path.write_bytes(gzip.compress(text.encode()))
            else:
                path = folder / f"part-{i}.txt"
                path.write_text(text)
        files.append(path)
    return qrels, files


def shards(collection):
    qrels, files = collection
    return str(qrels), {"sys": [str(f) for f in files]}
