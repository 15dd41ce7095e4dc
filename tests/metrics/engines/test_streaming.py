"""metrics.engines.streaming: the streaming engine gives exactly the local engine's values, with
every option, several systems, fsspec URLs, and the same error for a bad line."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metrics
from metrics import engines as scale
from metrics.engines import streaming as streaming_engine
from metrics.errors import MetricsError
from tests.metrics.engines.collection import MEASURES, TINY, shards


def test_metrics_evaluate_engine_option(collection, cluster):
    qrels, runs = shards(collection)
    local = metrics.evaluate(qrels, runs, ["nDCG@10", "AP"])
    seen = []
    for engine in ("streaming", "dask"):
        frame = metrics.evaluate(qrels, runs, ["nDCG@10", "AP"], engine=engine, buckets=2,
                                 scheduler=cluster.scheduler_address if engine == "dask" else None,
                                 progress=lambda done, total, message: seen.append((done, total, message)))
        pd.testing.assert_frame_equal(frame, local, check_exact=True)
    evaluated = [s for s in seen if s[2].startswith("evaluated bucket")]
    assert len(evaluated) == 4 and {s[1] for s in evaluated} == {2}


@pytest.mark.parametrize("options", [
    {"missing": "skip"}, {"judged_only": True}, {"max_depth": 7}, {"rel_level": 2}, {"ties": "rank"},
    {"inferred": "proxy"},
])
def test_options_agree_between_local_and_streaming(collection, tmp_path, options):
    qrels, runs = shards(collection)
    if options.get("inferred"):
        rng = np.random.default_rng(3)
        pairs = rng.choice(56 * 60, size=500, replace=False)          # distinct (query, document) pairs
        proxy = tmp_path / "proxy.txt"
        proxy.write_text("".join(f"q{p // 60} 0 d{p % 60} {g}\n" for p, g in zip(pairs, rng.integers(0, 3, 500))))
        options = {"inferred": str(proxy)}
    local = metrics.evaluate(qrels, runs, MEASURES, **options)
    streaming = streaming_engine.evaluate(qrels, runs, MEASURES, engine="streaming", buckets=4, **TINY, **options)
    pd.testing.assert_frame_equal(streaming, local, check_exact=True)


def test_several_systems_and_in_memory_runs(collection):
    qrels, files = collection
    frame = metrics.read_run(files[0]).df
    runs = {"first": str(files[0]), "frame": frame, "all": [str(f) for f in files]}
    local = metrics.evaluate(str(qrels), runs, ["nDCG@10", "RR"])
    streaming = metrics.evaluate(str(qrels), runs, ["nDCG@10", "RR"], engine="streaming", buckets=2)
    pd.testing.assert_frame_equal(streaming, local, check_exact=True)
    assert list(dict.fromkeys(streaming["system"])) == ["first", "frame", "all"]


def test_fsspec_urls_for_inputs_and_buckets(collection):
    fsspec = pytest.importorskip("fsspec")
    qrels, files = collection
    memory = fsspec.filesystem("memory")
    for f in files + [qrels]:
        memory.pipe(f"/ndcg-test/{f.name}", f.read_bytes())
    runs = {"sys": "memory://ndcg-test/part-*"}
    local = metrics.evaluate(str(qrels), {"sys": [str(f) for f in files]}, ["nDCG@10", "AP"])
    streaming = metrics.evaluate("memory://ndcg-test/qrels.txt", runs, ["nDCG@10", "AP"], engine="streaming",
                                 buckets=3, workdir="memory://ndcg-test/work")
    pd.testing.assert_frame_equal(streaming, local, check_exact=True)
    assert memory.ls("/ndcg-test/work") == []       # the buckets were removed afterwards




def broken_glob(folder: Path) -> str:
    """Six files of one run; the fifth has a line with four fields far from its start."""
    rng = np.random.default_rng(5)
    for i in range(6):
        rows = [f"q{rng.integers(0, 30)} Q0 d{i}-{j} {j + 1} {rng.integers(0, 9) / 4} tag" for j in range(200)]
        if i == 4:
            rows[152] = "q7 Q0 d-bad 3"
        (folder / f"run-{i}.txt").write_text("\n".join(rows) + "\n")
    (folder / "qrels.txt").write_text("".join(f"q{q} 0 d0-{q} 1\n" for q in range(30)))
    return str(folder / "run-*.txt")


def test_bad_line_in_the_fifth_file_same_error_everywhere(tmp_path, cluster):
    pattern = broken_glob(tmp_path)
    qrels = str(tmp_path / "qrels.txt")
    with pytest.raises(MetricsError) as local:
        metrics.evaluate(qrels, {"sys": pattern}, ["nDCG@10"])
    assert str(local.value).startswith("run-4.txt line 153: expected at least 6 columns")
    work = tmp_path / "work"
    work.mkdir()
    for engine in ("streaming", "dask"):
        with pytest.raises(MetricsError) as caught:
            streaming_engine.evaluate(qrels, {"sys": pattern}, ["nDCG@10"], engine=engine, buckets=3, workdir=work,
                           scheduler=cluster.scheduler_address if engine == "dask" else None,
                           piece_bytes=1000, range_bytes=2500)
        assert str(caught.value) == str(local.value)
        assert (caught.value.source, caught.value.line) == ("run-4.txt", 153)
        assert list(work.iterdir()) == []          # no partial output left behind
    out = tmp_path / "buckets"
    with pytest.raises(MetricsError) as caught:
        scale.partition(pattern, qrels, out, n_buckets=2, piece_bytes=1000, range_bytes=2500)
    assert str(caught.value) == str(local.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["qrels.txt", "work"] + [f"run-{i}.txt" for i in range(6)])
