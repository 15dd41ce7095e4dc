"""What two processes on this machine can do at best: the one pass's two byte ranges of a run, each
read and scored by a plain process of its own (no Dask), one after the other and then both at once.

    flock /tmp/bench.lock python bench/profile/dask_ceiling.py [RUN QRELS] [--rounds 3]

Each process limits Arrow's CPU pool to one thread, as a Dask worker does (OMP_NUM_THREADS=1), and
reads its range with ``metrics.engines.contiguous.read_range``, the code a Dask range task runs.
"Dask 2 over 1" cannot exceed (both ranges alone, one after the other) / (both at once); the rest
of the gap to the bench's dask-2 time is Dask's own (scheduler, event loops, transfers).
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

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "bench" / "data"


def one_range(run: str, qrels: str, index: int) -> None:
    os.environ["OMP_NUM_THREADS"] = "1"
    import pyarrow as pa

    pa.set_cpu_count(1)
    sys.path.insert(0, str(ROOT / "bench"))
    from run import MEASURES

    from metrics import io
    from metrics.engines import contiguous
    from metrics.engines.partition import plain_bytes
    from metrics.engines.parts import PIECE_BYTES, plan
    from metrics.measures import parse

    parts = plan([run], -(-plain_bytes([run]) // 2))
    names = list(dict.fromkeys(str(parse(m)) for m in MEASURES))
    options = contiguous.task_options("zero", False, None, 1, "score", "error")
    score = contiguous._scorer(io.read_qrels(qrels).table, options, names)
    started, cpu = time.perf_counter(), time.process_time()
    assert contiguous.read_range(parts[index], score, PIECE_BYTES, tempfile.mkdtemp()) is not None
    print(f"{time.perf_counter() - started:.3f} {time.process_time() - cpu:.3f}")


def timed(run: str, qrels: str, indexes: list[int]) -> list[float]:
    """Wall seconds of each range, its processes started together."""
    procs = [subprocess.Popen([sys.executable, __file__, run, qrels, "--range", str(i)], stdout=subprocess.PIPE,
                              text=True) for i in indexes]
    return [float(p.communicate()[0].split()[0]) for p in procs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", nargs="?", default=str(DATA / "scale-50000000-run.txt"))
    parser.add_argument("qrels", nargs="?", default=str(DATA / "scale-50000000-qrels.txt"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--range", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.range is not None:
        one_range(args.run, args.qrels, args.range)
        return
    alone, together = [], []
    for _ in range(args.rounds):
        alone.append(sum(timed(args.run, args.qrels, [0]) + timed(args.run, args.qrels, [1])))
        together.append(max(timed(args.run, args.qrels, [0, 1])))
        print(f"one after the other {alone[-1]:.2f} s, both at once {together[-1]:.2f} s", flush=True)
    a, t = statistics.median(alone), statistics.median(together)
    print(f"medians: one after the other {a:.2f} s, both at once {t:.2f} s: at most {a / t:.2f}x")


if __name__ == "__main__":
    main()
