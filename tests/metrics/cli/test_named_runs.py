"""The command line's frictions: ``name=path`` names a run wherever runs are given (a path that
really holds '=' still works), and hints name the command's flags, not the library's keywords."""
from __future__ import annotations

from pathlib import Path

import pytest

import metrics
from metrics.cli import main, named_runs, split_named

LEGAL = Path(__file__).resolve().parents[3] / "ndcg_lab" / "sample_data" / "legal"
if not LEGAL.exists():
    LEGAL = Path(__file__).resolve().parents[3] / "ndcg_lab" / "sample_data" / "legal"
QRELS, BM25, CE = (str(LEGAL / n) for n in ("qrels.txt", "bm25.run", "bm25_ce.run"))


def test_split_named(tmp_path):
    assert split_named("d21=runs/x.run") == ("d21", "runs/x.run")
    assert split_named("runs/x.run") == (None, "runs/x.run")
    assert split_named("s3://bucket/date=1/run.gz") == (None, "s3://bucket/date=1/run.gz")
    assert split_named("runs/a=b.run") == (None, "runs/a=b.run")
    assert split_named("name=") == (None, "name=")
    real = tmp_path / "x=y.run"
    real.write_text("1 Q0 d 1 1.0 t\n")
    assert split_named(str(real)) == (None, str(real))
    assert split_named("x=y.run") == ("x", "y.run")   # relative and absent here: a name


def test_named_runs_keep_the_library_names_of_unnamed_ones():
    assert named_runs(["a.run", "b.run.gz"]) == ["a.run", "b.run.gz"]
    assert named_runs(["base=a.run", "dir/b.run.gz"]) == {"base": "a.run", "b": "dir/b.run.gz"}
    assert named_runs(["x=a.run", "x=b.run"]) == {"x#1": "a.run", "x#2": "b.run"}


def _tsv(capsys) -> dict:
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()[1:]]
    return {(system, measure): float(value) for system, qid, measure, value in rows if qid == "all"}


def test_eval_names_runs_and_reads_a_path_holding_an_equals_sign(tmp_path, capsys, monkeypatch):
    odd = tmp_path / "d21=legal.run"
    odd.write_bytes(Path(BM25).read_bytes())
    monkeypatch.chdir(tmp_path)
    assert main(["eval", QRELS, "d21=" + BM25, CE, "d21=legal.run", "-m", "AP", "--format", "tsv"]) == 0
    got = _tsv(capsys)
    expected = metrics.means(metrics.evaluate(QRELS, [BM25, CE], ["AP"]))["AP"]
    assert got == pytest.approx({("d21", "AP"): expected["bm25"], ("bm25_ce", "AP"): expected["bm25_ce"],
                                 ("d21=legal", "AP"): expected["bm25"]}, abs=1e-6)


def test_compare_and_lint_name_runs(capsys):
    assert main(["compare", QRELS, "first=" + BM25, "second=" + CE, "-m", "AP", "--format", "tsv"]) == 0
    out = capsys.readouterr().out.splitlines()
    header, row = out[0].split("\t"), out[1].split("\t")
    assert (row[header.index("system")], row[header.index("baseline")]) == ("second", "first")
    assert main(["lint", QRELS, "mine=" + BM25, "--format", "json"]) == 0
    assert "mine" in {f["run"] for f in __import__("json").loads(capsys.readouterr().out)["findings"]}


def test_the_duplicate_hint_names_the_flag_in_the_cli_and_the_keyword_in_the_library(tmp_path, capsys):
    lines = Path(BM25).read_text().splitlines()
    dup = tmp_path / "dup.run"
    dup.write_text("\n".join(lines[:3] + lines[:1]) + "\n")
    for command in (["eval", QRELS, str(dup)], ["compare", QRELS, BM25, str(dup)]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert "appears twice" in err and "--on-duplicate first" in err and "on_duplicate=" not in err
    with pytest.raises(metrics.MetricsError, match="on_duplicate='first'"):
        metrics.evaluate(QRELS, str(dup), ["AP"])
    assert main(["compare", QRELS, BM25, str(dup), "--on-duplicate", "first", "--format", "tsv"]) == 0
