"""Time nDCG Lab against pytrec_eval, ranx and ir_measures on the collections of bench/generate.py.

    python bench/generate.py && python bench/run.py
    python bench/run.py --datasets dl --repeats 5 --engines ours,pytrec_eval

Every (engine, dataset, input) row runs in a fresh subprocess, so that one engine's memory and
caches never touch another's: it imports the engine, then times `--repeats` full passes
(parse both files + evaluate the suite) and reports the median; its peak RSS is the
process's ru_maxrss (interpreter and imports included; the import-only RSS is shown beside it).
Results go to bench/RESULTS.md (the sections of the datasets run are replaced).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DATA = BENCH / "data"
RESULTS = BENCH / "RESULTS.md"

# The suite, in ir_measures syntax (ours, ir_measures) and its twins in the peers' names.
MEASURES = ["nDCG@5", "nDCG@10", "nDCG@20", "nDCG@100", "nDCG@1000", "AP", "RR",
            "R@10", "R@100", "R@1000", "P@5", "P@10"]
PYTREC_MEASURES = {"ndcg_cut.5,10,20,100,1000", "map", "recip_rank", "recall.10,100,1000", "P.5,10"}
PYTREC_NAMES = {"nDCG@5": "ndcg_cut_5", "nDCG@10": "ndcg_cut_10", "nDCG@20": "ndcg_cut_20",
                "nDCG@100": "ndcg_cut_100", "nDCG@1000": "ndcg_cut_1000", "AP": "map",
                "RR": "recip_rank", "R@10": "recall_10", "R@100": "recall_100",
                "R@1000": "recall_1000", "P@5": "P_5", "P@10": "P_10"}
RANX_METRICS = ["ndcg@5", "ndcg@10", "ndcg@20", "ndcg@100", "ndcg@1000", "map", "mrr",
                "recall@10", "recall@100", "recall@1000", "precision@5", "precision@10"]

DATASETS = {
    "dl": "TREC-DL-like: 43 queries x 1000 docs, ~200 graded judgments per query",
    "dev": "MS-MARCO-dev-like: 6,980 queries x 1000 docs (6.98M run lines), ~1.07 judgments per query",
}
# (engine, input format) rows per dataset, in table order.
ROWS = [("ours", "txt"), ("ours", "gz"), ("ours+curve", "txt"),
        ("pytrec_eval", "txt"), ("ranx", "txt"), ("ir_measures", "txt")]
ENGINE_NOTES = {
    "ours": "`metrics.io.read_run` + `metrics.io.read_qrels` + `metrics.evaluate(qrels, run, suite)`",
    "ours+curve": "`metrics.rank_run` once, then `metrics.evaluate_ranked` (the suite) and "
                  "`metrics.curve_ranked(ranked, \"nDCG\", max_k=1000)` (nDCG at every cutoff 1..1000)",
    "pytrec_eval": "plain-Python reader into dicts + `RelevanceEvaluator(qrels, measures).evaluate(run)`",
    "ranx": "`Qrels.from_file` + `Run.from_file` (kind=\"trec\") + `ranx.evaluate` "
            "(numba, all cores; JIT warmed up before timing)",
    "ir_measures": "`ir_measures.calc_aggregate(suite, read_trec_qrels(path), read_trec_run(path))`",
}


def paths(dataset: str, fmt: str) -> tuple[Path, Path]:
    run = DATA / f"{dataset}-run.txt"
    return DATA / f"{dataset}-qrels.txt", run.with_suffix(".txt.gz") if fmt == "gz" else run


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


# --------------------------------------------------------------------------- engines
# Each engine: setup() -> imports done; one pass(qrels_path, run_path) -> (phases, mean nDCG@10).


def trec_dicts(qrels_path: Path, run_path: Path):
    """The fastest plain-Python reader we know for pytrec_eval's dict input."""
    qrels: dict[str, dict[str, int]] = {}
    with open(qrels_path) as lines:
        for line in lines:
            qid, _, docno, rel = line.split()
            qrels.setdefault(qid, {})[docno] = int(rel)
    run: dict[str, dict[str, float]] = {}
    with open(run_path) as lines:
        for line in lines:
            qid, _, docno, _, score, _ = line.split()
            run.setdefault(qid, {})[docno] = float(score)
    return qrels, run


