"""numpy's large arrays in small pages (:func:`metrics.io.memory.no_huge_pages`), in child
processes: the setting is process-wide. Its effect on the Fusion page's time is
bench/profile/fusion_steps.py's (bench/RESULTS.md, round 10)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

# numpy's setting after the call, then the huge pages (kB) of the mappings that hold a 64 MiB array,
# written so every page is touched (numpy's madvise splits the array's mapping at 2 MiB).
CHILD = """
import numpy as np
from numpy._core.multiarray import _set_madvise_hugepage
from metrics.io.memory import no_huge_pages
print(no_huge_pages())
before = _set_madvise_hugepage(False)
_set_madvise_hugepage(before)
print(before)
a = np.ones(64 << 20, dtype=np.uint8)
start, end = a.ctypes.data, a.ctypes.data + a.nbytes
huge, inside = 0, False
for line in open("/proc/self/smaps"):
    first = line.split()[0]
    if "-" in first and not first.endswith(":"):
        lo, hi = (int(x, 16) for x in first.split("-"))
        inside = lo < end and start < hi
    elif inside and first == "AnonHugePages:":
        huge += int(line.split()[1])
print(huge)
"""


def _child(env_extra: dict[str, str]) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"} | env_extra
    return subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True,
                          cwd=ROOT).stdout.split()


def _thp_mode() -> str | None:
    try:
        text = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return None
    return text[text.index("[") + 1:text.index("]")]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="numpy asks for huge pages on Linux only")
def test_numpy_stops_asking_for_huge_pages_unless_the_operator_says():
    done, setting, huge = _child({})
    assert (done, setting) == ("True", "False")
    if _thp_mode() == "madvise":      # huge pages only where asked for: none now
        assert huge == "0"
    # an operator's NUMPY_MADVISE_HUGEPAGE=1 wins
    done, setting, huge = _child({"NUMPY_MADVISE_HUGEPAGE": "1"})
    assert (done, setting) == ("False", "True")
    assert _child({"NUMPY_MADVISE_HUGEPAGE": "0"})[:2] == ["True", "False"]


NUMPY_FIRST = """
import os
import numpy as np                      # loaded with its default: huge pages asked for
from numpy._core.multiarray import _set_madvise_hugepage
os.environ["NUMPY_MADVISE_HUGEPAGE"] = "0"   # as the entry script's allocators.set_defaults does, too late
from metrics.io.memory import no_huge_pages
no_huge_pages()
print(_set_madvise_hugepage(False))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="numpy asks for huge pages on Linux only")
def test_a_numpy_loaded_before_the_entry_scripts_setting_is_turned_off_at_run_time():
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    out = subprocess.run([sys.executable, "-c", NUMPY_FIRST], env=env, capture_output=True, text=True, check=True,
                         cwd=ROOT).stdout.split()
    assert out == ["False"]
