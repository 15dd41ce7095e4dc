"""Work started on a second thread beside the caller's, for numpy and pyarrow kernels that release
the GIL: on two cores an independent step of a large input costs no wall time of its own."""
from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
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


AHEAD = 4
"""Items :func:`ahead` makes before the caller takes them (each a block of a few hundred KB)."""


def ahead(rows: int, make: Callable[[], Iterator]) -> Iterator:
    """The items of ``make()``, in order, made on a second thread up to :data:`AHEAD` items ahead of
    the caller when ``rows`` is at least :data:`LARGE` (else made here, as the caller asks): one
    thread makes the next block (a seeded generator's draws, which release the GIL) while the
    caller uses the last. A generator's body runs on that one thread only, so a random generator
    it makes there is never shared (:func:`made_ahead`)."""
    if rows < LARGE:
        yield from make()
        return
    yield from made_ahead(make(), depth=AHEAD)


def made_ahead(items: Iterator, *, depth: int = 1, name: str = "ndcg-lab-ahead", daemon: bool = True) -> Iterator:
    """``items`` (an iterator) with the next ones produced on a second thread, at most ``depth``
    ahead, while the caller works on the one in hand. An error of the producer is raised to the
    caller at the item where it happened; closing the iterator (or dropping it) stops the producer
    after its current item, within a tenth of a second, and waits for its thread."""
    made: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                made.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((True, item)):
                    return
            put((True, done))
        except BaseException as exc:   # raised again in the caller's thread, in its place
            put((False, exc))

    worker = threading.Thread(target=produce, name=name, daemon=daemon)
    worker.start()
    try:
        while True:
            ok, item = made.get()
            if not ok:
                raise item
            if item is done:
                return
            yield item
    finally:
        stop.set()
        worker.join()