class Ours:
    curve = False

    def setup(self):
        sys.path.insert(0, str(REPO))
        import metrics
        import metrics.io
        self.metrics = metrics

    def run(self, qrels_path, run_path):
        metrics = self.metrics
        started = time.perf_counter()
        qrels = metrics.io.read_qrels(qrels_path)
        run = metrics.io.read_run(run_path)
        parsed = time.perf_counter()
        if not self.curve:
            frame = metrics.evaluate(qrels, run, MEASURES)
            evaluated = time.perf_counter()
            return ({"read": parsed - started, "evaluate": evaluated - parsed},
                    float(frame.loc[frame["measure"] == "nDCG@10", "value"].mean()))
        # one ordering and join serve both the suite and the curve
        ranked = metrics.rank_run(qrels, run)
        values = metrics.evaluate_ranked(ranked, MEASURES)
        evaluated = time.perf_counter()
        metrics.curve_ranked(ranked, "nDCG", max_k=1000)
        return ({"read": parsed - started, "evaluate": evaluated - parsed,
                 "curve": time.perf_counter() - evaluated}, float(values["nDCG@10"].mean()))


class OursCurve(Ours):
    curve = True


class PytrecEval:
    def setup(self):
        import pytrec_eval
        self.pytrec_eval = pytrec_eval

    def run(self, qrels_path, run_path):
        started = time.perf_counter()
        qrels, run = trec_dicts(qrels_path, run_path)
        parsed = time.perf_counter()
        per_query = self.pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES).evaluate(run)
        evaluated = time.perf_counter()
        ndcg10 = statistics.fmean(v["ndcg_cut_10"] for v in per_query.values())
        return {"read": parsed - started, "evaluate": evaluated - parsed}, ndcg10


class Ranx:
    def setup(self):
        import ranx
        self.ranx = ranx
        # numba compiles on first use: do it on a toy input so the timings measure evaluation.
        ranx.evaluate(ranx.Qrels({"q": {"d1": 1}}), ranx.Run({"q": {"d1": 1.0, "d2": 0.5}}), RANX_METRICS)

    def run(self, qrels_path, run_path):
        ranx = self.ranx
        started = time.perf_counter()
        qrels = ranx.Qrels.from_file(str(qrels_path), kind="trec")
        run = ranx.Run.from_file(str(run_path), kind="trec")
        parsed = time.perf_counter()
        scores = ranx.evaluate(qrels, run, RANX_METRICS)
        evaluated = time.perf_counter()
        return {"read": parsed - started, "evaluate": evaluated - parsed}, float(scores["ndcg@10"])


class IrMeasures:
    def setup(self):
        import ir_measures
        self.ir_measures = ir_measures
        self.measures = [ir_measures.parse_measure(m) for m in MEASURES]

    def run(self, qrels_path, run_path):
        ir_measures = self.ir_measures
        started = time.perf_counter()
        means = ir_measures.calc_aggregate(
            self.measures, ir_measures.read_trec_qrels(str(qrels_path)),
            ir_measures.read_trec_run(str(run_path)))
        total = time.perf_counter() - started
        return {"read+evaluate": total}, float(means[ir_measures.parse_measure("nDCG@10")])


ENGINES = {"ours": Ours, "ours+curve": OursCurve, "pytrec_eval": PytrecEval,
           "ranx": Ranx, "ir_measures": IrMeasures}


def worker(engine: str, dataset: str, fmt: str, repeats: int) -> dict:
    """Runs in its own process: import, then `repeats` timed passes."""
    started = time.perf_counter()
    implementation = ENGINES[engine]()
    implementation.setup()
    result = {"engine": engine, "dataset": dataset, "format": fmt,
              "setup_s": time.perf_counter() - started, "rss_after_import_mb": rss_mb(),
              "repeats": []}
    qrels_path, run_path = paths(dataset, fmt)
    for _ in range(repeats):
        gc.collect()
        phases, ndcg10 = implementation.run(qrels_path, run_path)
        result["repeats"].append({"phases": phases, "total": sum(phases.values())})
        result["ndcg10"] = ndcg10
    result["peak_rss_mb"] = rss_mb()
    return result


def agreement(dataset: str) -> dict:
    """Per-query max |ours - pytrec_eval| for every measure of the suite (own process)."""
    sys.path.insert(0, str(REPO))
    import pytrec_eval

    import metrics
    import metrics.io

    qrels_path, run_path = paths(dataset, "txt")
    frame = metrics.evaluate(metrics.io.read_qrels(qrels_path), metrics.io.read_run(run_path), MEASURES)
    qrels, run = trec_dicts(qrels_path, run_path)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES).evaluate(run)
    differences = {}
    for measure, name in PYTREC_NAMES.items():
        ours = frame[frame["measure"] == measure].set_index("qid")["value"]
        common = [qid for qid in theirs if qid in ours.index]
        worst = max((abs(float(ours[qid]) - theirs[qid][name]) for qid in common), default=float("nan"))
        differences[measure] = {"max_abs_diff": worst, "queries": len(common),
                                "ours_only": len(ours) - len(common),
                                "theirs_only": len(theirs) - len(common)}
    return differences


# --------------------------------------------------------------------------- driver


def spawn(args: list[str], timeout: float) -> dict:
    command = [sys.executable, str(Path(__file__).resolve()), *args]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
    return {"error": f"exit {done.returncode}: {tail}"}


