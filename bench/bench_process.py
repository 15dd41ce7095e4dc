"""Whole processes on the 7M-line dev run: ``python -m metrics eval`` with the full suite beside
the floors of a text parse (pyarrow's and polars' ``read_csv`` of the same file) and the peers, interleaved.

    python bench/bench_process.py [--repeats 5] [--dataset dev] [--no-write] [--only ours --only read_csv ...]

Each repeat runs every command once, in a fresh process, in turn (so a slow spell of the machine
hits them all); the table shows the median wall-clock seconds from spawn to exit and the peak RSS
of the child (``ru_maxrss`` from ``os.wait4``). Commands:

- ``ours``: ``python -m metrics eval QRELS RUN -m nDCG@5 ... -m P@10`` (the suite below);
- ``read_csv``: ``python -c`` importing pyarrow.csv and reading RUN with six space-separated
  columns, the floor for any text parse (the ratios are to it);
- ``polars read_csv``: ``python -c`` importing polars and reading RUN the same way with its
  multi-threaded reader (every core), a second floor;
- ``trec_eval``: trec_eval 10 (``../shared/tools/build-trec-eval``) with the same measures
  (``-m ndcg_cut.5,10,20,100,1000 -m map -m recip_rank -m recall.10,100,1000 -m P.5,10``);
- ``pytrec_eval``: bench/run.py's plain-Python reader + ``RelevanceEvaluator``;
- ``ranx``: ``Qrels.from_file`` + ``Run.from_file`` + ``evaluate`` (numba compiles in each
  process: that is what a script pays).

The section "Whole process" of RESULTS.md is rewritten unless ``--no-write``.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from bench_trec_eval import BUILD, trec_eval_binary  # noqa: E402
from run import load, machine, paths  # noqa: E402

SUITE = ["nDCG@5", "nDCG@10", "nDCG@20", "nDCG@100", "nDCG@1000", "AP", "RR", "R@10", "R@100", "R@1000",
         "P@5", "P@10"]
TREC_EVAL_MEASURES = ["-m", "ndcg_cut.5,10,20,100,1000", "-m", "map", "-m", "recip_rank",
                      "-m", "recall.10,100,1000", "-m", "P.5,10"]

READ_CSV = """
import sys, pyarrow.csv as c
t = c.read_csv(sys.argv[1], read_options=c.ReadOptions(column_names=list("abcdef")),
               parse_options=c.ParseOptions(delimiter=" "))
print(t.num_rows)
"""

READ_CSV_POLARS = """
import sys, polars as pl
t = pl.read_csv(sys.argv[1], separator=" ", has_header=False, new_columns=list("abcdef"))
print(t.height)
"""

PYTREC_EVAL = """
import sys
sys.path.insert(0, sys.argv[3])
import pytrec_eval
from run import trec_dicts
qrels, run = trec_dicts(sys.argv[1], sys.argv[2])
measures = {"P.5,10", "map", "ndcg_cut.5,10,20,100,1000", "recall.10,100,1000", "recip_rank"}
per_query = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
print(sum(v["ndcg_cut_10"] for v in per_query.values()) / len(qrels))
"""

RANX = """
import sys
from ranx import Qrels, Run, evaluate
qrels = Qrels.from_file(sys.argv[1], kind="trec")
run = Run.from_file(sys.argv[2], kind="trec")
metrics = ["ndcg@5", "ndcg@10", "ndcg@20", "ndcg@100", "ndcg@1000", "map", "mrr", "recall@10", "recall@100",
           "recall@1000", "precision@5", "precision@10"]
print(evaluate(qrels, run, metrics)["ndcg@10"])
"""


def commands(qrels: Path, run: Path) -> dict[str, list[str]]:
    suite = [arg for name in SUITE for arg in ("-m", name)]
    found = {
        "ours": [sys.executable, "-m", "metrics", "eval", str(qrels), str(run), *suite],
        "read_csv": [sys.executable, "-c", READ_CSV, str(run)],
        "polars read_csv": [sys.executable, "-c", READ_CSV_POLARS, str(run)],
    }
    if BUILD.exists():
        found["trec_eval"] = [str(trec_eval_binary()), "-c", *TREC_EVAL_MEASURES, str(qrels), str(run)]
    found["pytrec_eval"] = [sys.executable, "-c", PYTREC_EVAL, str(qrels), str(run), str(HERE)]
    found["ranx"] = [sys.executable, "-c", RANX, str(qrels), str(run)]
    return found


def measure(command: list[str]) -> tuple[float, float, str]:
    """(seconds from spawn to exit, the child's peak RSS in MB, its stdout)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(command, cwd=REPO, stdout=out, stderr=err,
                                 env=dict(os.environ, PYTHONPATH=str(REPO)))
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if child.returncode != 0:
            raise RuntimeError(f"{command[:4]} exited {child.returncode}: {err.read().decode()[-400:]}")
        return seconds, usage.ru_maxrss / 1024, out.read().decode()


