"""What a page of new memory costs on this machine: pages touched moments before against pages
given back to the system a few seconds earlier.

    python bench/profile/fresh_pages.py

On the 2-core benchmark VM (Linux 6.18, transparent huge pages on madvise, as numpy asks for them)
memory a process frees goes back to the host within seconds, and touching it again is a fault to the
host: 2 GB of new pages took 2.6 s a few seconds after a free, 0.22 s right after one. A page that
makes arrays of tens of millions of rows pays this on its first visit, which is why the rounds in
bench/RESULTS.md count the new arrays of the run's length. Prints the seconds of each step.
"""
from __future__ import annotations

import time

import numpy as np

GB = 2_000_000_000


def touch(n_bytes: int) -> float:
    """Seconds to allocate ``n_bytes`` and write every page, then free them."""
    start = time.perf_counter()
    block = np.empty(n_bytes // 8, dtype=np.int64)
    block.fill(0)
    seconds = time.perf_counter() - start
    del block
    return seconds


def main() -> None:
    touch(3 * GB // 2)   # make sure the process has used and freed this much once
    print(f"2 GB right after freeing 1.5 GB: {touch(GB):.3f} s")
    print(f"2 GB again at once:              {touch(GB):.3f} s")
    time.sleep(6)
    print(f"2 GB after 6 s idle:             {touch(GB):.3f} s")
    print(f"2 GB again at once:              {touch(GB):.3f} s")


if __name__ == "__main__":
    main()