def versions() -> dict[str, str]:
    from importlib import metadata

    found = {}
    for package in ["numpy", "pyarrow", "pandas", "pytrec-eval-terrier", "ranx", "numba", "ir-measures"]:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = "missing"
    return found


def machine() -> str:
    cpu = platform.processor() or ""
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        memory = next(int(line.split()[1]) for line in open("/proc/meminfo")
                      if line.startswith("MemTotal")) / 1024 ** 2
    except (OSError, StopIteration):
        memory = float("nan")
    package_versions = ", ".join(f"{k} {v}" for k, v in versions().items())
    return (f"{os.cpu_count()} cores (nproc {len(os.sched_getaffinity(0))}), {cpu}, {memory:.0f} GiB, "
            f"{platform.system()} {platform.release()}; Python {platform.python_version()}; {package_versions}; "
            f"{huge_pages()}")


def huge_pages() -> str:
    """The kernel's transparent huge page mode and the allocators' settings of it in this
    environment, which the commands inherit: they move the cost of touching new memory (RESULTS.md,
    round 10)."""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            text = f.read()
        mode = text[text.index("[") + 1:text.index("]")]
    except (OSError, ValueError):
        mode = "unknown"
    settings = ", ".join(f"{name}={os.environ.get(name, 'unset')}"
                         for name in ("NUMPY_MADVISE_HUGEPAGE", "MIMALLOC_ALLOW_THP"))
    return f"transparent huge pages: {mode}, {settings}"


def load() -> str:
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def describe_data(dataset: str) -> str:
    qrels_path, run_path = paths(dataset, "txt")
    lines = sum(1 for _ in open(run_path, "rb"))
    with open(qrels_path) as qrels:
        judgments = [line.split()[0] for line in qrels]
    return (f"{len(set(judgments)):,} queries, {lines:,} run lines "
            f"({size(run_path)} text, {size(run_path.with_suffix('.txt.gz'))} gz), "
            f"{len(judgments):,} judgments")


def size(path: Path) -> str:
    n = path.stat().st_size
    return f"{n / 1e6:.0f} MB" if n >= 1e7 else f"{n / 1e6:.2f} MB"


