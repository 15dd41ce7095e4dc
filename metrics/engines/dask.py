"""Dask: a client for an existing cluster or a LocalCluster started here, and a partitioned run as a
Dask DataFrame with one partition per bucket. ``dask.distributed`` is imported on first use.
"""
from __future__ import annotations

import os
import re
import sys
import types

import pandas as pd

from ..errors import MetricsError
from .partitioning import Partition, read_bucket
from .parts import FRAGMENT_SCHEMA


def to_dask(part: Partition | str):
    """The partitioned run as a Dask DataFrame with exactly one partition per bucket.

    Built with ``dd.from_map`` over bucket numbers, so a partition is a whole bucket (all its
    fragments and row groups): a query never straddles two partitions, unlike
    ``dd.read_parquet`` on the folder, which may split files by row group.
    """
    import dask.dataframe as dd

    part = part if isinstance(part, Partition) else Partition.open(part)
    meta = FRAGMENT_SCHEMA.empty_table().to_pandas()
    return dd.from_map(_bucket_frame, range(part.n_buckets), part=part, meta=meta,
                       divisions=[None] * (part.n_buckets + 1), enforce_metadata=False)


def _bucket_frame(bucket: int, part: Partition) -> pd.DataFrame:
    return read_bucket(part, bucket).to_pandas()


def client_for(scheduler: str | None, workers: int | None):
    """(client, cleanup): a Client of the cluster at ``scheduler``, or of a LocalCluster started here."""
    try:
        from dask.distributed import Client
    except ImportError:  # pragma: no cover
        raise MetricsError("the dask engine needs dask.distributed", fix="pip install 'dask[distributed]'") from None
    if scheduler:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as exc:
            raise MetricsError(f"cannot reach the Dask scheduler at {scheduler} ({exc})",
                               fix="start it with `dask scheduler` and check the address (tcp://HOST:8786)") \
                from None
        return client, client.close
    cluster = local_cluster(workers or min(os.cpu_count() or 1, 4))
    client = Client(cluster)

    def close():
        client.close()
        cluster.close()
    return client, close


def local_cluster(n_workers: int, **options):
    """A ``LocalCluster`` of ``n_workers`` processes with one thread each, safe to start from any program.

    Worker processes are spawned, and a spawned process first runs the parent's ``__main__``
    script again: a Streamlit page or a test that ran one (AppTest leaves ``__main__`` set to
    the app) would start the app in every worker. Workers only need ``metrics``, so the
    cluster is started with a bare ``__main__``. Its workers keep glibc's adaptive memory
    trimming: Dask's ``MALLOC_TRIM_THRESHOLD_=65536`` turns it off, and every numpy array over
    128 KB is then mapped and faulted anew (the 50M-line one pass: 3.7-4.1 system s on one worker).
    The variables a nanny writes into this process's environment for its worker to inherit
    (``OMP_NUM_THREADS=1`` and the like) are put back once the workers have started: else every
    later subprocess of this program would run its numerical libraries on one thread.
    """
    import dask
    from dask.distributed import LocalCluster

    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    keys = {*dask.config.get("distributed.nanny.pre-spawn-environ"), "PYTHONHASHSEED"}
    before = {key: os.environ.get(key) for key in keys}
    try:
        with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
            return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                dashboard_address=None, **options)
    finally:
        if main is not None:
            sys.modules["__main__"] = main
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def is_local_address(scheduler: str) -> bool:
    host = re.sub(r"^\w+://", "", scheduler).rsplit(":", 1)[0].strip("[]")
    return host in ("localhost", "127.0.0.1", "::1", "0.0.0.0") or host.startswith("127.") or \
        host == os.uname().nodename
