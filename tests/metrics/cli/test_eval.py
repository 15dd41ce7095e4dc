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