def seconds(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def table(dataset: str, results: list[dict]) -> list[str]:
    base = next((r for r in results if r["engine"] == "ours" and r["format"] == "txt"
                 and "error" not in r), None)
    base_median = base["median_s"] if base else None
    lines = ["| engine | input | median s | read s | evaluate s | ratio to ours | peak RSS MB "
             "| RSS after import MB | mean nDCG@10 |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        if "error" in r:
            message = r["error"].splitlines()[-1][:160].replace("|", "/")
            lines.append(f"| {r['engine']} | {r['format']} | failed: {message} | | | | | | |")
            continue
        phases = r["median_phases"]
        ratio = f"{r['median_s'] / base_median:.2f}" if base_median else "–"
        evaluate = phases.get("evaluate")
        if "curve" in phases:
            evaluate_text = f"{seconds(evaluate)} + curve {seconds(phases['curve'])}"
        elif "read+evaluate" in phases:
            evaluate_text = "(fused with read)"
        else:
            evaluate_text = seconds(evaluate)
        lines.append(
            f"| {r['engine']} | {r['format']} | {seconds(r['median_s'])} | {seconds(phases.get('read'))} "
            f"| {evaluate_text} | {ratio} | {r['peak_rss_mb']:.0f} | {r['rss_after_import_mb']:.0f} "
            f"| {r['ndcg10']:.6f} |")
    return lines


def summarise(result: dict) -> dict:
    if "error" in result:
        return result
    totals = [rep["total"] for rep in result["repeats"]]
    result["median_s"] = statistics.median(totals)
    result["median_phases"] = {
        phase: statistics.median(rep["phases"][phase] for rep in result["repeats"])
        for phase in result["repeats"][0]["phases"]}
    return result


def section(dataset: str, results: list[dict], check: dict | None, command: str, repeats: int) -> str:
    lines = [f"<!-- dataset:{dataset} -->",
             f"## {dataset}: {DATASETS[dataset]}", "",
             f"Data: {describe_data(dataset)}.  ",
             f"Command: `{command}` ({repeats} repeats, median).  ",
             f"Date: {dt.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}.  ",
             f"Machine: {machine()}.  ",
             f"Load average (1/5/15 min) after this section's runs: {load()} "
             "(the benchmark itself accounts for about 1; more means other work shared the 2 cores).", ""]
    lines += table(dataset, results)
    if check is not None:
        lines += ["", "Agreement with pytrec_eval, per query (max |ours - pytrec_eval|): " + (
            check["error"].splitlines()[-1] if "error" in check else ", ".join(
                f"{m} {v['max_abs_diff']:.2e}" for m, v in check.items()))]
    lines.append(f"<!-- /dataset:{dataset} -->")
    return "\n".join(lines)


HEADER = """# Benchmark results

Written by `bench/run.py` (see bench/README.md); do not edit by hand.
Suite: {measures} (pytrec_eval: {pytrec}; ranx: {ranx}).
Each row is one fresh subprocess: median wall-clock seconds of parsing both files and evaluating the
suite; "ratio to ours" divides by the `ours`/txt row of the same dataset; peak RSS is the process's
ru_maxrss (interpreter and imports included; "RSS after import" is that baseline).

{engines}
"""


def write_results(sections: dict[str, str]) -> None:
    text = RESULTS.read_text() if RESULTS.exists() else ""
    old = {m.group(1): m.group(0) for m in re.finditer(
        r"<!-- dataset:(\w+) -->.*?<!-- /dataset:\1 -->", text, flags=re.S)}
    old.update(sections)
    header = HEADER.format(
        measures=", ".join(MEASURES), pytrec=", ".join(sorted(PYTREC_MEASURES)),
        ranx=", ".join(RANX_METRICS),
        engines="\n".join(f"- **{name}**: {note}" for name, note in ENGINE_NOTES.items()))
    body = "\n\n".join(old[name] for name in DATASETS if name in old)
    # Sections after the dataset blocks (other benchmarks' records) are kept as they are.
    ends = [m.end() for m in re.finditer(r"<!-- /dataset:\w+ -->", text)]
    rest = text[ends[-1]:].strip("\n") if ends else ""
    RESULTS.write_text(header + "\n" + body + "\n" + (f"\n{rest}\n" if rest else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="dl,dev", help="comma-separated: dl,dev")
    parser.add_argument("--engines", default=",".join(ENGINES), help="comma-separated: " + ",".join(ENGINES))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per subprocess")
    parser.add_argument("--no-check", action="store_true", help="skip the pytrec_eval agreement check")
    parser.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    parser.add_argument("--worker", nargs=3, metavar=("ENGINE", "DATASET", "FORMAT"), help=argparse.SUPPRESS)
    parser.add_argument("--agreement", metavar="DATASET", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        print("RESULT " + json.dumps(worker(*args.worker, args.repeats)), flush=True)
        return 0
    if args.agreement:
        print("RESULT " + json.dumps(agreement(args.agreement)), flush=True)
        return 0

    datasets = [d for d in args.datasets.split(",") if d]
    engines = [e for e in args.engines.split(",") if e]
    unknown = (set(datasets) - set(DATASETS)) | (set(engines) - set(ENGINES))
    if unknown:
        parser.error(f"unknown dataset or engine: {sorted(unknown)}")
    missing = [p for d in datasets for f in ("txt", "gz") for p in paths(d, f) if not p.exists()]
    if missing:
        parser.error(f"{missing[0]} is missing: run `python bench/generate.py` first")

    command = "python bench/run.py" + ("" if argv is None and len(sys.argv) == 1 else
                                       " " + " ".join(argv if argv is not None else sys.argv[1:]))
    sections = {}
    for dataset in datasets:
        results = []
        for engine, fmt in ROWS:
            if engine not in engines:
                continue
            print(f"{dataset} {engine} {fmt} ...", end=" ", flush=True)
            started = time.perf_counter()
            try:
                result = spawn(["--worker", engine, dataset, fmt, "--repeats", str(args.repeats)], args.timeout)
            except subprocess.TimeoutExpired:
                result = {"error": f"timed out after {args.timeout:.0f} s"}
            result = summarise({"engine": engine, "format": fmt, **result})
            results.append(result)
            if "error" in result:
                print(f"FAILED ({result['error'].splitlines()[-1]})")
            else:
                print(f"median {result['median_s']:.3f} s, peak RSS {result['peak_rss_mb']:.0f} MB, "
                      f"nDCG@10 {result['ndcg10']:.6f} ({time.perf_counter() - started:.0f} s wall)")
        check = None
        if dataset == "dl" and not args.no_check:
            try:
                check = spawn(["--agreement", dataset], args.timeout)
            except subprocess.TimeoutExpired:
                check = {"error": "agreement check timed out"}
            if "error" in check:
                print(f"{dataset} agreement with pytrec_eval: FAILED ({check['error'].splitlines()[-1]})")
            else:
                print(f"{dataset} per-query nDCG@10 max |ours - pytrec_eval| = "
                      f"{check['nDCG@10']['max_abs_diff']:.3e} over {check['nDCG@10']['queries']} queries; "
                      "all measures: " + ", ".join(f"{m} {v['max_abs_diff']:.1e}" for m, v in check.items()))
        sections[dataset] = section(dataset, results, check, command, args.repeats)
        print("\n".join(table(dataset, results)))
    if not args.no_write:
        write_results(sections)
        print(f"wrote {RESULTS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
