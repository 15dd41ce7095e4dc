"""Write the benchmark collections to bench/data/ (seeded, so every machine gets the same bytes).

    python bench/generate.py            # skips files that already exist
    python bench/generate.py --force    # writes them again

Two collections shaped like the ones people evaluate most:

  dl   TREC-DL-like: 43 queries x 1000 docs, ~200 graded (0-3) judgments per query,
       most of them from the top of the run (pooled), some from outside it.
  dev  MS-MARCO-dev-like: 6,980 queries x 1000 docs = 6.98M run lines, ~1.07 judgments
       per query, all grade 1.

Files per collection: {name}-qrels.txt (qid 0 docno rel), {name}-run.txt and {name}-run.txt.gz
(qid Q0 docno rank score tag). Query ids are numeric strings, docnos are MS MARCO passage ids.
Scores are multiples of 1/1024 below 64, hence exact in float32 (pytrec_eval's precision),
with ties between neighbours (~5% of adjacent pairs) so that the tie rule matters; the rank
column follows the file order, as most run writers emit it.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

DATA = Path(__file__).resolve().parent / "data"
PASSAGES = 8_841_823  # size of the MS MARCO passage collection: docnos 0..8841822
DEPTH = 1000
SEED = 20241
SCORE_STEP = 1 / 1024


def query_ids(rng: np.random.Generator, count: int, low: int, high: int) -> np.ndarray:
    return np.sort(rng.choice(np.arange(low, high), size=count, replace=False))


def run_docnos(rng: np.random.Generator, queries: int) -> np.ndarray:
    """(queries, DEPTH) docnos, distinct within each query: an affine map a + j*s mod N
    with s prime to N is a bijection, so distinct positions j give distinct docnos."""
    start = rng.integers(0, PASSAGES, queries)
    stride = rng.integers(1, PASSAGES, queries)
    while (bad := np.gcd(stride, PASSAGES) != 1).any():
        stride[bad] = rng.integers(1, PASSAGES, int(bad.sum()))
    positions = rng.permuted(np.tile(np.arange(DEPTH, dtype=np.int64), (queries, 1)), axis=1)
    return (start[:, None] + positions * stride[:, None]) % PASSAGES


def run_scores(rng: np.random.Generator, queries: int) -> np.ndarray:
    """(queries, DEPTH) descending scores on a 1/1024 grid; a zero gap makes a tie."""
    top = np.round(rng.uniform(30.0, 45.0, queries) / SCORE_STEP) * SCORE_STEP
    gaps = np.floor(rng.exponential(0.02, (queries, DEPTH - 1)) / SCORE_STEP) * SCORE_STEP
    scores = np.empty((queries, DEPTH))
    scores[:, 0] = top
    scores[:, 1:] = top[:, None] - np.cumsum(gaps, axis=1)
    return np.maximum(scores, 1.0)  # keep them positive and on the grid


def write_run(path: Path, qids: np.ndarray, docnos: np.ndarray, scores: np.ndarray) -> None:
    queries, depth = docnos.shape
    query_index = pa.array(np.repeat(np.arange(queries), depth))
    zeros = pa.array(np.zeros(queries * depth, dtype=np.int32))
    table = pa.table({
        "qid": pa.array(qids).take(query_index),
        "q0": pa.array(["Q0"]).take(zeros),
        "docno": pa.array(docnos.ravel()),
        "rank": pa.array(np.tile(np.arange(1, depth + 1), queries)),
        "score": pa.array(scores.ravel()),
        "tag": pa.array(["bench"]).take(zeros),
    })
    write_table(path, table)


def write_qrels(path: Path, qids: np.ndarray, docnos: np.ndarray, grades: np.ndarray) -> None:
    zeros = pa.array(np.zeros(len(qids), dtype=np.int32))
    table = pa.table({"qid": pa.array(qids), "iter": pa.array([0]).take(zeros),
                      "docno": pa.array(docnos), "rel": pa.array(grades)})
    write_table(path, table)


def write_table(path: Path, table: pa.Table) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    pacsv.write_csv(table, tmp, options)
    tmp.replace(path)


def gzip_file(path: Path) -> Path:
    target = path.with_suffix(path.suffix + ".gz")
    tmp = target.with_suffix(".tmp")
    with open(path, "rb") as plain, gzip.open(tmp, "wb", compresslevel=6) as packed:
        shutil.copyfileobj(plain, packed, 1 << 22)
    tmp.replace(target)
    return target


def unique_judgments(qids, docnos, grades):
    """Sorted by (qid, docno), one judgment per pair (the first drawn wins)."""
    order = np.lexsort((docnos, qids))
    qids, docnos, grades = qids[order], docnos[order], grades[order]
    keep = np.ones(len(qids), dtype=bool)
    keep[1:] = (qids[1:] != qids[:-1]) | (docnos[1:] != docnos[:-1])
    return qids[keep], docnos[keep], grades[keep]


def trec_dl(rng: np.random.Generator):
    """43 queries, pooled graded judgments: all of the top 10, thinning with depth,
    plus ~90 per query from outside the run (other systems' pools)."""
    queries = 43
    qids = query_ids(rng, queries, 19_335, 1_133_168)
    docnos = run_docnos(rng, queries)
    scores = run_scores(rng, queries)
    rank = np.arange(1, DEPTH + 1)
    judged_probability = np.minimum(1.0, (10.0 / rank) ** 0.7)[None, :] * rng.uniform(0.8, 1.2, (queries, 1))
    judged = rng.random((queries, DEPTH)) < judged_probability
    q_in, r_in = np.nonzero(judged)
    relevant = rng.random(len(q_in)) < 0.75 * np.exp(-(r_in + 1) / 120) + 0.08
    grade_in = relevant * (1 + rng.binomial(2, 0.25 + 0.35 * np.exp(-(r_in + 1) / 50)))
    outside = rng.integers(60, 120, queries)
    q_out = np.repeat(np.arange(queries), outside)
    doc_out = rng.integers(0, PASSAGES, len(q_out))
    grade_out = (rng.random(len(q_out)) < 0.3) * (1 + rng.binomial(2, 0.3, len(q_out)))
    judgment = unique_judgments(
        np.concatenate([qids[q_in], qids[q_out]]),
        np.concatenate([docnos[q_in, r_in], doc_out]),
        np.concatenate([grade_in, grade_out]).astype(np.int64))
    return qids, docnos, scores, judgment


def msmarco_dev(rng: np.random.Generator):
    """6,980 queries with one relevant passage each (7% have two), found by the run in 85%
    of cases at a log-uniform rank (MRR@10 around 0.2, like BM25)."""
    queries = 6980
    qids = query_ids(rng, queries, 2, 1_102_402)
    docnos = run_docnos(rng, queries)
    scores = run_scores(rng, queries)
    per_query = 1 + (rng.random(queries) < 0.07)
    q = np.repeat(np.arange(queries), per_query)
    found = rng.random(len(q)) < 0.85
    rank = np.minimum(np.floor(np.exp(rng.uniform(0, np.log(DEPTH), len(q)))), DEPTH).astype(np.int64)
    judged_docno = np.where(found, docnos[q, rank - 1], rng.integers(0, PASSAGES, len(q)))
    judgment = unique_judgments(qids[q], judged_docno, np.ones(len(q), dtype=np.int64))
    return qids, docnos, scores, judgment


COLLECTIONS = {"dl": trec_dl, "dev": msmarco_dev}


def generate(name: str, force: bool) -> None:
    run_path, qrels_path = DATA / f"{name}-run.txt", DATA / f"{name}-qrels.txt"
    gz_path = run_path.with_suffix(".txt.gz")
    if not force and all(p.exists() for p in (run_path, qrels_path, gz_path)):
        print(f"{name}: present in {DATA} (--force to write again)")
        return
    started = time.perf_counter()
    rng = np.random.default_rng([SEED, list(COLLECTIONS).index(name)])
    qids, docnos, scores, (judged_qids, judged_docnos, grades) = COLLECTIONS[name](rng)
    write_run(run_path, qids, docnos, scores)
    write_qrels(qrels_path, judged_qids, judged_docnos, grades)
    text_seconds = time.perf_counter() - started
    gzip_file(run_path)
    lines = docnos.size
    print(f"{name}: {len(qids)} queries, {lines:,} run lines, {len(grades):,} judgments "
          f"({len(grades) / len(qids):.2f}/query, grades {np.bincount(grades).tolist()}), "
          f"text {text_seconds:.1f} s, gzip {time.perf_counter() - started - text_seconds:.1f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collections", nargs="*", metavar="{dl,dev}",
                        help="which collections (default: all)")
    parser.add_argument("--force", action="store_true", help="write the files even if present")
    args = parser.parse_args(argv)
    unknown = set(args.collections) - set(COLLECTIONS)
    if unknown:
        parser.error(f"unknown collection {sorted(unknown)}; choose from {list(COLLECTIONS)}")
    DATA.mkdir(parents=True, exist_ok=True)
    for name in args.collections or COLLECTIONS:
        generate(name, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
