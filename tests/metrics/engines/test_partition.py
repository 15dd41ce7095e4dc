"""Scale-out engines: partitioning by query, and local / streaming / dask giving identical values.

Inputs are generated with seeded numpy: tied scores, unjudged documents, negative grades, qrels
queries the run lacks (scored 0) and run queries without judgments; one run is split over six
files (plain, tab- and blank-separated with comments, gzip, parquet with tiny row groups) so
that every query straddles files. Pieces, byte ranges and row groups are made tiny to push
every query across their boundaries too.
"""
from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import metrics
from metrics import cli
from metrics import engines as scale
from metrics.engines import streaming as streaming_engine
from metrics.errors import MetricsError

MEASURES = ["nDCG@5", "nDCG@10", "nDCG(dcg=exp-log2)@10", "nDCG", "AP", "RR", "P@5", "R@100",
            "Judged@10", "Rprec", "NumRet", "Success@3"]
TINY = {"piece_bytes": 300, "range_bytes": 1200, "row_group_rows": 4}
MISSING = ("q50", "q51", "q52")       # judged, absent from the run: they score 0
UNJUDGED_QUERIES = ("x1", "x2")       # in the run only: ignored


def make_collection(folder: Path, seed: int = 11) -> tuple[Path, list[Path]]:
    """qrels.txt and a run spread over six files in mixed formats; returns (qrels, files)."""
    rng = np.random.default_rng(seed)
    queries = [f"q{i}" for i in range(56)] + ["101", "9"]
    judged = []
    for q in queries:
        docs = rng.choice(60, size=int(rng.integers(4, 25)), replace=False)
        judged += [f"{q} 0 d{d} {int(g)}" for d, g in zip(docs, rng.choice([-1, 0, 0, 1, 2, 3], len(docs)))]
    qrels = folder / "qrels.txt"
    qrels.write_text("\n".join(judged) + "\n")
    lines = []
    for q in [q for q in queries if q not in MISSING] + list(UNJUDGED_QUERIES):
        docs = rng.choice(60, size=int(rng.integers(3, 40)), replace=False)
        scores = np.round(rng.uniform(0, 3, len(docs)) * 4) / 4          # a coarse grid: many ties
        lines += [(q, f"d{d}", r + 1, float(s)) for r, (d, s) in enumerate(zip(docs, scores))]
    pieces = np.array_split(rng.permutation(len(lines)), 6)
    files = []
    for i, rows in enumerate(pieces):
        rows = [lines[j] for j in sorted(rows)]
        if i == 2:
            path = folder / "part-2.parquet"
            pq.write_table(pa.table({"qid": [r[0] for r in rows], "docno": [r[1] for r in rows],
                                     "rank": [r[2] for r in rows], "score": [r[3] for r in rows]}),
                           path, row_group_size=5)
        else:
            sep = {1: "\t", 3: "  \t "}.get(i, " ")
            text = "".join(f"{q}{sep}Q0{sep}{d}{sep}{k}{sep}{s}{sep}tag\n" for q, d, k, s in rows)
            if i == 3:
                text = "# exported by a search engine\n\n" + text
            if i == 4:
                path = folder / "part-4.txt.gz"
                path.write_bytes(gzip.compress(text.encode()))
            else:
                path = folder / f"part-{i}.txt"
                path.write_text(text)
        files.append(path)
    return qrels, files


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    return make_collection(tmp_path_factory.mktemp("collection"))


@pytest.fixture(scope="module")
def cluster():
    """A real LocalCluster: 2 worker processes, 1 thread each (started with a bare __main__, see
    metrics.scale.local_cluster: earlier AppTest tests leave __main__ set to app.py)."""
    pytest.importorskip("dask.distributed")
    with scale.local_cluster(2) as local:
        yield local


def shards(collection):
    qrels, files = collection
    return str(qrels), {"sys": [str(f) for f in files]}


# --------------------------------------------------------------------------- the hash


def test_bucket_is_crc32_of_the_qid_bytes_mod_n():
    qids = ["q1", "", "héllo", "10", "9", "a" * 300]
    assert scale.crc32(pa.array(qids)).tolist() == [zlib.crc32(q.encode()) for q in qids]
    assert scale.bucket_of(pa.array(qids * 3), 7).tolist() == [zlib.crc32(q.encode()) % 7 for q in qids * 3]


# --------------------------------------------------------------------------- partitioning


def test_partition_never_splits_a_query(collection, tmp_path):
    qrels, files = collection
    part = scale.partition([str(f) for f in files], str(qrels), tmp_path / "buckets", n_buckets=4, **TINY)
    assert part.n_buckets == 4 and len(part.parts) > len(files)      # large text files were cut into ranges
    tables = []
    for b in range(4):
        fragments = part.run_files(b)
        if any(pq.ParquetFile(f).metadata.num_row_groups > 1 for f in fragments):
            tables.append(b)
        run = pa.concat_tables([pq.read_table(f) for f in fragments])
        assert set(scale.bucket_of(run["qid"], 4).tolist()) == {b}
        judged = pq.read_table(part.qrels_file(b))
        assert set(scale.bucket_of(judged["qid"], 4).tolist()) <= {b}
    assert tables, "some fragment should hold several row groups (queries straddle them)"
    per_bucket = [set(pa.concat_tables([pq.read_table(f) for f in part.run_files(b)])["qid"].to_pylist())
                  for b in range(4)]
    assert sum(map(len, per_bucket)) == len(set().union(*per_bucket))   # no query in two buckets
    expected = sum(len(metrics.read_run(f)) for f in files)
    assert part.rows == expected
    reopened = scale.Partition.open(tmp_path / "buckets")
    assert reopened.bucket_rows == part.bucket_rows
    frame = scale.to_dask(reopened)            # one Dask partition per bucket, never a row group alone
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


