"""python -m metrics fuse: the written TREC run, the recipe, options and errors."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import metrics
from metrics.analysis.fusion import fuse
from metrics.cli import main

ROOT = Path(__file__).resolve().parents[3]
LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"
QRELS = str(LEGAL / "qrels.txt")
BM25, DENSE, CE = (str(LEGAL / f"{name}.run") for name in ("bm25", "dense", "bm25_ce"))


def test_writes_the_library_result_as_a_trec_run(tmp_path, capsys):
    out, recipe = tmp_path / "fused.run", tmp_path / "recipe.json"
    code = main(["fuse", BM25, DENSE, CE, "--method", "combmnz", "--norm", "zscore", "--weights", "0.5,0.3,0.2",
                 "--depth", "50", "--keep", "20", "--name", "mnz3", "-o", str(out), "--recipe", str(recipe)])
    assert code == 0
    expected, expected_recipe = fuse([BM25, DENSE, CE], "combmnz", norm="zscore", weights=[0.5, 0.3, 0.2],
                                     depth=50, keep=20, name="mnz3")
    written = metrics.read_run(str(out), name="mnz3")
    assert written.table.equals(expected.table)
    first = out.read_text().splitlines()[0].split(" ")
    assert len(first) == 6 and first[1] == "Q0" and first[3] == "1" and first[5] == "mnz3"
    assert json.loads(recipe.read_text()) == expected_recipe.to_dict()
    assert json.loads(recipe.read_text())["inputs"][0] == {"name": "bm25", "digest": metrics.read_run(BM25).digest}
    err = capsys.readouterr().err
    assert "fused combmnz(norm=zscore, depth=50, keep=20, weights=0.5,0.3,0.2) of bm25, dense, bm25_ce" in err


def test_default_is_rrf_k60_to_stdout_and_evaluates():
    result = subprocess.run([sys.executable, "-m", "metrics", "fuse", BM25, DENSE], cwd=ROOT,
                            capture_output=True, check=True)
    fused = metrics.read_run(result.stdout, name="rrf")
    assert fused.table.equals(fuse([BM25, DENSE]).run.table)
    assert b"rrf(k=60) of bm25, dense" in result.stderr
    frame = metrics.evaluate(QRELS, [fused], ["nDCG@10"])
    assert len(frame) == 50


@pytest.mark.parametrize("args, message", [
    (["--method", "rrf", "--norm", "minmax"], "rrf is rank-based"),
    (["--method", "wsum"], "wsum needs weights"),
    (["--weights", "1,x"], "--weights '1,x': weights must be numbers"),
    (["--weights", "1 2 3"], "3 weights for 2 runs"),
    (["--method", "fancy"], "unknown fusion method 'fancy'"),
])
def test_errors_are_one_line_with_exit_code_2(capsys, args, message):
    assert main(["fuse", BM25, DENSE, *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and len(err.strip().splitlines()) == 1


def test_one_run_is_refused(capsys):
    assert main(["fuse", BM25]) == 2
    assert "fusion needs at least two runs, got 1" in capsys.readouterr().err