def ndcg10(engine: str, output: str) -> str:
    """The mean nDCG@10 each command printed, to show that they computed the same thing."""
    if engine == "ours":
        return next(line.split("\t")[2] for line in output.splitlines() if line.startswith("nDCG@10\t"))
    if engine == "trec_eval":
        return next(line.split()[2] for line in output.splitlines() if line.split()[:1] == ["ndcg_cut_10"])
    if engine in ("pytrec_eval", "ranx"):
        return f"{float(output.strip()):.4f}"
    return "–"


def run_all(dataset: str, repeats: int, only=None) -> tuple[list[str], str]:
    qrels, run = paths(dataset, "txt")
    cmds = {name: cmd for name, cmd in commands(qrels, run).items()
            if not only or name in {"ours", "read_csv", "polars read_csv", *only}}
    # .pyc files written, as an installed package has them (not with PYTHONDONTWRITEBYTECODE set)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "metrics")], check=True)
    times: dict[str, list[float]] = {name: [] for name in cmds}
    peaks: dict[str, list[float]] = {name: [] for name in cmds}
    shown: dict[str, str] = {}
    for _ in range(repeats):
        for name, command in cmds.items():
            seconds, peak, output = measure(command)
            times[name].append(seconds)
            peaks[name].append(peak)
            shown[name] = ndcg10(name, output)
    floor = statistics.median(times["read_csv"])
    polars = statistics.median(times["polars read_csv"])
    ours = statistics.median(times["ours"])
    lines = ["| command | median s | ratio to read_csv | ratio to polars | ratio to ours | peak RSS MB | mean nDCG@10 "
             "| runs (s) |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    for name in cmds:
        median = statistics.median(times[name])
        lines.append(f"| {name} | {median:.2f} | {median / floor:.2f} | {median / polars:.2f} | {median / ours:.2f} | "
                     f"{statistics.median(peaks[name]):,.0f} | {shown[name]} | "
                     f"{', '.join(f'{t:.2f}' for t in times[name])} |")
    return lines, load()


def section(dataset: str, repeats: int, lines: list[str], load_after: str) -> str:
    return "\n".join([
        "<!-- bench_process -->",
        f"## Whole process: `python -m metrics eval` on {dataset} beside pyarrow's and polars' read_csv and the peers",
        "",
        f"Command: `python bench/bench_process.py --dataset {dataset} --repeats {repeats}` (each repeat runs "
        "every command once, in turn; median of the repeats).  ",
        f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.  ",
        f"Machine: {machine()}.  ",
        f"Load average (1/5/15 min) after the runs: {load_after}.  ",
        f"Suite: {', '.join(SUITE)} (trec_eval: {' '.join(TREC_EVAL_MEASURES)}).",
        "",
        *lines,
        "<!-- /bench_process -->",
    ])


def write(text: str) -> None:
    results = HERE / "RESULTS.md"
    current = results.read_text() if results.exists() else "# Benchmark results\n"
    start, end = "<!-- bench_process -->", "<!-- /bench_process -->"
    if start in current:
        before, rest = current.split(start, 1)
        current = before + text + rest.split(end, 1)[1]
    else:
        current = current.rstrip("\n") + "\n\n" + text + "\n"
    results.write_text(current)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="dev")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--only", action="append", metavar="COMMAND",
                        help="time only these commands (repeatable) beside ours and the two read_csv floors")
    args = parser.parse_args(argv)
    lines, load_after = run_all(args.dataset, args.repeats, args.only)
    text = section(args.dataset, args.repeats, lines, load_after)
    print(text)
    if not args.no_write:
        write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
