"""Peak memory over text of runs and qrels that must be normalised (a blank before every line, two
between fields, comment lines, tabs with a leading tab), read whole by ``metrics.read_run`` /
``read_qrels`` of the path, beside the same rows single-spaced.

    python bench/bench_normalised.py                       # this checkout
    python bench/bench_normalised.py --code ../before      # another checkout of nDCG Lab

Inputs are written once to ``--cache`` (default /tmp/ndcg-lab-normalised): 2M run lines (about 65
MiB) and 3M qrels lines (about 56 MiB) of distinct documents. Each read runs in a process of its
own; "peak over text" is its ``VmHWM`` minus its ``VmRSS`` after the imports (a one-line read warms
the pools), over the file's bytes. Prints a Markdown table for bench/RESULTS.md.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN_LINES, QRELS_LINES, SLICE = 2_000_000, 3_000_000, 100_000

LAYOUTS = {
    "clean": lambda text: text,
    "leading": lambda text: b" " + text.replace(b"\n", b"\n ")[:-1],
    "doubled": lambda text: text.replace(b" ", b"  "),
    "comments": lambda text: b"".join(line + b"\n# a comment line" * (i % 7 == 0) + b"\n"
                                      for i, line in enumerate(text[:-1].split(b"\n"))),
    "tabs": lambda text: b"\t" + text.replace(b" ", b"\t").replace(b"\n", b"\n\t")[:-1],
}

CHILD = r"""
import json, os, sys, time
import metrics

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024

kind, path = sys.argv[1], sys.argv[2]
reader = metrics.read_qrels if kind == "qrels" else metrics.read_run
reader(b"q1 0 d1 1\n" if kind == "qrels" else b" q1 Q0 d1 1 1.0 t\n")
baseline = status("VmRSS")
started = time.perf_counter()
parsed = reader(path)
print(json.dumps({"over": status("VmHWM") - baseline, "seconds": time.perf_counter() - started,
                  "rows": parsed.table.num_rows}))
"""


def lines(kind: str, at: int, stop: int) -> bytes:
    if kind == "qrels":
        return "".join(f"{i // 50} 0 {7_000_000 + i * 7} {i % 4}\n" for i in range(at, stop)).encode()
    return "".join(f"{i // 1000} Q0 {7_000_000 + i * 7} {i % 1000 + 1} {40 - (i % 1000) / 100:.4f} bm25\n"
                   for i in range(at, stop)).encode()


def made(cache: Path, kind: str, layout: str) -> Path:
    path = cache / f"{kind}-{layout}.txt"
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        n = QRELS_LINES if kind == "qrels" else RUN_LINES
        with open(path.with_suffix(".part"), "wb") as out:
            for at in range(0, n, SLICE):
                out.write(LAYOUTS[layout](lines(kind, at, min(n, at + SLICE))))
        os.replace(path.with_suffix(".part"), path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--code", type=Path, default=ROOT, help="checkout of nDCG Lab to measure")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/ndcg-lab-normalised"))
    parser.add_argument("--kinds", nargs="+", default=["run", "qrels"], choices=["run", "qrels"])
    parser.add_argument("--layouts", nargs="+", default=list(LAYOUTS), choices=list(LAYOUTS))
    args = parser.parse_args()
    code = args.code.resolve()
    print(f"code: {code.name} · load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    print("| input | text MB | rows | peak over text | seconds |\n|---|---:|---:|---:|---:|")
    for kind in args.kinds:
        for layout in args.layouts:
            path = made(args.cache, kind, layout)
            done = subprocess.run([sys.executable, "-c", CHILD, kind, str(path)], cwd=code, capture_output=True,
                                  text=True, env={**os.environ, "PYTHONPATH": str(code)})
            if done.returncode:
                print(f"| {path.name} | failed: {done.stderr.strip().splitlines()[-1][:80]} |||")
                continue
            found = json.loads(done.stdout.strip().splitlines()[-1])
            size = path.stat().st_size
            print(f"| {path.name} | {size / 1e6:,.0f} | {found['rows']:,} | {found['over'] / size:.2f}x | "
                  f"{found['seconds']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
