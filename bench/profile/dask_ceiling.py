"""What two processes on this machine can do at best: the one pass's two byte ranges of a run, each
read and scored by a plain process of its own (no Dask), one after the other and then both at once.

    python bench/profile/dask_ceiling.py [RUN QRELS] [--rounds 3] [--dask]

Each process limits Arrow's CPU pool to one thread, as a Dask worker does (OMP_NUM_THREADS=1), and
reads its range with ``metrics.engines.contiguous.read_range``, the code a Dask range task runs.
"Dask 2 over 1" cannot exceed (both ranges alone, one after the other) / (both at once); the rest
of the gap to the bench's dask-2 time is Dask's own (scheduler, event loops, transfers).
``--dask`` times the whole Dask pass too in every round (``metrics.evaluate(..., engine="dask")`` on
LocalClusters of 1 and of 2 workers, started once), so that both ratios come from the same minutes.
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
    from metrics.engines.partitioning import plain_bytes
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
    parser.add_argument("--dask", action="store_true", help="also time the Dask pass, 1 and 2 workers")
    parser.add_argument("--range", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.range is not None:
        one_range(args.run, args.qrels, args.range)
        return
    passes = dask_passes(args.run, args.qrels) if args.dask else None
    if passes is not None:
        next(passes)                                  # the clusters started and warmed
    alone, together, dask = [], [], {1: [], 2: []}
    try:
        for _ in range(args.rounds):
            alone.append(sum(timed(args.run, args.qrels, [0]) + timed(args.run, args.qrels, [1])))
            together.append(max(timed(args.run, args.qrels, [0, 1])))
            line = f"one after the other {alone[-1]:.2f} s, both at once {together[-1]:.2f} s"
            if passes is not None:
                for workers in dask:
                    dask[workers].append(passes.send(workers))
                line += f"; Dask pass, 1 worker {dask[1][-1]:.2f} s, 2 workers {dask[2][-1]:.2f} s"
            print(line, flush=True)
    finally:
        if passes is not None:
            passes.close()
    a, t = statistics.median(alone), statistics.median(together)
    print(f"medians: one after the other {a:.2f} s, both at once {t:.2f} s: at most {a / t:.2f}x")
    if passes is not None:
        one, two = statistics.median(dask[1]), statistics.median(dask[2])
        print(f"medians: Dask pass, 1 worker {one:.2f} s, 2 workers {two:.2f} s: {one / two:.2f}x")


def dask_passes(run: str, qrels: str):
    """A generator: sent a number of workers, the seconds of one Dask pass on that cluster."""
    from dask.distributed import Client

    import metrics
    from metrics.engines.dask import local_cluster
    sys.path.insert(0, str(ROOT / "bench"))
    from run import MEASURES

    clusters = {n: local_cluster(n, memory_limit=0) for n in (1, 2)}
    clients = {n: Client(cluster) for n, cluster in clusters.items()}
    try:
        for cluster in clusters.values():            # a first pass on each: the workers' imports
            metrics.evaluate(qrels, run, MEASURES, engine="dask", scheduler=cluster.scheduler_address)
        seconds = None
        while True:
            n = yield seconds
            started = time.perf_counter()
            metrics.evaluate(qrels, run, MEASURES, engine="dask", scheduler=clusters[n].scheduler_address)
            seconds = time.perf_counter() - started
    finally:
        for n in clusters:
            clients[n].close()
            clusters[n].close()


if __name__ == "__main__":
    main()
