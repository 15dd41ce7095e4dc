"""``python -m metrics eval`` (and ``trec_eval``, ``lint``) imports only what it needs: no pandas,
dateutil, pyarrow.fs, SciPy, plotly, DuckDB, Dask, Streamlit, matplotlib or numba for plain files printed as trec, tsv
or json (start-up is most of the time of a small evaluation). Each command runs in a fresh interpreter that prints the
modules it ended with; the printed values are checked against the tidy frame of
``metrics.evaluate`` and its pandas means, computed here.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import metrics
from metrics.cli import command_names

ROOT = Path(__file__).resolve().parents[2]
LEGAL = Path("ndcg_lab", "sample_data") / "legal"
QRELS = str(LEGAL / "qrels.txt")
RUNS = [str(LEGAL / f"{name}.run") for name in ("bm25", "bm25_ce", "bm25_qe", "dense")]
HEAVY = ("pandas", "scipy", "plotly", "duckdb", "dask", "distributed", "streamlit", "matplotlib", "numba",
         "dateutil",   # pandas' dependency: pyarrow imports it converting a Python list while pandas is deferred
         "pyarrow.fs")  # the S3/GCS/Azure/HDFS bindings and ssl: only a URL or a folder of shards needs them

# Runs the command line as `python -m metrics` does, then prints the names of the modules loaded.
RUNNER = """
import json, sys
from metrics.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
sys.exit(code)
"""


def run(*args: str) -> tuple[str, set[str]]:
    done = subprocess.run([sys.executable, "-c", RUNNER, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    *_, modules = done.stderr.strip().splitlines()
    return done.stdout, set(json.loads(modules))


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def expected_means(runs: list[str], measures: list[str]):
    return metrics.means(metrics.evaluate(str(ROOT / QRELS), [str(ROOT / r) for r in runs], measures))


def test_eval_of_one_run_imports_no_heavy_module_and_prints_the_means():
    out, modules = run("eval", QRELS, RUNS[0], "-m", "nDCG@10", "-m", "AP")
    assert heavy(modules) == []
    table = expected_means(RUNS[:1], ["nDCG@10", "AP"])
    assert out == "".join(f"{m}\tall\t{table.at['bm25', m]:.6f}\n" for m in ("nDCG@10", "AP"))


@pytest.mark.parametrize("fmt", ["trec", "tsv", "json"])
def test_eval_of_four_runs_per_query_imports_no_heavy_module(fmt):
    out, modules = run("eval", QRELS, *RUNS, "-m", "nDCG@10", "-m", "AP", "-q", "--format", fmt)
    assert heavy(modules) == []
    frame = metrics.evaluate(str(ROOT / QRELS), [str(ROOT / r) for r in RUNS], ["nDCG@10", "AP"])
    table = metrics.means(frame)
    if fmt == "json":
        printed = json.loads(out)
        assert printed["means"] == {s: {m: float(table.at[s, m]) for m in table.columns} for s in table.index}
        for row in frame.itertuples():
            assert printed["per_query"][row.system][row.measure][row.qid] == row.value
        return
    lines = out.splitlines()
    rows = [line.split("\t") for line in lines[1:]] if fmt == "tsv" else [line.split("\t") for line in lines]
    if fmt == "tsv":
        assert lines[0] == "system\tqid\tmeasure\tvalue"
        rows = [[s, m, q, v] for s, q, m, v in rows]
    per_query = {(s, m, q): v for s, m, q, v in rows if q != "all"}
    assert per_query == {(r.system, r.measure, r.qid): f"{r.value:.6f}" for r in frame.itertuples()}
    assert {(s, m): v for s, m, q, v in rows if q == "all"} == \
        {(s, m): f"{table.at[s, m]:.6f}" for s in table.index for m in table.columns}


def test_trec_eval_imports_no_heavy_module():
    out, modules = run("trec_eval", QRELS, RUNS[0])
    assert heavy(modules) == []
    table = expected_means(RUNS[:1], ["AP"])
    assert f"map                   \tall\t{table.at['bm25', 'AP']:.4f}\n" in out


def test_lint_imports_no_heavy_module():
    out, modules = run("lint", QRELS, RUNS[0])
    assert heavy(modules) == []
    judged = metrics.means(metrics.evaluate(str(ROOT / QRELS), str(ROOT / RUNS[0]), ["Judged@10"]))
    assert f"Judged@10 = {judged.at['bm25', 'Judged@10']:.4f} over 50 judged queries of bm25" in out


def test_eval_as_a_table_still_imports_pandas_when_it_prints():
    out, modules = run("eval", QRELS, RUNS[0], "-m", "AP", "--format", "table")
    assert "pandas" in modules and "scipy" not in modules
    assert out.splitlines()[-1].split() == ["bm25", f"{expected_means(RUNS[:1], ['AP']).at['bm25', 'AP']:.4f}"]


def test_help_lists_every_command():
    done = subprocess.run([sys.executable, "-m", "metrics", "--help"], cwd=ROOT, capture_output=True, text=True,
                          check=True)
    names = command_names()
    assert {"eval", "lint", "compare", "fuse", "negatives", "trec_eval"} <= set(names)
    assert "{" + ",".join(names) + "}" in done.stdout
