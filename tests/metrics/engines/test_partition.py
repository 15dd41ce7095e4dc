"""metrics.engines.partition: partitioning by query never splits a query, on the generated
collection of tests/metrics/engines/collection.py (queries straddle files, pieces and row groups)."""
from __future__ import annotations

import pyarrow as pa

import metrics
from metrics import engines as scale
from metrics.engines.parts import FRAGMENT_SCHEMA
from tests.metrics.engines.collection import TINY


def read(path) -> pa.Table:
    """An Arrow IPC file read with pyarrow alone."""
    with pa.OSFile(str(path)) as f:
        return pa.ipc.open_file(f).read_all()


def batches(path) -> int:
    with pa.OSFile(str(path)) as f:
        return pa.ipc.open_file(f).num_record_batches


def test_partition_never_splits_a_query(collection, tmp_path):
    qrels, files = collection
    part = scale.partition([str(f) for f in files], str(qrels), tmp_path / "buckets", n_buckets=4, **TINY)
    assert part.n_buckets == 4 and len(part.parts) > len(files)      # large text files were cut into ranges
    tables = []
    for b in range(4):
        fragments = part.run_files(b)
        if any(batches(f) > 1 for f in fragments):
            tables.append(b)
        run = pa.concat_tables([read(f) for f in fragments])
        assert run.schema == FRAGMENT_SCHEMA
        assert set(scale.bucket_of(run["qid"], 4).tolist()) == {b}
        assert scale.read_bucket(part, b).equals(run)
        judged = read(part.qrels_file(b))
        assert set(scale.bucket_of(judged["qid"], 4).tolist()) <= {b}
    assert tables, "some fragment should hold several record batches (queries straddle them)"
    per_bucket = [set(pa.concat_tables([read(f) for f in part.run_files(b)])["qid"].to_pylist())
                  for b in range(4)]
    assert sum(map(len, per_bucket)) == len(set().union(*per_bucket))   # no query in two buckets
    expected = sum(len(metrics.read_run(f)) for f in files)
    assert part.rows == expected
    reopened = scale.Partition.open(tmp_path / "buckets")
    assert reopened.bucket_rows == part.bucket_rows
    frame = scale.to_dask(reopened)            # one Dask partition per bucket, never a batch alone
    assert frame.npartitions == 4
    sizes = frame.map_partitions(len).compute(scheduler="sync").tolist()
    assert sizes == part.bucket_rows
    owners = frame.map_partitions(lambda f: f[["qid"]].drop_duplicates()).compute(scheduler="sync")["qid"]
    assert owners.is_unique                    # every query in exactly one partition


def test_queries_straddle_the_input_files(collection):
    _, files = collection
    per_file = [set(metrics.read_run(f).table["qid"].to_pylist()) for f in files]
    straddling = {q for i, a in enumerate(per_file) for b in per_file[i + 1:] for q in a & b}
    assert len(straddling) > 40
