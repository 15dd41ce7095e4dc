"""Memory given back to the system once a large input is dropped.

A refused or finished input leaves its pages with the allocators that served it: pyarrow's pool
(mimalloc or jemalloc: they keep freed segments for reuse) and glibc's arenas (numpy and bytes
objects; freed chunks above the top of an arena stay mapped). A server process would then sit
at the peak of its largest upload for as long as it runs. :func:`release_memory` asks each to
return what it holds unused: on a refused 9 MB upload (a 2M-line run with a duplicate at its
end) the process went from 250 MB above its baseline to 90 MB. :func:`no_huge_pages` keeps numpy's
arrays out of transparent huge pages, whose first touch is slow on our virtual machines.
"""
from __future__ import annotations

import ctypes
import gc
import importlib
import os

import pyarrow as pa

__all__ = ["limit_arenas", "no_huge_pages", "release_memory", "resident_bytes"]


def _libc(name: str):
    """A function of glibc (``malloc_trim``, ``mallopt``), or None where the C library has none
    (musl, macOS)."""
    try:
        return getattr(ctypes.CDLL(None), name)   # the process's own symbols: no search for the library
    except (OSError, AttributeError):
        return None


_TRIM = _libc("malloc_trim")
_MALLOPT = _libc("mallopt")
M_ARENA_MAX = -8
"""glibc's ``mallopt`` parameter of the most arenas its threads share (malloc.h)."""
SERVER_ARENAS = 2


def limit_arenas(count: int = SERVER_ARENAS) -> bool:
    """At most ``count`` glibc arenas for this process's threads from now on; True if set.

    A server runs each script run in a thread of its own, and glibc gives a new thread a new
    arena while there are fewer than 8 per core: every arena then keeps pages that one large
    input's run left scattered in it, and :func:`release_memory` gives back only whole free pages.
    Nine refused uploads in one server session kept 381 MB above its baseline with glibc's
    arenas and 153 MB with two (bench/RESULTS.md, "Bounded memory, round 5"). An operator's
    ``MALLOC_ARENA_MAX`` wins."""
    if _MALLOPT is None or os.environ.get("MALLOC_ARENA_MAX"):
        return False
    return bool(_MALLOPT(M_ARENA_MAX, count))


def no_huge_pages() -> bool:
    """numpy's large arrays in pages of 4 KiB from now on, not transparent huge pages; True if set.

    numpy asks Linux for huge pages (``madvise(MADV_HUGEPAGE)``) for every array of 4 MiB or
    more. On the 2-core virtual machines we measure on, a huge page's first touch cost several
    times the system time of the same memory in small pages: building Fusion's pool of two 7M-line
    runs (0.8 GB of new arrays) took 2.9-4.7 s with huge pages (3.2-5.5 s of system time on two
    threads) and 1.0-1.2 s without (``python bench/profile/fusion_steps.py``, bench/RESULTS.md, round 10). The
    servers and the command line call this; a library user's numpy is left as it is. An operator's
    ``NUMPY_MADVISE_HUGEPAGE=1`` wins (numpy reads it when it is imported); ``0``, which a server's
    entry script sets (:mod:`ndcg_lab.ui.allocators`), is made good here for a numpy loaded before it."""
    if os.environ.get("NUMPY_MADVISE_HUGEPAGE", "0").strip() not in ("", "0"):
        return False
    for name in ("numpy._core.multiarray", "numpy.core.multiarray"):   # numpy 2, numpy 1
        try:
            setter = getattr(importlib.import_module(name), "_set_madvise_hugepage", None)
        except ImportError:
            continue
        if setter is not None:
            setter(False)
            return True
    return False


def release_memory() -> None:
    """Collect cycles, then hand the unused pages of pyarrow's pool and of glibc's arenas back
    to the system. Costs a full collection and a walk of the arenas (tens of milliseconds):
    call it after a large input is dropped, not per block."""
    gc.collect()
    pa.default_memory_pool().release_unused()
    if _TRIM is not None:
        _TRIM(0)


def resident_bytes() -> int | None:
    """This process's resident memory now (Linux ``/proc/self/statm``), or None elsewhere."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None
