"""Work started on a second thread beside the caller's, for numpy and pyarrow kernels that release
the GIL: on two cores an independent step of a large input costs no wall time of its own."""
from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

LARGE = 1 << 20
"""Rows from which a second thread pays for itself; below, the work runs in the caller's thread."""


def beside(rows: int, fn, *args, **kwargs) -> Future:
    """``fn(*args, **kwargs)`` as a future: started on a second thread when ``rows`` is at least
    :data:`LARGE`, else done before returning. ``.result()`` gives its value or raises its error."""
    if rows < LARGE:
        done: Future = Future()
        try:
            done.set_result(fn(*args, **kwargs))
        except BaseException as exc:   # raised by .result(), where the threaded case raises it
            done.set_exception(exc)
        return done
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ndcg-lab-beside")
    try:
        return pool.submit(fn, *args, **kwargs)
    finally:
        pool.shutdown(wait=False)   # the thread ends after this one task
