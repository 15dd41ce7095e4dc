"""metrics.engines.contiguous: a run of contiguous queries scored as it is read, without a partition.

Its values must be the local engine's to the bit, whatever the cuts between pieces and ranges
fall on; whatever it cannot prove (a query that comes back, a repeated document, a bad line, a
compressed file) must send the run to the partition, which words the error as before.
"""
from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

import metrics
from metrics import io
from metrics.engines import contiguous, local
from metrics.engines import streaming as streaming_engine
from metrics.errors import MetricsError
from metrics.evaluation import tidy
from tests.metrics.engines.collection import MEASURES

QUERIES = [f"q{i}" for i in range(40)] + ["101", "9", "x1"]      # x1: not judged
MISSING = {"q7", "q30"}                                            # judged, not in the run


def _write(folder, seed: int = 5, big: str | None = None, end: str = "\n"):
    """qrels.txt and run.txt: every query's lines together, in a shuffled query order, with tied
    scores, a comment and a blank line; ``big``: a query of 600 lines, longer than a range;
    ``end``: the line end."""
    rng = np.random.default_rng(seed)
    qrels = folder / "qrels.txt"
    judged = []
    for q in QUERIES[:-1]:
        docs = rng.choice(700, size=int(rng.integers(3, 20)), replace=False)
        judged += [f"{q} 0 d{d} {g}" for d, g in zip(docs, rng.choice([-1, 0, 1, 2, 3], len(docs)))]
    qrels.write_text("\n".join(judged) + "\n")
    lines = []
    for q in rng.permutation([q for q in QUERIES if q not in MISSING]):
        n = 600 if q == big else int(rng.integers(2, 40))
        docs = rng.choice(700, size=n, replace=False)
        scores = np.round(rng.uniform(0, 3, n) * 4) / 4                 # a coarse grid: many ties
        lines += [f"{q} Q0 d{d} {r + 1} {s} tag" for r, (d, s) in enumerate(zip(docs, scores))]
    lines.insert(len(lines) // 3, "# a comment")
    lines.insert(len(lines) // 2, "")
    run = folder / "run.txt"
    run.write_bytes((end.join(lines) + end).encode())
    return qrels, run


def _fast(qrels, run, threads: int, piece_bytes: int = 300, **options):
    o = {"missing": "zero", "judged_only": False, "max_depth": None, "rel_level": 1, "ties": "score",
         "on_duplicate": "error"} | options
    found = contiguous.scores(str(run), io.read_qrels(qrels), MEASURES, contiguous.task_options(**o),
                              threads=threads, progress=lambda *a: None, piece_bytes=piece_bytes)
    return None if found is None else tidy("run", *found, MEASURES)


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
@pytest.mark.parametrize("options", [{}, {"missing": "skip"}, {"judged_only": True}, {"max_depth": 7},
                                     {"rel_level": 2}, {"ties": "rank"}])
@pytest.mark.parametrize("batch_rows", [contiguous.BATCH_ROWS, 7])
def test_scored_as_read_equals_the_local_engine(tmp_path, monkeypatch, threads, options, batch_rows):
    monkeypatch.setattr(contiguous, "BATCH_ROWS", batch_rows)     # 7: a batch ends inside most pieces
    qrels, run = _write(tmp_path)
    fast = _fast(qrels, run, threads, **options)
    assert fast is not None
    local = metrics.evaluate(str(qrels), {"run": str(run)}, MEASURES, **options)
    pd.testing.assert_frame_equal(fast, local, check_exact=True)


@pytest.mark.parametrize("threads", [2, 3, 4])
def test_a_query_longer_than_a_range_is_joined_across_the_cuts(tmp_path, threads):
    qrels, run = _write(tmp_path, seed=8, big="q12")
    fast = _fast(qrels, run, threads, piece_bytes=256)
    assert fast is not None
    pd.testing.assert_frame_equal(fast, metrics.evaluate(str(qrels), {"run": str(run)}, MEASURES),
                                  check_exact=True)


@pytest.mark.parametrize("end", ["\r\n", "\r"])
def test_other_line_ends(tmp_path, end):
    qrels, run = _write(tmp_path, end=end)
    fast = _fast(qrels, run, 2)
    assert fast is not None
    pd.testing.assert_frame_equal(fast, metrics.evaluate(str(qrels), {"run": str(run)}, MEASURES),
                                  check_exact=True)


def test_the_streaming_engine_scores_without_a_partition(tmp_path):
    qrels, run = _write(tmp_path)
    seen = []
    frame = streaming_engine.evaluate(str(qrels), {"run": str(run)}, MEASURES, engine="streaming", piece_bytes=300,
                                      progress=lambda done, total, message: seen.append(message))
    pd.testing.assert_frame_equal(frame, metrics.evaluate(str(qrels), {"run": str(run)}, MEASURES),
                                  check_exact=True)
    assert seen and all(m.startswith(("reading and scoring", "read and scored")) for m in seen), seen


def _lines(run) -> list[str]:
    return run.read_text().splitlines(keepends=True)


def test_a_query_that_comes_back_goes_to_the_partition(tmp_path):
    qrels, run = _write(tmp_path)
    lines = _lines(run)
    first = lines[0].split()[0]
    run.write_text("".join(lines + [f"{first} Q0 extra 99 0.5 tag\n"]))     # the first query, again at the end
    for threads in (1, 2):                                                 # seen by one range, and by two
        assert _fast(qrels, run, threads) is None
    frame = streaming_engine.evaluate(str(qrels), {"run": str(run)}, MEASURES, engine="streaming", piece_bytes=300)
    pd.testing.assert_frame_equal(frame, metrics.evaluate(str(qrels), {"run": str(run)}, MEASURES),
                                  check_exact=True)


def test_a_repeated_document_is_worded_by_the_partition(tmp_path):
    qrels, run = _write(tmp_path)
    lines = _lines(run)
    lines.insert(5, lines[4])                                              # line 5 again as line 6
    run.write_text("".join(lines))
    assert _fast(qrels, run, 2) is None
    with pytest.raises(MetricsError) as info:
        streaming_engine.evaluate(str(qrels), {"run": str(run)}, MEASURES, engine="streaming", piece_bytes=300)
    assert info.value.line == 6 and "appears twice" in info.value.problem and "(line 5 and line 6)" in str(info.value)
    kept = streaming_engine.evaluate(str(qrels), {"run": str(run)}, MEASURES, engine="streaming", piece_bytes=300,
                                     on_duplicate="first")
    pd.testing.assert_frame_equal(kept, metrics.evaluate(str(qrels), {"run": str(run)}, MEASURES,
                                                         on_duplicate="first"), check_exact=True)


def test_a_bad_line_is_named_by_the_partition(tmp_path):
    qrels, run = _write(tmp_path)
    lines = _lines(run)
    lines[300] = "q1 Q0 d1 1 high tag\n"
    run.write_text("".join(lines))
    assert _fast(qrels, run, 2) is None
    with pytest.raises(MetricsError) as info:
        streaming_engine.evaluate(str(qrels), {"run": str(run)}, MEASURES, engine="streaming", piece_bytes=300)
    assert info.value.line == 301 and info.value.source == "run.txt"


@pytest.mark.parametrize("threads", [1, 2])
def test_a_compressed_run_is_read_in_one_range(tmp_path, threads):
    qrels, run = _write(tmp_path)
    packed = tmp_path / "run.txt.gz"
    packed.write_bytes(gzip.compress(run.read_bytes()))
    fast = _fast(qrels, packed, threads)
    assert fast is not None
    pd.testing.assert_frame_equal(fast, metrics.evaluate(str(qrels), {"run": str(run)}, MEASURES),
                                  check_exact=True)
    lines = _lines(run)
    packed.write_bytes(gzip.compress("".join(lines[:5] + lines[4:]).encode()))   # line 5 twice
    assert _fast(qrels, packed, threads) is None
    with pytest.raises(MetricsError) as info:
        streaming_engine.evaluate(str(qrels), {"run": str(packed)}, MEASURES, engine="streaming")
    assert info.value.line == 6 and "(line 5 and line 6)" in str(info.value)


def _spy(monkeypatch) -> list:
    """The results of contiguous.scores, as the local engine gets them."""
    got, real = [], contiguous.scores
    monkeypatch.setattr(contiguous, "scores", lambda *a, **k: got.append(real(*a, **k)) or got[-1])
    return got


@pytest.mark.parametrize("options", [{}, {"missing": "skip", "judged_only": True}, {"ties": "rank", "max_depth": 5}])
def test_the_local_engine_reads_a_large_file_in_one_pass(tmp_path, monkeypatch, options):
    qrels, run = _write(tmp_path)
    whole = metrics.evaluate(str(qrels), [str(run)], MEASURES, engine="local", **options)   # small: read whole
    got = _spy(monkeypatch)
    monkeypatch.setattr(local, "ONE_PASS_BYTES", 1)
    fast = metrics.evaluate(str(qrels), [str(run)], MEASURES, engine="local", **options)
    assert len(got) == 1 and got[0] is not None
    pd.testing.assert_frame_equal(fast, whole, check_exact=True)
    assert set(fast["system"]) == {"run"}


def test_the_local_engine_words_a_repeated_document_as_before(tmp_path, monkeypatch):
    qrels, run = _write(tmp_path)
    lines = _lines(run)
    lines.insert(5, lines[4])
    run.write_text("".join(lines))
    with pytest.raises(MetricsError) as whole:
        metrics.evaluate(str(qrels), [str(run)], MEASURES, engine="local")
    got = _spy(monkeypatch)
    monkeypatch.setattr(local, "ONE_PASS_BYTES", 1)
    with pytest.raises(MetricsError) as fast:
        metrics.evaluate(str(qrels), [str(run)], MEASURES, engine="local")
    assert got == [None] and str(fast.value) == str(whole.value)


def test_a_range_sends_its_first_and_open_queries_without_the_piece_they_came_from(tmp_path):
    """A Dask range task pickles its Range to the client: an Arrow slice pickles with its whole
    piece (26 MB a range at 50M lines, for two queries' rows)."""
    import pickle

    from metrics.engines.parts import plan

    qrels, run = _write(tmp_path, seed=8)
    [part] = plan([str(run)], run.stat().st_size)
    score = contiguous._scorer(io.read_qrels(qrels).table, contiguous.task_options(
        "zero", False, None, 1, "score", "error"), MEASURES)
    got = contiguous.read_range(part, score, run.stat().st_size, str(tmp_path / "stop"))   # one piece: all the file
    lines = [line for line in _lines(run) if line.strip() and not line.startswith("#")]
    for qid, tables in ((got.first_qid, got.first), got.open):
        rows = [line for line in lines if line.split()[0] == qid]
        assert sum(t.num_rows for t in tables) == len(rows) < len(lines) / 5
        assert len(pickle.dumps(tables, protocol=5)) < 2_000 + 100 * len(rows) < run.stat().st_size / 2


# On Dask: a byte range per worker, read and scored on the worker; the cuts are joined here.

@pytest.fixture(scope="module")
def client(cluster):
    from dask.distributed import Client

    with Client(cluster) as c:
        yield c


@pytest.mark.parametrize("options", [{}, {"missing": "skip", "judged_only": True}, {"ties": "rank", "max_depth": 7}])
def test_on_dask_each_worker_reads_a_range_and_equals_the_local_engine(tmp_path, client, options):
    qrels, run = _write(tmp_path, seed=8, big="q12")                 # q12 is longer than a range
    o = {"missing": "zero", "judged_only": False, "max_depth": None, "rel_level": 1, "ties": "score",
         "on_duplicate": "error"} | options
    seen = []
    found = contiguous.scores(str(run), io.read_qrels(qrels), MEASURES, contiguous.task_options(**o), threads=1,
                              progress=lambda done, total, message: seen.append((done, total)), piece_bytes=256,
                              client=client)
    assert found is not None
    pd.testing.assert_frame_equal(tidy("run", *found, MEASURES),
                                  metrics.evaluate(str(qrels), {"run": str(run)}, MEASURES, **options),
                                  check_exact=True)
    ranges = [done for done, total in seen[1:-1]]                  # one report as each range ends
    assert len(ranges) == 2 and 0 < ranges[0] < ranges[1] == seen[-1][1]


def test_the_dask_engine_scores_without_a_partition(tmp_path, cluster):
    qrels, run = _write(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    seen = []
    frame = streaming_engine.evaluate(str(qrels), {"run": str(run)}, MEASURES, engine="dask", piece_bytes=300,
                                      scheduler=cluster.scheduler_address, workdir=work,
                                      progress=lambda done, total, message: seen.append(message))
    pd.testing.assert_frame_equal(frame, metrics.evaluate(str(qrels), {"run": str(run)}, MEASURES),
                                  check_exact=True)
    assert seen and all(m.startswith(("reading and scoring", "read and scored")) for m in seen), seen
    assert list(work.iterdir()) == []


def test_on_dask_a_query_that_comes_back_goes_to_the_partition(tmp_path, cluster, client):
    qrels, run = _write(tmp_path)
    lines = _lines(run)
    run.write_text("".join(lines + [f"{lines[0].split()[0]} Q0 extra 99 0.5 tag\n"]))
    options = contiguous.task_options("zero", False, None, 1, "score", "error")
    assert contiguous.scores(str(run), io.read_qrels(qrels), MEASURES, options, threads=1, progress=lambda *a: None,
                             piece_bytes=300, client=client) is None
    seen = []
    frame = streaming_engine.evaluate(str(qrels), {"run": str(run)}, MEASURES, engine="dask", piece_bytes=300,
                                      scheduler=cluster.scheduler_address,
                                      progress=lambda done, total, message: seen.append(message))
    pd.testing.assert_frame_equal(frame, metrics.evaluate(str(qrels), {"run": str(run)}, MEASURES),
                                  check_exact=True)
    assert any(m.startswith("evaluated bucket") for m in seen)


def test_on_dask_a_bad_line_is_named_and_nothing_is_left(tmp_path, cluster, client):
    qrels, run = _write(tmp_path)
    lines = _lines(run)
    lines[300] = "q1 Q0 d1 1 high tag\n"
    run.write_text("".join(lines))
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(MetricsError) as info:
        streaming_engine.evaluate(str(qrels), {"run": str(run)}, MEASURES, engine="dask", piece_bytes=300,
                                  scheduler=cluster.scheduler_address, workdir=work)
    assert info.value.line == 301 and info.value.source == "run.txt"
    assert list(work.iterdir()) == []


def test_on_dask_a_worker_of_two_threads_reads_two_ranges(tmp_path):
    from dask.distributed import Client, LocalCluster

    qrels, run = _write(tmp_path, seed=8, big="q12")
    seen = []
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        found = contiguous.scores(str(run), io.read_qrels(qrels), MEASURES,
                                  contiguous.task_options("zero", False, None, 1, "score", "error"), threads=1,
                                  progress=lambda done, total, message: seen.append(done), piece_bytes=256,
                                  client=client)
    assert found is not None and len(seen) == 4                   # start, two ranges, end
    pd.testing.assert_frame_equal(tidy("run", *found, MEASURES),
                                  metrics.evaluate(str(qrels), {"run": str(run)}, MEASURES), check_exact=True)
