"""glibc's arenas of a server process (:func:`metrics.io.memory.limit_arenas`), in child processes:
the setting is process-wide and cannot be undone. Its effect on a server's memory is
tests/e2e/test_upload_memory.py's series of refused uploads."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from metrics.io import memory

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.skipif(memory._MALLOPT is None, reason="no glibc mallopt here")

# Eight threads allocate and hold 4 MB each (blocks of 100 kB) at once; with a limit of one arena all of them come
# from the main arena's heap (the program break), with glibc's default most come from thread arenas
# (64 MiB mappings of their own): the count of 64 MiB-aligned heaps in /proc/self/maps tells.
CHILD = """
import threading
from metrics.io.memory import limit_arenas
print(limit_arenas(1))
barrier, held = threading.Barrier(8), []
def work():
    barrier.wait()
    for _ in range(40):
        held.append(bytearray(100_000))
threads = [threading.Thread(target=work) for _ in range(8)]
[t.start() for t in threads]; [t.join() for t in threads]
heaps = 0
for line in open("/proc/self/maps"):
    start = int(line.split()[0].split("-")[0], 16)
    heaps += start % (64 << 20) == 0 and line.split()[1].startswith("rw") and len(line.split()) == 5
print(heaps)
"""


def _child(env_extra: dict[str, str]) -> tuple[str, int]:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"} | env_extra
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True,
                         cwd=ROOT).stdout.split()
    return out[0], int(out[1])


def test_a_limit_of_one_arena_keeps_eight_threads_in_the_main_arena():
    limited, heaps = _child({})
    assert limited == "True"
    free, free_heaps = _child({"MALLOC_ARENA_MAX": "0"})   # an operator's setting wins: glibc's own
    assert free == "False"
    assert heaps < free_heaps, (heaps, free_heaps)
