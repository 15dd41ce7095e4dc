"""Time the scale-out engines (local, streaming, dask) beside pytrec_eval and trec_eval on one large run.

    python bench/bench_scale.py --lines 10000000                 # generate (once) and time every engine
    python bench/bench_scale.py --lines 50000000 --engines default,local,streaming,dask-1,dask-2 --repeats 3

The section ends with the figures the scale targets name (default engine time and peak RSS; local
against streaming; Dask with 2 workers against 1), each with its target and the command.

The run is MS-MARCO-dev-shaped (1000 documents per query, ~1.07 judgments per query, grade 1),
made by the seeded generators of bench/generate.py in blocks of queries, so that any --lines
fits in memory while it is written: bench/data/scale-{lines}-run.txt and -qrels.txt.

Every engine runs in a fresh subprocess (its peak RSS is its own ru_maxrss; for dask the
largest worker's too, asked from the workers before the cluster closes) and times whole
evaluations of the suite of bench/run.py: parsing, partitioning and scoring included, Dask
cluster start-up excluded (reported apart). Each engine also reports a sha256 of its per-query
values, so the table shows whether the engines agree bit for bit.
Results go to bench/RESULTS_SCALE.md (the section of the size run is replaced).
"""
from __future__ import annotations

import argparse
import datetime as dt
import gc
import hashlib
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DATA = BENCH / "data"
RESULTS = BENCH / "RESULTS_SCALE.md"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(BENCH))

from run import MEASURES, PYTREC_MEASURES, machine, trec_dicts  # noqa: E402

ENGINES = ["default", "local", "streaming", "bucketed", "dask-1", "dask-2", "pytrec_eval", "trec_eval"]
NOTES = {
    "default": "`metrics.evaluate(qrels, run, suite)` with no engine named: streaming when the run file holds "
               "more text than `streaming_threshold()` (RAM / 16), else local (`buckets.choose_engine`)",
    "local": "`metrics.evaluate(..., engine=\"local\")`: a run file of 64 MB or more whose queries come one "
             "after another is read in one pass, as `streaming`; any other run is parsed whole in memory, ranked "
             "and scored",
    "streaming": "`metrics.evaluate(..., engine=\"streaming\")`: a run whose queries come one after another "
                 "is read and scored in one pass, a query at a time, on one thread per core "
                 "(`metrics.engines.contiguous`: no buckets, so no partition s, score s or buckets); any other "
                 "run as `bucketed`",
    "bucketed": "`metrics.evaluate(..., engine=\"streaming\", buckets=N)` (N: `default_buckets`): partition "
                "into buckets by crc32(qid) (Arrow IPC, bounded memory), then score the buckets on one thread "
                "per core in this process",
    "dask-1": "`metrics.evaluate(..., engine=\"dask\", scheduler=...)` on a LocalCluster of 1 worker process "
              "(1 thread): partition tasks and bucket tasks run on the worker",
    "dask-2": "the same on a LocalCluster of 2 worker processes (1 thread each)",
    "pytrec_eval": "plain-Python reader into dicts + `RelevanceEvaluator(qrels, measures).evaluate(run)`",
    "trec_eval": "the trec_eval binary (`trec_eval -c -m ... qrels run`)",
}
QUERIES_PER_BLOCK = 5000


def paths(lines: int) -> tuple[Path, Path]:
    return DATA / f"scale-{lines}-qrels.txt", DATA / f"scale-{lines}-run.txt"


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --------------------------------------------------------------------------- data


