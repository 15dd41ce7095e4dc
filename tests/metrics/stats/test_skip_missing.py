"""``missing="skip"``: each system is paired with the baseline over the queries both have."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from metrics import cli, stats

BASE = {"q1": 0.5, "q2": 0.25, "q3": 1.0, "q4": 0.0, "q5": 0.75}
SYS_A = {"q1": 0.75, "q2": 0.5, "q3": 0.75}                 # lacks q4, q5
SYS_B = {"q1": 0.25, "q2": 0.5, "q3": 1.0, "q4": 0.5}       # lacks q5


def tidy(**systems) -> pd.DataFrame:
    return pd.DataFrame([{"system": s, "qid": q, "measure": "AP", "value": v}
                         for s, values in systems.items() for q, v in values.items()])


def test_skip_pairs_over_the_common_queries_only():
    frame = tidy(base=BASE, a=SYS_A, b=SYS_B)
    table = stats.compare(frame, "base", ["a", "b"], test="t", correction="none", missing="skip").set_index("system")
    for name, run in (("a", SYS_A), ("b", SYS_B)):
        common = sorted(run)
        base, other = np.array([BASE[q] for q in common]), np.array([run[q] for q in common])
        row = table.loc[name]
        assert row["n_queries"] == len(common)
        assert row["baseline_mean"] == pytest.approx(base.mean())
        assert row["mean"] == pytest.approx(other.mean())
        assert row["diff"] == pytest.approx(other.mean() - base.mean())
        assert row["p_value"] == pytest.approx(scipy_stats.ttest_rel(other, base).pvalue)
    # zero fills the gaps instead: a over five queries, q4 and q5 scoring 0
    zero = stats.compare(frame, "base", ["a"], test="t", correction="none").iloc[0]
    filled = np.array([0.75, 0.5, 0.75, 0.0, 0.0])
    assert zero["n_queries"] == 5
    assert zero["mean"] == pytest.approx(filled.mean())
    assert zero["p_value"] == pytest.approx(scipy_stats.ttest_rel(filled, np.array(list(BASE.values()))).pvalue)


def test_skip_corrects_over_every_row():
    frame = tidy(base=BASE, a=SYS_A, b=SYS_B)
    raw = stats.compare(frame, "base", ["a", "b"], correction="none", missing="skip")
    holm = stats.compare(frame, "base", ["a", "b"], correction="holm", missing="skip")
    p = np.sort(raw["p_value"].to_numpy())
    expected_smallest = min(1.0, 2 * p[0])
    assert holm["p_adjusted"].min() == pytest.approx(expected_smallest)


def test_paired_matrix_skip_keeps_queries_every_system_has():
    frame = tidy(base=BASE, a=SYS_A, b=SYS_B)
    assert list(stats.paired_matrix(frame, "AP", ["base", "a", "b"], "skip").index) == ["q1", "q2", "q3"]
    assert len(stats.paired_matrix(frame, "AP", ["base", "a", "b"])) == 5


def test_compare_cli_skip_missing_stamps_and_pairs(tmp_path, capsys):
    (tmp_path / "qrels").write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(1, 6)))
    (tmp_path / "base").write_text("".join(f"q{i} Q0 d{i} 1 1.0 b\n" for i in range(1, 6)))
    # run a finds the relevant document of q1, q2 at rank 2 and lacks q3..q5
    (tmp_path / "a").write_text("q1 Q0 x 1 2.0 a\nq1 Q0 d1 2 1.0 a\nq2 Q0 x 1 2.0 a\nq2 Q0 d2 2 1.0 a\n")
    args = ["compare", str(tmp_path / "qrels"), str(tmp_path / "base"), str(tmp_path / "a"), "-m", "RR",
            "--format", "json"]
    assert cli.main(args + ["--skip-missing"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["settings"]["missing_queries"].startswith("skipped: each run is paired with the baseline")
    row = out["comparisons"][0]
    assert row["n_queries"] == 2
    assert row["baseline_mean"] == pytest.approx(1.0) and row["mean"] == pytest.approx(0.5)
    assert cli.main(args) == 0
    row = json.loads(capsys.readouterr().out)["comparisons"][0]
    assert row["n_queries"] == 5 and row["mean"] == pytest.approx((0.5 + 0.5) / 5)


def test_compare_cli_table_shows_each_pairing_when_they_differ(tmp_path, capsys):
    (tmp_path / "qrels").write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(1, 6)))
    (tmp_path / "base").write_text("".join(f"q{i} Q0 d{i} 1 1.0 b\n" for i in range(1, 6)))
    (tmp_path / "a").write_text("q1 Q0 x 1 2.0 a\nq1 Q0 d1 2 1.0 a\nq2 Q0 d2 1 1.0 a\n")
    (tmp_path / "b").write_text("".join(f"q{i} Q0 d{i} 1 1.0 b\n" for i in range(1, 5)))
    assert cli.main(["compare", str(tmp_path / "qrels"), str(tmp_path / "base"), str(tmp_path / "a"),
                     str(tmp_path / "b"), "-m", "RR", "--skip-missing"]) == 0
    out = capsys.readouterr().out
    assert "2-4 queries, each run paired over its own" in out
    rows = {line.split()[0]: line.split() for line in out.splitlines()[2:]}
    assert rows["a"][1:4] == ["0.7500", "2", "1.0000"]    # mean of (0.5, 1), over 2 queries, baseline 1
    assert rows["b"][1:4] == ["1.0000", "4", "1.0000"]
