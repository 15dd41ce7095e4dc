"""What touching memory again costs on this machine, by how long it was free before.

    python bench/profile/refault.py [MB] [ROUNDS]

Each step writes a new ``MB``-megabyte numpy array (``np.ones``), frees it, waits, then times the
writing of a new one of the same size; the waits are 0, 2, 5, 10 and 20 s, in a rotated order
each round. On a machine that keeps freed memory in the guest, every step costs about the same
(a page fault per 4 KiB page, or per 2 MiB page where numpy's huge-page advice is taken). On a
virtual machine whose host takes free memory back (free page reporting, ballooning), memory free
for a while is slow to touch again: the dashboard pays that for every array a page makes that is
larger than what the process has just freed. Prints the median seconds per wait and per GB.
"""
from __future__ import annotations

import statistics
import sys
import time

import numpy as np

WAITS = (0, 2, 5, 10, 20)


def touch(mb: int) -> float:
    started = time.perf_counter()
    array = np.ones(mb * 1_000_000 // 8)
    elapsed = time.perf_counter() - started
    del array
    return elapsed


def main() -> None:
    mb = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    times: dict[int, list[float]] = {wait: [] for wait in WAITS}
    for r in range(rounds):
        for wait in WAITS[r % len(WAITS):] + WAITS[:r % len(WAITS)]:
            touch(mb)
            time.sleep(wait)
            times[wait].append(touch(mb))
    print(f"python bench/profile/refault.py {mb} {rounds}")
    print("| free before s | median s | s per GB |")
    print("|---:|---:|---:|")
    for wait in WAITS:
        median = statistics.median(times[wait])
        print(f"| {wait} | {median:.3f} | {median * 1000 / mb:.2f} |")


if __name__ == "__main__":
    main()
