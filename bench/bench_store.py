"""Storing the 7M-line run in a workspace, and re-evaluating it from the store in a fresh process.

    python bench/bench_store.py [--dataset dev] [--repeats 3] [--evals 5]

Times (``time.perf_counter``):
- ``add_run``: ``Workspace.add_run`` of the parsed run into a fresh workspace (the run is read with
  ``metrics.io.read_run`` once, outside the timing), median of ``--repeats``;
- the first ``load_ranked`` (order, join, write the ranked cache);
- re-evaluation after a setting change, each in a fresh process (no in-memory cache): open the
  workspace, ``load_ranked``, ``evaluate_ranked`` with the changed measure; median of ``--evals``,
  in-process time (open, load, evaluate) and whole process. Values are checked to equal
  ``metrics.evaluate`` on the text files exactly. One row ranks from ``load_run`` instead, as
  a new session did before the cache.
Prints a Markdown table; the size on disk is the DuckDB file (and WAL) plus the cache files.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import metrics  # noqa: E402
from metrics import io  # noqa: E402
from metrics.store import Workspace  # noqa: E402

CACHED = 'ws.load_ranked("bench", "run")'
UNCACHED = ('__import__("metrics.ranking").ranking.rank(ws.load_run("bench", "run"), ws.load_qrels("bench"), '
            'name="run")')
SETTINGS = {"gain linear -> exp": "nDCG(dcg='exp-log2')@10", "cutoff nDCG@10 -> nDCG@20": "nDCG@20",
            "measure AP": "AP"}

CHILD = """
import sys, time, json
t0 = time.perf_counter()
sys.path.insert(0, {root!r})
from metrics.store import Workspace
from metrics import evaluate_ranked
import numpy as np
import pandas  # pyarrow imports it on its first numpy conversion: an import, timed with the others
t1 = time.perf_counter()
ws = Workspace({path!r})
ranked = {load}
values = evaluate_ranked(ranked, [{measure!r}])[{measure!r}]
t2 = time.perf_counter()
np.save({out!r}, values)
print(json.dumps({{"imports": t1 - t0, "eval": t2 - t1}}))
"""


def disk_size(path: Path) -> tuple[int, int]:
    """(bytes of the DuckDB file and its WAL, bytes of the ranked cache files)."""
    db = sum(p.stat().st_size for p in (path, Path(f"{path}.wal")) if p.exists())
    cache = Path(f"{path}.cache")
    return db, sum(p.stat().st_size for p in cache.iterdir()) if cache.exists() else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="dev")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--evals", type=int, default=5)
    args = parser.parse_args()
    data = ROOT / "bench" / "data"
    run_path, qrels_path = data / f"{args.dataset}-run.txt", data / f"{args.dataset}-qrels.txt"
    run, qrels = io.read_run(run_path), io.read_qrels(qrels_path)
    tmp = Path(tempfile.mkdtemp(prefix="bench-store-"))

    adds = []
    for i in range(args.repeats):
        path = tmp / f"add{i}" / "workspace.duckdb"
        with Workspace(path) as ws:
            ws.create_collection("bench", qrels)
            start = time.perf_counter()
            ws.add_run("bench", run, name="run")
            adds.append(time.perf_counter() - start)
    with Workspace(path) as ws:
        start = time.perf_counter()
        ws.load_ranked("bench", "run")
        first = time.perf_counter() - start
        start = time.perf_counter()
        ws.load_run("bench", "run")
        load_run = time.perf_counter() - start
    db_bytes, cache_bytes = disk_size(path)

    expected = metrics.evaluate(qrels_path, run_path, list(SETTINGS.values()))
    cases = [(label, measure, CACHED, args.evals) for label, measure in SETTINGS.items()]
    cases.append(("without the cache (load_run + rank), for comparison", "AP", UNCACHED, 3))
    rows = []
    for label, measure, load, repeats in cases:
        want = expected[expected["measure"] == measure]["value"].to_numpy()
        evals, whole, imports, exact = [], [], [], True
        for j in range(repeats):
            out = tmp / f"values{j}.npy"
            code = CHILD.format(root=str(ROOT), path=str(path), measure=measure, out=str(out), load=load)
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
            whole.append(time.perf_counter() - start)
            times = json.loads(done.stdout.strip().splitlines()[-1])
            evals.append(times["eval"])
            imports.append(times["imports"])
            exact &= bool(np.array_equal(np.load(out), want))
        rows.append((label, measure, statistics.median(evals), statistics.median(whole), statistics.median(imports),
                     exact, repeats))

    print(f"7M-line store benchmark ({args.dataset}: {run.table.num_rows:,} lines), "
          f"`python bench/bench_store.py --dataset {args.dataset} "
          f"--repeats {args.repeats} --evals {args.evals}`\n")
    print("| step | time | note |\n|---|---:|---|")
    print(f"| `add_run` (median of {args.repeats}, fresh workspace each) | {statistics.median(adds):.2f} s | "
          f"runs: {', '.join(f'{a:.2f}' for a in adds)} |")
    print(f"| first `load_ranked` (order, join, write the cache) | {first:.2f} s | |")
    print(f"| `load_run` (file order, from DuckDB) | {load_run:.2f} s | |")
    for label, measure, inproc, whole, imported, exact, repeats in rows:
        print(f"| re-evaluate, {label} (`{measure}`), fresh process, median of {repeats} | {inproc:.3f} s | "
              f"whole process {whole:.2f} s, of which imports {imported:.2f} s; equals metrics.evaluate: "
              f"{'yes' if exact else 'NO'} |")
    print(f"\nSize on disk: DuckDB {db_bytes / 1e6:.1f} MB + ranked cache {cache_bytes / 1e6:.1f} MB "
          f"= {(db_bytes + cache_bytes) / 1e6:.1f} MB (text run: {run_path.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
