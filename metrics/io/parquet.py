"""Parquet read whole on the calling thread (:func:`read_parquet_table`)."""
from __future__ import annotations

import pyarrow as pa


def read_parquet_table(source, **options) -> pa.Table:
    """``pyarrow.parquet.read_table`` on the calling thread only: no decoding threads
    (``use_threads=False``) and no read-ahead on Arrow's I/O pool (``pre_buffer=False``).

    An Arrow worker that still holds a slice of a buffer owned by Python (``pa.BufferReader``
    over bytes) when the interpreter starts to finalise must take the GIL to release it;
    CPython then ends that thread with ``pthread_exit``, whose unwinding through Arrow's C++
    frames calls ``std::terminate`` (SIGABRT, "terminate called without an active exception").
    With threaded decoding a process that failed right after the read aborted 4 times in 60
    under full CPU load. Parquet here is a bucket or an uploaded file, read whole; one thread
    costs little beside parsing. The command line also ends without finalising the interpreter
    (:func:`metrics.cli.leave`).
    """
    import pyarrow.parquet as pq

    return pq.read_table(source, use_threads=False, pre_buffer=False, **options)
