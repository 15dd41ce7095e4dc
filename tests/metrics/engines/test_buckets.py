"""metrics.engines.buckets: the bucket of a query is crc32 of its qid bytes mod n; the size rules,
and the default engine of metrics.evaluate: streaming when the run files hold more text than
streaming_threshold() (NDCG_LAB_STREAMING_BYTES here), local otherwise or when named, with
identical values either way."""
from __future__ import annotations

import gzip
import zlib

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import metrics
from metrics import engines as scale
from metrics.engines import buckets, streaming
from tests.metrics.engines.collection import shards


def test_bucket_is_crc32_of_the_qid_bytes_mod_n():
    qids = ["q1", "", "héllo", "10", "9", "a" * 300]
    assert scale.crc32(pa.array(qids)).tolist() == [zlib.crc32(q.encode()) for q in qids]
    assert scale.bucket_of(pa.array(qids * 3), 7).tolist() == [zlib.crc32(q.encode()) % 7 for q in qids * 3]


@pytest.mark.parametrize("seed", range(6))
def test_bucket_order_is_the_stable_sort_of_the_rows_by_bucket(seed):
    """Runs of equal qids (a query that comes back later too), in one chunk or two."""
    rng = np.random.default_rng(seed)
    qids = [q for _ in range(60) for q in [f"q{rng.integers(0, 25)}"] * int(rng.integers(1, 12))]
    n_buckets = int(rng.integers(1, 9))
    for arr in (pa.array(qids), pa.chunked_array([pa.array(qids[:37]), pa.array(qids[37:])])):
        counts, order = buckets.bucket_order(arr, n_buckets)
        bucket = scale.bucket_of(arr, n_buckets)
        expected = np.argsort(bucket, kind="stable")
        assert (np.arange(len(qids)) if order is None else order).tolist() == expected.tolist()
        assert counts.tolist() == np.bincount(bucket, minlength=n_buckets).tolist()
    ordered = sorted(qids, key=lambda q: zlib.crc32(q.encode()) % n_buckets)
    assert buckets.bucket_order(pa.array(ordered), n_buckets)[1] is None   # already in bucket order
    assert buckets.bucket_order(pa.array([], pa.string()), 3)[0].tolist() == [0, 0, 0]


def test_default_buckets_fill_every_worker():
    mb = 1 << 20
    assert scale.default_buckets(0) == 1
    assert scale.default_buckets(2050 * mb, 192 * mb) == 11            # ceil(2050 / 192)
    assert scale.default_buckets(2050 * mb, 192 * mb, workers=2) == 12  # rounded up to a multiple of 2
    assert scale.default_buckets(100 * mb, 192 * mb, workers=3) == 6    # two per worker at least


@pytest.fixture
def calls(monkeypatch):
    """Which engine ran: the streaming engine's evaluate wrapped to record its calls."""
    seen = []
    original = streaming.evaluate

    def recording(*args, **kwargs):
        seen.append(kwargs.get("engine"))
        return original(*args, **kwargs)
    monkeypatch.setattr(streaming, "evaluate", recording)
    return seen


def test_run_bytes_counts_file_sizes_and_compressed_files_four_times(collection):
    _, files = collection
    sizes = [f.stat().st_size for f in files]
    expected = sum(size * (4 if f.name.endswith(".gz") else 1) for f, size in zip(files, sizes))
    assert any(f.name.endswith(".gz") for f in files)
    assert buckets.run_bytes({"sys": [str(f) for f in files]}) == expected
    assert buckets.run_bytes([str(files[0]), str(files[1])]) == sizes[0] + sizes[1]
    assert buckets.run_bytes(metrics.read_run(files[0]).df) == 0          # already in memory


def test_a_low_threshold_makes_the_default_engine_stream(collection, monkeypatch, calls):
    qrels, runs = shards(collection)
    local = metrics.evaluate(qrels, runs, ["nDCG@10", "AP", "RR"], engine="local")
    size = buckets.run_bytes(runs)
    monkeypatch.setenv("NDCG_LAB_STREAMING_BYTES", str(size - 1))
    assert buckets.choose_engine(runs) == "streaming"
    streamed = metrics.evaluate(qrels, runs, ["nDCG@10", "AP", "RR"])
    assert calls == ["streaming"]
    pd.testing.assert_frame_equal(streamed, local, check_exact=True)
    assert len(local) > 100


def test_named_local_engine_and_small_runs_stay_local(collection, monkeypatch, calls):
    qrels, runs = shards(collection)
    size = buckets.run_bytes(runs)
    monkeypatch.setenv("NDCG_LAB_STREAMING_BYTES", str(size - 1))
    metrics.evaluate(qrels, runs, ["nDCG@10"], engine="local")
    assert calls == []
    monkeypatch.setenv("NDCG_LAB_STREAMING_BYTES", str(size))        # not above the threshold
    assert buckets.choose_engine(runs) == "local"
    metrics.evaluate(qrels, runs, ["nDCG@10"])
    assert calls == []


def test_a_compressed_run_counts_as_its_text(tmp_path, monkeypatch):
    text = "".join(f"q1 Q0 d{i} {i + 1} {100 - i} tag\n" for i in range(400)).encode()
    (tmp_path / "run.txt.gz").write_bytes(gzip.compress(text))
    size = (tmp_path / "run.txt.gz").stat().st_size
    monkeypatch.setenv("NDCG_LAB_STREAMING_BYTES", str(4 * size - 1))
    assert buckets.choose_engine(str(tmp_path / "run.txt.gz")) == "streaming"
    monkeypatch.setenv("NDCG_LAB_STREAMING_BYTES", str(4 * size))
    assert buckets.choose_engine(str(tmp_path / "run.txt.gz")) == "local"


def test_an_input_that_cannot_be_opened_goes_to_the_local_reader(tmp_path, monkeypatch):
    monkeypatch.setenv("NDCG_LAB_STREAMING_BYTES", "1")
    assert buckets.choose_engine(str(tmp_path / "missing.txt")) == "local"
    with pytest.raises(metrics.MetricsError):
        metrics.evaluate(str(tmp_path / "missing.txt"), str(tmp_path / "missing.txt"), ["RR"])


def test_one_registry_names_the_engines_the_cli_and_the_dispatcher_take():
    from metrics.cli.eval import register  # noqa: F401  (the CLI reads the registry)
    from metrics.errors import MetricsError

    assert list(buckets.ENGINES) == ["local", "streaming", "dask"]
    assert buckets.PARTITIONED == ("streaming", "dask")
    assert buckets.check_engine("dask") == "dask"
    with pytest.raises(MetricsError, match="engine='spark' is not an option"):
        scale.evaluate("q", ["r"], engine="spark")
    with pytest.raises(MetricsError, match="use streaming, dask"):
        streaming.evaluate("q", ["r"], ["AP"], engine="local")