def generate(lines: int) -> None:
    """Write the run and qrels for ``lines`` run lines (1000 per query), block by block."""
    import generate as gen
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv

    qrels_path, run_path = paths(lines)
    if qrels_path.exists() and run_path.exists():
        return
    DATA.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    queries = max(1, lines // gen.DEPTH)
    rng = np.random.default_rng([gen.SEED, 99, lines])
    qids = gen.query_ids(rng, queries, 2, max(2 + queries, 1_102_402))
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    run_tmp, qrels_tmp = run_path.with_suffix(".tmp"), qrels_path.with_suffix(".tmp")
    judged = []
    with pa.OSFile(str(run_tmp), "wb") as sink:
        writer = None
        for start in range(0, queries, QUERIES_PER_BLOCK):
            block = qids[start:start + QUERIES_PER_BLOCK]
            n = len(block)
            docnos = gen.run_docnos(rng, n)
            scores = gen.run_scores(rng, n)
            index = pa.array(np.repeat(np.arange(n), gen.DEPTH))
            zeros = pa.array(np.zeros(n * gen.DEPTH, dtype=np.int32))
            table = pa.table({
                "qid": pa.array(block).take(index), "q0": pa.array(["Q0"]).take(zeros),
                "docno": pa.array(docnos.ravel()), "rank": pa.array(np.tile(np.arange(1, gen.DEPTH + 1), n)),
                "score": pa.array(scores.ravel()), "tag": pa.array(["bench"]).take(zeros)})
            if writer is None:
                writer = pacsv.CSVWriter(sink, table.schema, write_options=options)
            writer.write_table(table)
            # ~1.07 relevant passages per query, found in 85% of cases at a log-uniform rank
            per_query = 1 + (rng.random(n) < 0.07)
            q = np.repeat(np.arange(n), per_query)
            found = rng.random(len(q)) < 0.85
            rank = np.minimum(np.floor(np.exp(rng.uniform(0, np.log(gen.DEPTH), len(q)))), gen.DEPTH).astype(int)
            judged.append((block[q], np.where(found, docnos[q, rank - 1], rng.integers(0, gen.PASSAGES, len(q)))))
        writer.close()
    judged_q = np.concatenate([j[0] for j in judged])
    judged_d = np.concatenate([j[1] for j in judged])
    q, d, g = gen.unique_judgments(judged_q, judged_d, np.ones(len(judged_q), dtype=np.int64))
    gen.write_qrels(qrels_tmp, q, d, g)
    run_tmp.replace(run_path)
    qrels_tmp.replace(qrels_path)
    print(f"generated {run_path.name}: {queries:,} queries, {queries * gen.DEPTH:,} lines, "
          f"{run_path.stat().st_size / 1e9:.2f} GB, {len(g):,} judgments in {time.perf_counter() - started:.0f} s",
          flush=True)


# --------------------------------------------------------------------------- engines (in the subprocess)


def values_digest(frame) -> str:
    """sha256 of the per-query values (system name left out) in frame order."""
    import numpy as np

    h = hashlib.sha256()
    h.update("\n".join(frame["qid"].astype(str)).encode())
    h.update("\n".join(frame["measure"].astype(str)).encode())
    h.update(np.ascontiguousarray(frame["value"].to_numpy(dtype=np.float64)).tobytes())
    return h.hexdigest()[:16]


def worker(engine: str, lines: int, repeats: int, buckets: int | None) -> dict:

    import metrics

    qrels_path, run_path = paths(lines)
    result: dict = {"engine": engine, "rss_after_import_mb": rss_mb(), "repeats": []}
    cluster = client = None
    options: dict = {}
    if engine.startswith("dask"):
        from dask.distributed import Client

        from metrics import engines as scale
        started = time.perf_counter()
        cluster = scale.local_cluster(int(engine.split("-")[1]), memory_limit=0)
        client = Client(cluster)
        result["cluster_start_s"] = time.perf_counter() - started
        options = {"engine": "dask", "scheduler": cluster.scheduler_address, "buckets": buckets}
    elif engine == "streaming":
        options = {"engine": "streaming", "buckets": buckets}
    elif engine == "bucketed":
        from metrics.engines.buckets import default_buckets, local_threads
        options = {"engine": "streaming",
                   "buckets": buckets or default_buckets(run_path.stat().st_size, workers=local_threads())}
    elif engine == "local":
        options = {"engine": "local"}
    elif engine == "default":
        from metrics.engines.buckets import choose_engine
        result["picked"] = choose_engine(str(run_path))
    for _ in range(repeats):
        gc.collect()
        marks: list[tuple[float, str]] = []
        started = time.perf_counter()
        if engine == "pytrec_eval":
            import pytrec_eval
            qrels, run = trec_dicts(qrels_path, run_path)
            read = time.perf_counter()
            per_query = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES).evaluate(run)
            total = time.perf_counter() - started
            result["ndcg10"] = statistics.fmean(v["ndcg_cut_10"] for v in per_query.values())
            result["repeats"].append({"total": total, "read": read - started})
            del qrels, run, per_query
            continue
        frame = metrics.evaluate(str(qrels_path), str(run_path), MEASURES,
                                 progress=lambda done, total, message, marks=marks: marks.append(
                                     (time.perf_counter(), message)),
                                 **options)
        total = time.perf_counter() - started
        rep = {"total": total}
        partitioned = [t for t, m in marks if m.startswith("partition")]
        buckets_done = [t for t, m in marks if m.startswith("evaluated bucket")]
        if partitioned and buckets_done:
            rep["partition"] = partitioned[-1] - started
            rep["evaluate"] = buckets_done[-1] - partitioned[-1]
            rep["buckets"] = len(buckets_done)
        result["repeats"].append(rep)
        ndcg = frame[frame["measure"] == "nDCG@10"]["value"]
        result["ndcg10"] = float(ndcg.mean())
        result["queries"] = int(len(ndcg))
        result["digest"] = values_digest(frame)
        del frame
    result["peak_rss_mb"] = rss_mb()
    if client is not None:
        worker_rss = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        result["worker_peak_rss_mb"] = max(worker_rss.values())
        client.close()
        cluster.close()
    return result


