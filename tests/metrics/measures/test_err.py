"""metrics.measures.err: ERR by hand, and ERR and exponential nDCG against gdeval itself.

ERR@k = sum over ranks r <= k of R_r / r * prod_{j<r} (1 - R_j), R = (2^g - 1) / 2^4.
"""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import metrics
from metrics.measures import (
    Context,
    compute_curve,
    parse_family,
)
from tests.metrics.measures.hand import ranked_from, value, values


def test_err_cascade_by_hand():
    ranked = ranked_from({"q": [2, 0, 3, 1]})
    r1, r3, r4 = 3 / 16, 7 / 16, 1 / 16  # (2^2 - 1)/16, (2^3 - 1)/16, (2^1 - 1)/16
    assert value(ranked, "ERR") == pytest.approx(r1 / 1 + r3 / 3 * (1 - r1) + r4 / 4 * (1 - r1) * (1 - r3))
    assert value(ranked, "ERR@2") == pytest.approx(r1)
    assert value(ranked, "ERR@3") == pytest.approx(r1 + r3 / 3 * (1 - r1))


def test_err_ignores_unjudged_and_negative_and_caps_the_grade():
    ranked = ranked_from({"q": [None, -1, 4]})
    assert value(ranked, "ERR") == pytest.approx((15 / 16) / 3)
    # max_grade=2: grade 4 counts as 2, R = (2^2 - 1) / 2^2
    assert value(ranked, "ERR(max_grade=2)") == pytest.approx((3 / 4) / 3)


def test_err_queries_are_independent_and_the_curve_agrees():
    ranked = ranked_from({"a": [1, 1], "b": [0, 4, 2]})
    a = 1 / 16 + (1 / 16) / 2 * (1 - 1 / 16)
    b = (15 / 16) / 2 + (3 / 16) / 3 * (1 - 15 / 16)
    assert values(ranked, "ERR") == pytest.approx([a, b])
    curve = compute_curve(Context(ranked), parse_family("ERR"), 3)
    assert curve[:, 2] == pytest.approx([a, b])
    assert curve[:, 0] == pytest.approx([1 / 16, 0.0])


def _gdeval() -> str | None:
    try:
        import ir_measures
    except ImportError:
        return None
    from pathlib import Path

    script = Path(ir_measures.__file__).parent / "bin" / "gdeval.pl"
    return str(script) if script.exists() and shutil.which("perl") else None


@pytest.mark.skipif(_gdeval() is None, reason="gdeval.pl (ir_measures) or perl is absent")
@pytest.mark.parametrize("k", [5, 20])
def test_err_and_exp_ndcg_match_gdeval(tmp_path, k):
    """gdeval prints 5 decimals: ERR@k and nDCG(dcg='exp-log2')@k agree to 5e-6."""
    rng = np.random.default_rng(k)
    qrels, run = [], []
    for q in range(1, 16):
        docs = [f"D{d}" for d in rng.choice(200, size=40, replace=False)]
        grades = rng.choice([-1, 0, 0, 1, 2, 3, 4], size=25)
        grades[0] = 3
        qrels += [f"{q} 0 {d} {g}" for d, g in zip(docs, grades)]
        scores = rng.integers(0, 8, size=30) / 2  # ties, broken by docno descending in both
        run += [f"{q} Q0 {d} {i + 1} {s} sys" for i, (d, s) in enumerate(zip(docs[5:35], scores))]
    (tmp_path / "qrels").write_text("\n".join(qrels) + "\n")
    (tmp_path / "run").write_text("\n".join(run) + "\n")
    out = subprocess.run(["perl", _gdeval(), "qrels", "run", str(k)], cwd=tmp_path, capture_output=True, text=True,
                         check=True).stdout.splitlines()[1:]
    gdeval = {line.split(",")[1]: (float(line.split(",")[2]), float(line.split(",")[3])) for line in out}
    frame = metrics.evaluate(tmp_path / "qrels", tmp_path / "run", [f"ERR@{k}", f"nDCG(dcg='exp-log2')@{k}"])
    ours = frame.pivot(index="qid", columns="measure", values="value")
    assert len(gdeval) == 15
    for qid, (ndcg, err) in gdeval.items():
        assert ours.loc[qid, f"ERR@{k}"] == pytest.approx(err, abs=5e-6 + 1e-12), qid
        assert ours.loc[qid, f"nDCG(dcg='exp-log2')@{k}"] == pytest.approx(ndcg, abs=5e-6 + 1e-12), qid
