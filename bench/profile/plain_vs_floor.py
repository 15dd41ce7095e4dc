"""The 7M-line eval of one or more checkouts beside the parse floor, interleaved round by round.

    python bench/profile/plain_vs_floor.py CHECKOUT [CHECKOUT ...] ROUNDS

Each round runs pyarrow's ``read_csv`` of bench/data/dev-run.txt (bench_process.py's READ_CSV) and
``python -m metrics eval`` (the 12-measure suite) of each checkout, one process at a time, in an
order rotated round by round;
prints per command the median wall seconds (and its ratio to the floor's), the median CPU seconds
of the child and its median peak RSS. Interleaving keeps a before/after fair on a machine whose
speed drifts with its neighbours' load.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

from bench_process import READ_CSV, SUITE  # noqa: E402

RUN, QRELS = HERE / "data" / "dev-run.txt", HERE / "data" / "dev-qrels.txt"


def measure(command: list[str], cwd: str) -> tuple[float, float, float]:
    """(wall s, CPU s of the child, its peak RSS MB)."""
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env=dict(os.environ, PYTHONPATH=cwd))
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{command[:4]} failed: {child.stderr.read().decode()[-400:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main(argv: list[str]) -> None:
    *checkouts, rounds = argv
    suite = [arg for name in SUITE for arg in ("-m", name)]
    commands = [("floor", [sys.executable, "-c", READ_CSV, str(RUN)], str(HERE.parent))]
    commands += [(c, [sys.executable, "-m", "metrics", "eval", str(QRELS), str(RUN), *suite], c) for c in checkouts]
    found: dict[str, list[tuple[float, float, float]]] = {}
    for r in range(int(rounds)):
        # each command takes each place in turn: the process after another pays for the memory the
        # one before freed (about 0.35 s here, whichever checkout runs second)
        for label, command, cwd in commands[r % len(commands):] + commands[:r % len(commands)]:
            found.setdefault(label, []).append(measure(command, cwd))
    print("load average after:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    floor = statistics.median(w for w, _, _ in found["floor"])
    for label, rows in found.items():
        wall = statistics.median(w for w, _, _ in rows)
        cpu, peak = statistics.median(c for _, c, _ in rows), statistics.median(m for _, _, m in rows)
        print(f"{label:32s} wall {wall:.2f} s ({wall / floor:.2f}x)  cpu {cpu:.2f} s  peak {peak:.0f} MB  "
              f"runs {[round(w, 2) for w, _, _ in rows]}")


if __name__ == "__main__":
    main(sys.argv[1:])