# --------------------------------------------------------------------------- engines


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


# --------------------------------------------------------------------------- bad input


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


def test_duplicate_across_files_names_both(tmp_path):
    (tmp_path / "a.txt").write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    (tmp_path / "b.txt").write_text("q2 Q0 d1 1 2.0 t\nq1 Q0 d2 1 0.5 t\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d2 1\nq2 0 d1 1\n")
    runs = {"sys": [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")]}
    qrels = str(tmp_path / "qrels.txt")
    expected = "b.txt line 2: document 'd2' appears twice for query 'q1' (a.txt line 2 and line 2)"
    for engine in ("local", "streaming"):
        with pytest.raises(MetricsError) as caught:
            metrics.evaluate(qrels, runs, ["RR"], engine=engine, buckets=2)
        assert str(caught.value).startswith(expected)
    first = metrics.evaluate(qrels, runs, ["RR"], on_duplicate="first")
    assert first.set_index("qid")["value"].to_dict() == {"q1": 0.5, "q2": 1.0}
    pd.testing.assert_frame_equal(
        metrics.evaluate(qrels, runs, ["RR"], engine="streaming", buckets=2, on_duplicate="first"), first)


# --------------------------------------------------------------------------- command line


def test_cli_engines_print_the_same(collection, capsys, cluster):
    qrels, files = collection
    pattern = str(files[0].parent / "part-*.txt")
    base = ["eval", str(qrels), pattern, "-m", "nDCG@10", "-m", "AP", "-q"]
    assert cli.main(base) == 0
    local = capsys.readouterr().out
    assert cli.main(base + ["--engine", "streaming", "--buckets", "3"]) == 0
    streaming = capsys.readouterr()
    assert streaming.out == local
    assert "evaluated bucket 3 of 3" in streaming.err and "streaming engine:" in streaming.err
    assert cli.main(base + ["--engine", "dask", "--scheduler", cluster.scheduler_address, "--no-progress"]) == 0
    dask = capsys.readouterr()
    assert dask.out == local and dask.err == ""
    assert cli.main(base + ["--scheduler", cluster.scheduler_address]) == 2
    assert "--scheduler needs --engine dask" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["q7 0 d-bad 3", "q7 Q0 d-bad 3 abc tag", "q7 Q0 d-bad 3 nan tag"])
def test_errors_name_the_original_line_at_any_piece_or_range_boundary(tmp_path, bad):
    rows = [f"q{i % 7}  Q0\td{i} {i + 1} {i / 4} tag" for i in range(40)]
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    for at in range(0, 40, 3):
        path = tmp_path / "run.txt"
        path.write_text("\n".join(["# header comment"] + rows[:at] + [bad] + rows[at:]) + "\n")
        with pytest.raises(MetricsError) as local:
            metrics.read_run(path)
        with pytest.raises(MetricsError) as streamed:
            scale.partition(str(path), str(qrels), tmp_path / "out", n_buckets=2, piece_bytes=90, range_bytes=250)
        assert str(streamed.value) == str(local.value)
        assert streamed.value.line == at + 2


# --------------------------------------------------------------------------- dashboard


def test_data_page_streams_a_large_run_and_says_so(monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("NDCG_LAB_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("NDCG_LAB_STREAMING_BYTES", "1000")
    root = Path(__file__).resolve().parents[3]
    monkeypatch.setenv("NDCG_LAB_DATA_ROOTS", str(root / "sample_data"))
    at = AppTest.from_file(str(root / "app.py"), default_timeout=120).run()
    at.switch_page("views/data.py").run()
    assert not at.exception
    at.text_input(key="large_run_path").input(str(root / "sample_data" / "legal" / "bm25.run"))
    next(b for b in at.button if b.label == "Evaluate with the streaming engine").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("with the **streaming** engine in" in s.value for s in at.success)
    shown = next(t.value for t in at.table if "engine" in t.value.columns)
    assert shown.loc[0, "engine"] == "streaming" and shown.loc[0, "name"] == "bm25"
    expected = metrics.means(metrics.evaluate(root / "sample_data" / "legal" / "qrels.txt",
                                              root / "sample_data" / "legal" / "bm25.run",
                                              ["nDCG(dcg=exp-log2)@10", "AP"]))
    assert shown.loc[0, "nDCG(dcg=exp-log2)@10"] == f"{expected.iloc[0, 0]:.4f}"
    assert shown.loc[0, "AP"] == f"{expected.iloc[0, 1]:.4f}"
