"""metrics.engines.dask: the Dask engine on a real LocalCluster gives exactly the local engine's
values."""
from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

import metrics
from metrics.engines import streaming as streaming_engine
from tests.metrics.engines.collection import MEASURES, MISSING, TINY, UNJUDGED_QUERIES, shards

TRIM_PRESET = "MALLOC_TRIM_THRESHOLD_" in os.environ     # read at collection, before any cluster starts
THREADS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
PRESET = {key: os.environ.get(key) for key in THREADS}    # idem


def test_local_streaming_and_dask_are_identical(collection, cluster):
    qrels, runs = shards(collection)
    local = metrics.evaluate(qrels, runs, MEASURES)
    streaming = streaming_engine.evaluate(qrels, runs, MEASURES, engine="streaming", buckets=3, **TINY)
    dask = streaming_engine.evaluate(qrels, runs, MEASURES, engine="dask", buckets=5,
                                     scheduler=cluster.scheduler_address, **TINY)
    pd.testing.assert_frame_equal(streaming, local, check_exact=True)
    pd.testing.assert_frame_equal(dask, local, check_exact=True)
    assert ((local["value"].to_numpy() == dask["value"].to_numpy()).all())
    means = metrics.means(local)
    assert np.abs(metrics.means(dask).to_numpy() - means.to_numpy()).max() <= 1e-12
    # missing queries score 0 in every engine; queries without judgments are not reported
    missing = dask[dask["qid"].isin(MISSING) & (dask["measure"] != "NumRet")]
    assert len(missing) == len(MISSING) * (len(MEASURES) - 1) and (missing["value"] == 0).all()
    assert not dask["qid"].isin(UNJUDGED_QUERIES).any()
    assert means.loc["sys", "nDCG@10"] > 0.1


def test_the_local_cluster_leaves_glibc_its_own_trimming(cluster):
    """Dask sets MALLOC_TRIM_THRESHOLD_=65536 in its workers, which turns off glibc's adaptive mmap
    threshold: the 50M-line pass then faulted 2.2M pages (3.7-4.1 system s of 15 s on one worker)."""
    from dask.distributed import Client

    if TRIM_PRESET:
        pytest.skip("MALLOC_TRIM_THRESHOLD_ was set before the tests started")
    with Client(cluster) as client:
        found = client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_"))
    assert len(found) == 2 and set(found.values()) == {None}


def test_the_local_cluster_gives_its_workers_one_thread_and_leaves_this_process_as_it_was(cluster):
    """A nanny writes OMP_NUM_THREADS=1 (and MKL's, OpenBLAS's) into the process that starts it, for
    its worker to inherit; later subprocesses of that process would inherit it too."""
    from dask.distributed import Client

    with Client(cluster) as client:
        found = client.run(lambda: [os.environ.get(key) for key in THREADS])
    assert list(found.values()) == [[PRESET[key] or "1" for key in THREADS]] * 2
    assert {key: os.environ.get(key) for key in THREADS} == PRESET
