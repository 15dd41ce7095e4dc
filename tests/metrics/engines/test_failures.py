"""Failed partitions leave nothing behind, on the streaming engine and on a real Dask cluster,
including the tasks that were still running (and were abandoned) when another part failed."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from metrics import engines
from metrics.engines import streaming as streaming_engine
from metrics.errors import MetricsError

REPEATS = 20


@pytest.fixture(scope="module")
def cluster():
    """One LocalCluster (2 worker processes) reused by every repetition, so the test stays bounded."""
    pytest.importorskip("dask.distributed")
    with engines.local_cluster(2) as local:
        yield local


def failing_run(folder: Path) -> str:
    """Six files of one run: the fifth has a four-field line near its start, and the sixth is large,
    so its tasks are still writing fragments when the failure is known."""
    rng = np.random.default_rng(7)
    for i in range(6):
        n = 20_000 if i == 5 else 300
        rows = [f"q{rng.integers(0, 40)} Q0 d{i}-{j} {j + 1} {rng.integers(0, 9) / 4} tag" for j in range(n)]
        if i == 4:
            rows[10] = "q7 Q0 d-bad 3"
        (folder / f"run-{i}.txt").write_text("\n".join(rows) + "\n")
    (folder / "qrels.txt").write_text("".join(f"q{q} 0 d0-{q} 1\n" for q in range(40)))
    return str(folder / "run-*.txt")


def _idle(client, timeout: float = 30.0) -> None:
    """Wait until the scheduler runs no task (bounded), so a late write would have happened."""
    deadline = time.monotonic() + timeout
    while any(client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.05)


def test_no_partial_output_after_a_failure_twenty_times(tmp_path, cluster):
    from dask.distributed import Client

    pattern = failing_run(tmp_path)
    qrels = str(tmp_path / "qrels.txt")
    with Client(cluster) as client:
        for attempt in range(REPEATS):
            work = tmp_path / f"work-{attempt}"
            work.mkdir()
            for engine in ("streaming", "dask"):
                with pytest.raises(MetricsError) as caught:
                    streaming_engine.evaluate(qrels, {"sys": pattern}, ["nDCG@10"], engine=engine, buckets=3,
                                              workdir=work, scheduler=cluster.scheduler_address
                                              if engine == "dask" else None, piece_bytes=1000, range_bytes=4000)
                assert (caught.value.source, caught.value.line) == ("run-4.txt", 11)
                assert list(work.iterdir()) == [], (attempt, engine)   # at once ...
                _idle(client)
                assert list(work.iterdir()) == [], (attempt, engine)   # ... and once every task has ended


def test_partition_into_a_folder_leaves_nothing_on_failure(tmp_path, cluster):
    from dask.distributed import Client

    pattern = failing_run(tmp_path)
    out = tmp_path / "out" / "buckets"
    out.parent.mkdir()
    with Client(cluster) as client:
        with pytest.raises(MetricsError, match="run-4.txt line 11: expected at least 6 columns"):
            engines.partition(pattern, str(tmp_path / "qrels.txt"), out, n_buckets=4, piece_bytes=1000,
                              range_bytes=4000, client=client)
        _idle(client)
    assert list(out.parent.iterdir()) == []
