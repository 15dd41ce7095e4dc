"""Work beside the main thread (:mod:`metrics.beside`) forced onto its second thread, for the tests
that check that both paths give the same answer: the threaded path is taken only for large inputs."""
from __future__ import annotations

import pytest

import metrics.beside


def force_threads(mp: pytest.MonkeyPatch) -> list[str]:
    """Every beside() call started on a second thread from now on; the list names the work started."""
    started = []

    class Counting(metrics.beside.ThreadPoolExecutor):
        def submit(self, fn, *args, **kwargs):
            started.append(fn.__name__)
            return super().submit(fn, *args, **kwargs)

    mp.setattr(metrics.beside, "LARGE", 0)
    mp.setattr(metrics.beside, "ThreadPoolExecutor", Counting)
    return started
