"""Peak memory (not time) of hostile inputs: compression bombs, two at once, and a one-line gigabyte.

    python bench/bench_bombs.py                          # this checkout
    python bench/bench_bombs.py --code ../before        # another checkout of nDCG Lab (before)
    python bench/bench_bombs.py --cases one two line --inflate-limit 1GB --bomb-gib 2

Each case runs in a process of its own (``python -m metrics eval`` in the checkout ``--code``, or
two reader threads in one process for ``two``, the way two visitors share one server), and its
peak resident memory is the kernel's ``ru_maxrss`` from ``wait4``. Inputs are written once to
``--cache`` (default /tmp/ndcg-lab-bombs):

    zeros.gz    --bomb-gib GiB of zero bytes, gzip      (a classic bomb: no line end, all NUL)
    lines.gz    --bomb-gib GiB of one valid run line    (text that parses: only the limit stops it)
    line.txt    --line-gib GiB of one line, plain       (a one-line gigabyte)
    line.gz     the same line, gzip

Cases: ``one`` (zeros.gz, default engine), ``lines`` (lines.gz, default engine), ``two`` (zeros.gz
and lines.gz read at once in two threads of one process), ``twolines`` (two copies of lines.gz at
once), ``streaming`` (zeros.gz with ``--engine streaming``, stopped after ``--timeout`` s), ``line``
(line.txt), ``linegz`` (line.gz). Every case runs with ``NDCG_LAB_INFLATE_LIMIT=--inflate-limit``.

With ``--data`` (default bench/data), three more cases measure a real run rather than a bomb:
``plain`` (``eval`` of dev-qrels.txt and the 7M-line dev-run.txt), ``gzip`` (the same run as
dev-run.txt.gz) and ``gzip-dc`` (``gzip -dc dev-run.txt.gz > /dev/null``, the floor of inflating it).
Prints a Markdown table for bench/RESULTS.md.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QRELS = ROOT / "sample_data" / "legal" / "qrels.txt"
BLOCK = 64 << 20

TWO_READERS = """
import sys, threading
import metrics
outcomes = []
def read(path):
    try:
        metrics.read_run(path)
        outcomes.append("read")
    except metrics.MetricsError as exc:
        outcomes.append(str(exc)[:90])