# --------------------------------------------------------------------------- driver


def trec_eval_binary() -> str | None:
    return shutil.which("trec_eval")


def run_trec_eval(lines: int, repeats: int, timeout: float) -> dict:
    """trec_eval as a child process: wall time and its peak RSS (RUSAGE_CHILDREN)."""
    binary = trec_eval_binary()
    if binary is None:
        return {"error": "not installed: no PyPI or Debian package ships the trec_eval binary "
                         "(pytrec-eval-terrier's sdist fetches trec_eval's source from GitHub at build time)"}
    qrels_path, run_path = paths(lines)
    args = [binary, "-c", "-m", "ndcg_cut.5,10,20,100,1000", "-m", "map", "-m", "recip_rank",
            "-m", "recall.10,100,1000", "-m", "P.5,10", str(qrels_path), str(run_path)]
    totals = []
    for _ in range(repeats):
        started = time.perf_counter()
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        totals.append(time.perf_counter() - started)
        if done.returncode != 0:
            return {"error": done.stderr.strip().splitlines()[-1]}
    ndcg = next(float(x.split()[2]) for x in done.stdout.splitlines() if x.startswith("ndcg_cut_10 "))
    return {"repeats": [{"total": t} for t in totals], "ndcg10": ndcg,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


def spawn(args: list[str], timeout: float) -> dict:
    command = [sys.executable, str(Path(__file__).resolve()), *args]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-8:])
    return {"error": f"exit {done.returncode}: {tail}"}


def summarise(result: dict) -> dict:
    if "error" in result:
        return result
    reps = result["repeats"]
    result["median_s"] = statistics.median(r["total"] for r in reps)
    for key in ("partition", "evaluate", "read"):
        if all(key in r for r in reps):
            result[f"median_{key}_s"] = statistics.median(r[key] for r in reps)
    if reps and "buckets" in reps[-1]:
        result["buckets"] = reps[-1]["buckets"]
    return result


