"""``python -m metrics negatives``: the hand-built case of tests/test_judgments.py through the command line."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import metrics
from metrics import cli
from metrics.analysis import judgments as J
from metrics.ranking import rank

ROOT = Path(__file__).resolve().parents[3]
LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"

QRELS = """1 0 d1 2
1 0 d2 0
1 0 d3 1
1 0 d4 0
1 0 d9 3
2 0 a1 1
2 0 a2 0
2 0 a3 -1
"""
RUNS = {
    "A": {"1": ["d2", "d1", "u1", "d3", "d4"], "2": ["a2", "u2", "a1"]},
    "B": {"1": ["u1", "d4", "d1", "d2"], "2": ["a3", "a1", "u3"]},
}


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(QRELS)
    paths = []
    for name, lists in RUNS.items():
        lines = [f"{q} Q0 {d} {i + 1} {len(docs) - i}.0 {name}"
                 for q, docs in lists.items() for i, d in enumerate(docs)]
        path = tmp_path / f"{name}.run"
        path.write_text("\n".join(lines) + "\n")
        paths.append(str(path))
    return str(qrels), paths


def run_cli(capsys, *args) -> tuple[int, str, str]:
    code = cli.main(["negatives", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_tsv_triples_exactly(files, capsys):
    qrels, runs = files
    code, out, _ = run_cli(capsys, qrels, *runs, "--depth", "3", "--per-query", "10")
    assert code == 0
    assert out == ("qid\tpositive_docno\tnegative_docno\n"
                   "1\td9\td2\n1\td9\td4\n1\td1\td2\n1\td1\td4\n1\td3\td2\n1\td3\td4\n"
                   "2\ta1\ta2\n2\ta1\ta3\n")


def test_options_cap_grade_and_unjudged(files, capsys):
    qrels, runs = files
    _, out, _ = run_cli(capsys, qrels, *runs, "--depth", "3", "--per-query", "1", "--min-grade", "2")
    assert out.splitlines()[1:] == ["1\td9\td2", "1\td1\td2"]
    _, out, _ = run_cli(capsys, qrels, *runs, "--depth", "3", "--per-query", "1", "--include-unjudged")
    # u1: best rank 1 in B and ranked by two systems, so it leads query 1
    assert out.splitlines()[1:] == ["1\td9\tu1", "1\td1\tu1", "1\td3\tu1", "2\ta1\ta2"]


def test_jsonl_one_line_per_query(files, capsys):
    qrels, runs = files
    _, out, _ = run_cli(capsys, qrels, *runs, "--depth", "3", "--format", "jsonl")
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["qid"] for line in lines] == ["1", "2"]
    assert [p["docno"] for p in lines[0]["positives"]] == ["d9", "d1", "d3"]
    assert lines[0]["negatives"][1] == {"docno": "d4", "grade": 0, "judged": True, "best_rank": 2, "n_systems": 1,
                                        "ranks": {"B": 2}}


def test_output_file(files, capsys, tmp_path):
    qrels, runs = files
    target = tmp_path / "out.tsv"
    code, out, err = run_cli(capsys, qrels, *runs, "--depth", "3", "-o", str(target))
    assert code == 0 and out == ""
    assert "2 queries, 4 positives, 4 negatives" in err
    assert target.read_text().splitlines()[0] == "qid\tpositive_docno\tnegative_docno"


def test_bad_input_exits_2_with_a_message(files, capsys, tmp_path):
    qrels, runs = files
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 d1 1\n")
    code, _, err = run_cli(capsys, qrels, str(bad))
    assert code == 2 and err.startswith("error: ") and "bad.run line 1" in err
    with pytest.raises(SystemExit) as exc:
        cli.main(["negatives", qrels, *runs, "--per-query", "0"])
    assert exc.value.code == 2
    assert "expected a whole number >= 1" in capsys.readouterr().err


def test_cli_matches_the_library_on_the_legal_sample(capsys):
    runs = sorted(str(p) for p in LEGAL.glob("*.run"))
    _, out, _ = run_cli(capsys, str(LEGAL / "qrels.txt"), *runs, "--depth", "20", "--per-query", "5")
    qrels = metrics.read_qrels(LEGAL / "qrels.txt")
    ranked = {Path(p).stem: rank(metrics.read_run(p), qrels) for p in runs}
    assert out == J.training_set(qrels, ranked, depth=20, per_query=5).to_tsv()
    assert out.count("\n") > 100


def test_module_entry_point(files):
    qrels, runs = files
    done = subprocess.run([sys.executable, "-m", "metrics", "negatives", qrels, *runs, "--depth", "3"],
                          cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[0] == "qid\tpositive_docno\tnegative_docno"
