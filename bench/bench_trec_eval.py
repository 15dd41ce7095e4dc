"""Time the whole trec_eval ``all_trec`` suite: nDCG Lab beside trec_eval 10 and pytrec_eval, in one run.

    python bench/generate.py dev && python bench/bench_trec_eval.py            # 6.98M run lines
    python bench/generate.py dl && python bench/bench_trec_eval.py --dataset dl --repeats 3
    python bench/bench_trec_eval.py --qrels QRELS --run RUN                     # any collection

Each engine runs in a fresh subprocess, `--repeats` times (median reported), on the same files:

- `ours`: `metrics.cli.trec_eval.trec_eval_lines` for `-q -c -m all_trec`: parse both files,
  order and join, every all_trec value per query and the summaries, formatted as trec_eval prints
  them (output discarded);
- `trec_eval`: trec_eval 10 (4 decimals, built by ../shared/tools/build-trec-eval into
  ~/.cache/ndcg-lab/trec_eval) with `-q -c -m all_trec`, stdout to /dev/null;
- `pytrec_eval`: a plain-Python reader into dicts + `RelevanceEvaluator(qrels, {"all_trec"})`
  (its bundled trec_eval 9.0.8: no rbp, rbp_resid and unj, no -c).

Peak RSS is the process's ru_maxrss (for trec_eval, the binary's). `--check` also compares our
values with trec_eval 10 built with 10 decimals, every value of every query, and prints the
largest difference. `--write` replaces this dataset's section of bench/RESULTS_TREC_EVAL.md.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DATA = BENCH / "data"
RESULTS = BENCH / "RESULTS_TREC_EVAL.md"
BUILD = REPO.parent / "shared" / "tools" / "build-trec-eval"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ndcg-lab"
ARGS = ["-q", "-c", "-m", "all_trec"]
ENGINES = ("ours", "trec_eval", "pytrec_eval")


def trec_eval_binary(wide: bool = False) -> Path:
    target = CACHE / ("trec_eval_wide" if wide else "trec_eval")
    done = subprocess.run([str(BUILD), *(["--wide"] if wide else []), str(target)],
                          capture_output=True, text=True, check=True)
    return Path(done.stdout.strip().splitlines()[-1])


def peak_rss_mb(children: bool = False) -> float:
    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    return resource.getrusage(who).ru_maxrss / 1024  # KiB on Linux


# --------------------------------------------------------------------------- one pass per engine

def pass_ours(qrels: Path, run: Path) -> int:
    sys.path.insert(0, str(REPO))
    from metrics.cli.trec_eval import trec_eval_lines

    return len(trec_eval_lines(qrels, run, ["all_trec"], per_query=True, complete=True))


def pass_trec_eval(qrels: Path, run: Path) -> int:
    with open(os.devnull, "w") as sink:
        subprocess.run([str(trec_eval_binary()), *ARGS, str(qrels), str(run)], stdout=sink, check=True)
    return 0


def pass_pytrec_eval(qrels_path: Path, run_path: Path) -> int:
    import pytrec_eval
    from run import trec_dicts  # bench/run.py: the same plain-Python reader for the dict input

    qrels, run = trec_dicts(qrels_path, run_path)
    return len(pytrec_eval.RelevanceEvaluator(qrels, {"all_trec"}).evaluate(run))


PASSES = {"ours": pass_ours, "trec_eval": pass_trec_eval, "pytrec_eval": pass_pytrec_eval}


def worker(engine: str, qrels: Path, run: Path, repeats: int) -> dict:
    """Runs in its own process: `repeats` timed passes of one engine."""
    if engine == "trec_eval":
        trec_eval_binary()  # build (or find) it before timing
    elif engine == "pytrec_eval":
        import pytrec_eval  # noqa: F401  (imports are not timed)
    else:
        sys.path.insert(0, str(REPO))
        import metrics.cli.trec_eval  # noqa: F401
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        PASSES[engine](qrels, run)
        times.append(time.perf_counter() - started)
    return {"engine": engine, "times": times,
            "peak_rss_mb": peak_rss_mb(children=engine == "trec_eval")}


def spawn(engine: str, qrels: Path, run: Path, repeats: int) -> dict:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", engine, "--qrels", str(qrels),
               "--run", str(run), "--repeats", str(repeats)]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    tail = " ".join((done.stdout + done.stderr).strip().splitlines()[-3:])
    return {"engine": engine, "error": f"exit {done.returncode}: {tail}"}


# --------------------------------------------------------------------------- agreement

def check(qrels: Path, run: Path) -> tuple[float, int]:
    """Largest |ours - trec_eval 10| over every per-query and summary value, and how many were compared."""
    sys.path.insert(0, str(REPO))
    from metrics.cli.trec_eval import trec_eval_lines

    def values(lines):
        out = {}
        for line in lines:
            name, qid, value = (part.strip() for part in line.split("\t"))
            out[(name, qid)] = value
        return out

    theirs = values(subprocess.run([str(trec_eval_binary(wide=True)), *ARGS, str(qrels), str(run)],
                                   capture_output=True, text=True, check=True).stdout.splitlines())
    ours = values(trec_eval_lines(qrels, run, ["all_trec"], per_query=True, complete=True, decimals=10))
    if set(ours) != set(theirs):
        raise SystemExit(f"different values printed: {sorted(set(ours) ^ set(theirs))[:5]}")
    worst = 0.0
    for key, value in theirs.items():
        if value.startswith("'") or key[0] == "runid" or value.endswith("nan"):
            if ours[key] != value:
                raise SystemExit(f"{key}: trec_eval {value}, ours {ours[key]}")
            continue
        worst = max(worst, abs(float(value) - float(ours[key])))
    return worst, len(theirs)


# --------------------------------------------------------------------------- report

def describe(qrels: Path, run: Path) -> str:
    with open(run, "rb") as handle:
        lines = sum(1 for _ in handle)
    with open(qrels) as handle:
        judged = [line.split()[0] for line in handle if line.strip()]
    return f"{len(set(judged)):,} queries, {lines:,} run lines, {len(judged):,} judgments"


def machine() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        cpu = platform.processor()
    system = f"{platform.system()} {platform.release()}"
    return f"{os.cpu_count()} cores, {cpu}, {system}, Python {platform.python_version()}"


def report(label: str, qrels: Path, run: Path, results: list[dict], agreement, command: str) -> str:
    ours = next((r for r in results if r["engine"] == "ours" and "error" not in r), None)
    base = statistics.median(ours["times"]) if ours else None
    lines = [f"<!-- dataset:{label} -->", f"## {label}", "",
             f"Data: {describe(qrels, run)}.  ", f"Command: `{command}`.  ",
             f"Machine: {machine()}; load {' / '.join(f'{x:.2f}' for x in os.getloadavg())}.  ",
             f"Date: {dt.date.today().isoformat()}.", "",
             "| engine | median s | min s | max s | ratio to ours | peak RSS MB |", "|---|---:|---:|---:|---:|---:|"]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['engine']} | failed: {r['error'][:120].replace('|', '/')} | | | | |")
            continue
        median = statistics.median(r["times"])
        ratio = f"{median / base:.2f}" if base else "–"
        lines.append(f"| {r['engine']} | {median:.2f} | {min(r['times']):.2f} | {max(r['times']):.2f} "
                     f"| {ratio} | {r['peak_rss_mb']:.0f} |")
    if agreement is not None:
        worst, compared = agreement
        lines += ["", f"Agreement with trec_eval 10 (10 decimals): {compared:,} values, "
                      f"largest difference {worst:.1e}."]
    return "\n".join(lines) + "\n"


def write(section: str, label: str) -> None:
    """Replace (or add) this dataset's section of bench/RESULTS_TREC_EVAL.md."""
    marker = f"<!-- dataset:{label} -->"
    head = "# trec_eval all_trec benchmark\n\nWritten by `bench/bench_trec_eval.py` (see its docstring).\n\n"
    text = RESULTS.read_text() if RESULTS.exists() else head
    first = text.find("<!-- dataset:")
    preamble = text if first < 0 else text[:first]
    sections = [] if first < 0 else ["<!-- dataset:" + p for p in text[first:].split("<!-- dataset:") if p]
    RESULTS.write_text(preamble + "".join(x for x in sections if not x.startswith(marker)) + section + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="dev", help="a collection of bench/generate.py (default dev)")
    parser.add_argument("--qrels", type=Path, help="a qrels file (with --run, instead of --dataset)")
    parser.add_argument("--run", type=Path, help="a run file")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--check", action="store_true", help="compare every value with trec_eval 10 (10 decimals)")
    parser.add_argument("--write", action="store_true", help="write the section into bench/RESULTS_TREC_EVAL.md")
    parser.add_argument("--worker", choices=ENGINES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    qrels = args.qrels or DATA / f"{args.dataset}-qrels.txt"
    run = args.run or DATA / f"{args.dataset}-run.txt"
    if args.worker:
        print("RESULT " + json.dumps(worker(args.worker, qrels, run, args.repeats)))
        return 0
    if not (qrels.exists() and run.exists()):
        raise SystemExit(f"{qrels} or {run} is missing: python bench/generate.py {args.dataset}")
    label = args.dataset if args.qrels is None else f"{qrels.name} + {run.name}"
    results = []
    for engine in args.engines.split(","):
        results.append(spawn(engine, qrels, run, args.repeats))
        print(f"{engine}: {results[-1].get('times', results[-1].get('error'))}", file=sys.stderr)
    agreement = check(qrels, run) if args.check else None
    command = "python bench/bench_trec_eval.py " + " ".join(argv if argv is not None else sys.argv[1:])
    section = report(label, qrels, run, results, agreement, command.strip())
    print(section)
    if args.write:
        write(section, label)
    return 0


if __name__ == "__main__":
    sys.exit(main())