def table(results: list[dict], lines: int) -> list[str]:
    local = next((r for r in results if r["engine"] == "local" and "error" not in r), None)
    one = next((r for r in results if r["engine"] == "dask-1" and "error" not in r), None)
    rows = ["| engine | median s | ratio to local | partition s | score s | buckets | lines/s | "
            "peak RSS MB | worker peak RSS MB | mean nDCG@10 | per-query values sha256 |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        if "error" in r:
            rows.append(f"| {r['engine']} | {r['error'].splitlines()[-1][:200].replace('|', '/')} "
                        "| | | | | | | | | |")
            continue
        ratio = f"{r['median_s'] / local['median_s']:.2f}" if local else "–"
        if r["engine"] == "dask-2" and one:
            ratio += f" (speed-up over 1 worker: {one['median_s'] / r['median_s']:.2f}x)"
        rows.append(
            f"| {r['engine']} | {r['median_s']:.1f} | {ratio} | {_num(r.get('median_partition_s'))} "
            f"| {_num(r.get('median_evaluate_s'))} | {r.get('buckets', '–')} | {lines / r['median_s']:,.0f} "
            f"| {r['peak_rss_mb']:,.0f} | {_num(r.get('worker_peak_rss_mb'), 0)} "
            f"| {r['ndcg10']:.6f} | {r.get('digest', '–')} |")
    return rows


def _num(value, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def section(lines: int, results: list[dict], command: str, repeats: int) -> str:
    qrels_path, run_path = paths(lines)
    size = run_path.stat().st_size
    starts = [f"{r['engine']} {r['cluster_start_s']:.1f} s" for r in results if "cluster_start_s" in r]
    body = [f"<!-- lines:{lines} -->", f"## {lines:,} run lines", "",
            f"Data: `{run_path.relative_to(REPO)}` ({size / 1e9:.2f} GB of TREC text, {lines // 1000:,} queries "
            f"x 1000 documents), `{qrels_path.relative_to(REPO)}`.  ",
            f"Command: `{command}` ({repeats} repeat{'s' if repeats > 1 else ''}, median).  ",
            f"Date: {dt.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}; load average before: "
            f"{os.getloadavg()[0]:.1f}.  ",
            f"Machine: {machine()}.", ""]
    body += table(results, lines)
    if starts:
        body += ["", "Dask LocalCluster start-up (not in the times): " + ", ".join(starts) + "."]
    groups: dict[str, list[str]] = {}
    for r in results:
        if r.get("digest"):
            groups.setdefault(r["digest"], []).append(r["engine"])
    if groups:
        body += ["", "Per-query values identical across our engines (one sha256): " + (
            "yes" if len(groups) == 1 else
            "NO: " + "; ".join(f"{', '.join(engines)} give {digest}" for digest, engines in groups.items())) + "."]
    reference = next((r for r in results if r["engine"] == "pytrec_eval" and "error" not in r), None)
    if reference is not None:
        same = [r["engine"] for r in results if r.get("digest") and abs(r["ndcg10"] - reference["ndcg10"]) <= 1e-9]
        other = [r["engine"] for r in results if r.get("digest") and r["engine"] not in same]
        body += ["", f"Mean nDCG@10 equal to pytrec_eval's (to 1e-9): {', '.join(same) or 'none'}"
                 + (f"; different: {', '.join(other)}" if other else "") + "."]
    body += ["", *targets(results, command)]
    body.append(f"<!-- /lines:{lines} -->")
    return "\n".join(body)


def targets(results: list[dict], command: str) -> list[str]:
    """The figures the scale targets name (the default engine within 10 s and 1 GB; Dask with 2
    workers at least 1.7x faster than with 1) as a markdown table, with the command that measured them."""
    by = {r["engine"]: r for r in results if "error" not in r}
    rows = ["Scale targets:", "",
            "| figure | measured | target | met | command |", "|---|---:|---:|---|---|"]
    if "default" in by:
        r = by["default"]
        rows.append(f"| default engine ({r.get('picked', '?')}): median time, peak RSS | {r['median_s']:.1f} s, "
                    f"{r['peak_rss_mb'] / 1024:.2f} GB | <= 10 s, <= 1 GB | "
                    f"{'yes' if r['median_s'] <= 10 and r['peak_rss_mb'] <= 1024 else 'no'} | `{command}` |")
    if "local" in by and "streaming" in by:
        a, b = by["local"], by["streaming"]
        rows.append(f"| local vs streaming: median time, peak RSS | {a['median_s']:.1f} s, "
                    f"{a['peak_rss_mb'] / 1024:.2f} GB vs {b['median_s']:.1f} s, {b['peak_rss_mb'] / 1024:.2f} GB "
                    f"| (default streams above RAM / 16) | – | `{command}` |")
    if "dask-1" in by and "dask-2" in by:
        speed = by["dask-1"]["median_s"] / by["dask-2"]["median_s"]
        rows.append(f"| Dask 2 workers over 1: speed-up of the medians | {speed:.2f}x "
                    f"({by['dask-1']['median_s']:.1f} s / {by['dask-2']['median_s']:.1f} s) | >= 1.7x | "
                    f"{'yes' if speed >= 1.7 else 'no'} | `{command}` |")
    return rows if len(rows) > 4 else []


HEADER = """# Scale-out benchmark results

Written by `bench/bench_scale.py`; do not edit by hand. Suite: {measures}.
Each row is one fresh subprocess timing whole evaluations (parse/partition + score) of one run;
peak RSS is the subprocess's ru_maxrss (for dask also the largest worker process's).
"lines/s" is run lines divided by the median time. "partition s" and "score s" split the
streaming and dask times into the partition phase and the bucket-scoring phase.

{engines}
"""


def write_results(lines: int, text: str) -> None:
    old = RESULTS.read_text() if RESULTS.exists() else ""
    sections = {int(m.group(1)): m.group(0) for m in re.finditer(r"<!-- lines:(\d+) -->.*?<!-- /lines:\1 -->",
                                                                   old, flags=re.S)}
    sections[lines] = text
    header = HEADER.format(measures=", ".join(MEASURES),
                           engines="\n".join(f"- **{k}**: {v}" for k, v in NOTES.items()))
    RESULTS.write_text(header + "\n" + "\n\n".join(sections[k] for k in sorted(sections)) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=10_000_000, help="run lines (1000 per query)")
    parser.add_argument("--engines", default=",".join(ENGINES), help="comma-separated: " + ",".join(ENGINES))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--buckets", type=int, default=None, help="buckets (default: metrics.scale's rule)")
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--worker", metavar="ENGINE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print("RESULT " + json.dumps(worker(args.worker, args.lines, args.repeats, args.buckets)), flush=True)
        return 0
    engines = [e for e in args.engines.split(",") if e]
    unknown = set(engines) - set(ENGINES)
    if unknown:
        parser.error(f"unknown engine {sorted(unknown)}; choose from {ENGINES}")
    generate(args.lines)
    command = "python bench/bench_scale.py " + " ".join(argv if argv is not None else sys.argv[1:])
    results = []
    for engine in engines:
        print(f"{engine} ...", end=" ", flush=True)
        started = time.perf_counter()
        if engine == "trec_eval":
            result = run_trec_eval(args.lines, args.repeats, args.timeout)
        else:
            extra = ["--buckets", str(args.buckets)] if args.buckets else []
            try:
                result = spawn(["--worker", engine, "--lines", str(args.lines), "--repeats", str(args.repeats),
                                *extra], args.timeout)
            except subprocess.TimeoutExpired:
                result = {"error": f"timed out after {args.timeout:.0f} s"}
        result = summarise({**result, "engine": engine})
        results.append(result)
        if "error" in result:
            print(f"FAILED: {result['error'].splitlines()[-1]}", flush=True)
        else:
            print(f"median {result['median_s']:.1f} s, peak RSS {result['peak_rss_mb']:,.0f} MB"
                  + (f" (workers {result['worker_peak_rss_mb']:,.0f} MB)" if "worker_peak_rss_mb" in result else "")
                  + f", nDCG@10 {result['ndcg10']:.6f} ({time.perf_counter() - started:.0f} s wall)", flush=True)
    text = section(args.lines, results, command, args.repeats)
    print(text)
    if not args.no_write:
        write_results(args.lines, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