threads = [threading.Thread(target=read, args=(p,)) for p in sys.argv[1:]]
[t.start() for t in threads]
[t.join() for t in threads]
print(" | ".join(outcomes), file=sys.stderr)
"""


def write_inputs(cache: Path, bomb_gib: float, line_gib: float) -> dict[str, Path]:
    cache.mkdir(parents=True, exist_ok=True)
    paths = {"zeros": cache / f"zeros-{bomb_gib:g}.gz", "lines": cache / f"lines-{bomb_gib:g}.gz",
             "line": cache / f"line-{line_gib:g}.txt", "linegz": cache / f"line-{line_gib:g}.gz"}
    total = int(bomb_gib * (1 << 30))
    if not paths["zeros"].exists():
        with gzip.open(paths["zeros"], "wb", compresslevel=1) as out:
            for start in range(0, total, BLOCK):
                out.write(bytes(min(BLOCK, total - start)))
    if not paths["lines"].exists():
        line = b"q1 Q0 doc-1 1 2.5 bomb\n"
        block = line * (BLOCK // len(line))
        with gzip.open(paths["lines"], "wb", compresslevel=1) as out:
            for _ in range(total // len(block) + 1):
                out.write(block)
    if not paths["line"].exists():
        size = int(line_gib * (1 << 30))
        with open(paths["line"], "wb") as out:
            for start in range(0, size, BLOCK):
                out.write(b"7" * min(BLOCK, size - start))
            out.write(b" Q0 d1 1 1.0 t\n")
    if not paths["linegz"].exists():
        with open(paths["line"], "rb") as f, gzip.open(paths["linegz"], "wb", compresslevel=1) as out:
            while block := f.read(BLOCK):
                out.write(block)
    return paths


def run_case(case: str, code: Path, paths: dict[str, Path], env: dict[str, str], timeout: float,
             data: Path = ROOT / "bench" / "data") -> dict:
    eval_ = [sys.executable, "-m", "metrics", "eval", str(QRELS)]
    dev = [sys.executable, "-m", "metrics", "eval", str(data / "dev-qrels.txt")]
    command = {
        "one": eval_ + [str(paths["zeros"])],
        "lines": eval_ + [str(paths["lines"])],
        "two": [sys.executable, "-c", TWO_READERS, str(paths["zeros"]), str(paths["lines"])],
        "twolines": [sys.executable, "-c", TWO_READERS, str(paths["lines"]), str(paths["lines"])],
        "plain": dev + [str(data / "dev-run.txt")],
        "gzip": dev + [str(data / "dev-run.txt.gz")],
        "gzip-dc": ["sh", "-c", f"gzip -dc '{data / 'dev-run.txt.gz'}' > /dev/null"],
        "streaming": eval_ + [str(paths["zeros"]), "--engine", "streaming", "--no-progress"],
        "line": eval_ + [str(paths["line"])],
        "linegz": eval_ + [str(paths["linegz"])],
    }[case]
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=code, env={**env, "PYTHONPATH": str(code), "PYTHONDONTWRITEBYTECODE": "1"},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stopped = False
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
        stopped = True
    # RUSAGE_CHILDREN keeps the largest peak of the children reaped so far, so each case runs in
    # a wrapper process of its own (`bench_bombs.py --one CASE`, see main) that reports it.
    seconds = time.perf_counter() - started
    last = [line for line in err.splitlines() if line.strip()]
    outcome = f"stopped after {timeout:.0f} s" if stopped else (last[-1][:110] if last else "read")
    if not stopped and not last and out:
        outcome += f", output sha256 {hashlib.sha256(out.encode()).hexdigest()[:12]}"
    return {"case": case, "seconds": seconds, "outcome": outcome}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--code", type=Path, default=ROOT, help="checkout of nDCG Lab to measure")
    parser.add_argument("--cases", nargs="+", default=["one", "lines", "two", "streaming", "line"])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/ndcg-lab-bombs"))
    parser.add_argument("--bomb-gib", type=float, default=2.0)
    parser.add_argument("--line-gib", type=float, default=1.0)
    parser.add_argument("--inflate-limit", default="1GB")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--data", type=Path, default=ROOT / "bench" / "data",
                        help="folder of dev-qrels.txt, dev-run.txt and dev-run.txt.gz (cases plain, gzip, gzip-dc)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    paths = write_inputs(args.cache, args.bomb_gib, args.line_gib)
    env = {**os.environ, "NDCG_LAB_INFLATE_LIMIT": args.inflate_limit}
    if args.one:
        result = run_case(args.one, args.code.resolve(), paths, env, args.timeout, args.data.resolve())
        import resource
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"{result['case']}\t{peak:.0f}\t{result['seconds']:.1f}\t{result['outcome']}")
        return
    print(f"code: {args.code.resolve()} · NDCG_LAB_INFLATE_LIMIT={args.inflate_limit} · bombs {args.bomb_gib:g} GiB "
          f"· line {args.line_gib:g} GiB\n")
    print("| case | peak RSS (MB) | seconds | outcome |\n|---|---:|---:|---|")
    for case in args.cases:
        wrapper = [sys.executable, __file__, "--one", case, "--code", str(args.code), "--cache", str(args.cache),
                   "--bomb-gib", str(args.bomb_gib), "--line-gib", str(args.line_gib),
                   "--inflate-limit", args.inflate_limit, "--timeout", str(args.timeout), "--data", str(args.data)]
        line = subprocess.run(wrapper, capture_output=True, text=True, check=True).stdout.strip().split("\t")
        print(f"| {line[0]} | {int(line[1]):,} | {line[2]} | {line[3].replace('|', '/')} |", flush=True)


if __name__ == "__main__":
    main()
