"""metrics.cli.eval: ``eval --engine`` prints the same table with every engine."""
from __future__ import annotations

from metrics import cli


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



def test_eval_streams_by_itself_above_the_threshold_unless_told_local(collection, capsys, monkeypatch):
    qrels, files = collection
    base = ["eval", str(qrels), str(files[0].parent / "part-*.txt"), "-m", "nDCG@10", "-m", "AP", "-q"]
    assert cli.main(base) == 0
    local = capsys.readouterr()
    assert "streaming engine:" not in local.err
    monkeypatch.setenv("NDCG_LAB_STREAMING_BYTES", "1")     # every run is larger than one byte
    assert cli.main(base) == 0
    picked = capsys.readouterr()
    assert picked.out == local.out and "streaming engine:" in picked.err
    assert cli.main(base + ["--engine", "local"]) == 0
    told = capsys.readouterr()
    assert told.out == local.out and "streaming engine:" not in told.err

def _random_scores(rng, with_nan: bool) -> list:
    import numpy as np

    from metrics.evaluation import Scores

    out = []
    for s in range(4):
        n = int(rng.integers(0, 300)) if s else 0   # the first run has no query: it has no rows
        values = {}
        for m in ("nDCG@10", "AP", "NumRelRet", "gm_map"):
            v = np.floor(rng.random(n) * 50) if m == "NumRelRet" else rng.random(n) * rng.choice([1e-3, 1.0, 1e3])
            if with_nan and n:
                v[rng.random(n) < 0.05] = np.nan
            values[m] = v
        out.append(Scores(f"run{s}", np.array([f"q{i}" for i in range(n)], dtype=object), values))
    return out


def test_eval_means_without_pandas_equal_the_pandas_means_to_the_bit():
    """What ``eval`` prints (trec, tsv, json) comes from mean_values; means() of the tidy frame
    (pandas' groupby, its own summation) must give the same floats, NaN or not."""
    import numpy as np

    from metrics.evaluation import frame_of, mean_values, means, scores_of

    rng = np.random.default_rng(12)
    for trial in range(40):
        scores = _random_scores(rng, with_nan=trial % 2 == 1)
        table = means(frame_of(scores))
        ours = mean_values(scores)
        assert list(ours) == list(table.index)
        for system, row in ours.items():
            assert list(row) == list(table.columns)
            for m, value in row.items():
                expected = float(table.at[system, m])
                assert value == expected or (np.isnan(value) and np.isnan(expected)), (system, m)
        back = scores_of(frame_of(scores))
        assert [s.system for s in back] == [s.system for s in scores if len(s.qids)]
        for b, s in zip(back, [s for s in scores if len(s.qids)]):
            assert list(b.qids) == list(s.qids)
            assert all(np.array_equal(b.values[m], s.values[m], equal_nan=True) for m in s.values)
