"""Standardised scores (metrics.stats.standardisation, metrics.measures.zscores): trec_eval's -Z arithmetic,
the deviation its own z-score file implies, and ``standardise`` against trec_eval 10's ``-Z`` output on
generated runs."""
from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metrics
from metrics.cli.trec_eval import trec_eval_lines
from metrics.measures.zscores import MISSING, zscore
from metrics.stats.standardisation import read_zscores, reference_stats, standardise, write_zscores

QUICKTEST = Path(__file__).resolve().parents[2] / "data" / "trec_eval_quicktest"


def test_zscore_follows_trec_eval_rules():
    # (0.5 - 0.3) / 0.1; zero deviation: 0 when the score is the mean, no value otherwise; no reference: no value
    z = zscore([0.5, 0.3, 0.4, 0.2], [0.3, 0.3, 0.3, np.nan], [0.1, 0.0, 0.0, np.nan], missing=MISSING)
    assert z[0] == pytest.approx((0.5 - 0.3) / 0.1)
    assert list(z[1:]) == [0.0, MISSING, MISSING]
    assert np.isnan(zscore([0.4], [0.3], [0.0])[0])


def test_trec_eval_test_file_uses_the_sample_deviation():
    """success_1 is 0 or 1 per run: over n runs with k successes, mean k/n and sample deviation
    sqrt(p (1 - p) n / (n - 1)). The file's figures fit n = 74 and not the population deviation."""
    stats = read_zscores(QUICKTEST / "zscores_file")
    rows = stats[stats["measure"].str.startswith("success_")]
    assert len(rows) == 9
    n = 74
    for row in rows.itertuples():
        k = round(row.mean * n)
        assert abs(row.mean - k / n) < 5e-5
        p = k / n
        assert abs(row.stddev - math.sqrt(p * (1 - p) * n / (n - 1))) < 5e-5, row
        if 0 < k < n:
            assert abs(row.stddev - math.sqrt(p * (1 - p))) > 1e-3, row


def test_standardise_against_the_frames_own_runs():
    frame = pd.DataFrame({"system": ["a", "b", "c"] * 2, "qid": ["1"] * 3 + ["2"] * 3, "measure": "AP",
                          "value": [0.2, 0.4, 0.6, 0.5, 0.5, 0.5]})
    out = metrics.standardise(frame)          # the library entry point
    sd = math.sqrt(((0.2 - 0.4) ** 2 + 0 + (0.6 - 0.4) ** 2) / (3 - 1))     # sample deviation of topic 1
    assert out["value"].tolist()[:3] == pytest.approx([-0.2 / sd, 0.0, 0.2 / sd])
    assert out["value"].tolist()[3:] == [0.0, 0.0, 0.0]                   # deviation 0, every score the mean
    assert out["raw"].tolist() == frame["value"].tolist()
    assert "3 runs" in out.attrs["reference"]


# ---------------------------------------------------------------- against trec_eval -Z

TREC_NAMES = {"AP": "map", "P@10": "P_10", "nDCG@10": "ndcg_cut_10", "R@5": "recall_5"}


def collection(folder: Path, seed: int = 3) -> tuple[Path, dict[str, Path]]:
    rng = np.random.default_rng(seed)
    qids = ["1", "2", "7", "10", "12"]
    docs = [f"d{i}" for i in range(30)]
    qrels = folder / "qrels"
    qrels.write_text("".join(f"{q} 0 {d} {int(rng.integers(0, 3))}\n" for q in qids
                             for d in rng.choice(docs, 12, replace=False)))
    runs = {}
    for s in range(4):
        lines = [f"{q} Q0 {d} {r} {float(rng.choice([1, 2, 3, 4]))} run{s}\n" for q in qids
                 for r, d in enumerate(rng.choice(docs, 15, replace=False), start=1)]
        runs[f"run{s}"] = folder / f"run{s}"
        runs[f"run{s}"].write_text("".join(lines))
    return qrels, runs


def test_standardise_equals_trec_eval_z(tmp_path, trec_eval_wide):
    qrels, runs = collection(tmp_path)
    frame = metrics.evaluate(qrels, runs, list(TREC_NAMES))
    stats = reference_stats(frame)
    stats = stats[~((stats["qid"] == "7") & (stats["measure"] == "P@10"))]      # a reference entry missing
    zfile = tmp_path / "zscores"
    write_zscores(stats.assign(measure=stats["measure"].map(TREC_NAMES)), zfile)
    measures = ["-m", "map", "-m", "P.10", "-m", "ndcg_cut.10", "-m", "recall.5"]
    for system, run in runs.items():
        done = subprocess.run([str(trec_eval_wide), "-q", "-n", "-Z", str(zfile), *measures, str(qrels), str(run)],
                              capture_output=True, text=True, check=True, timeout=60)
        theirs = {}
        for line in done.stdout.splitlines():
            name, qid, value = (part.strip() for part in line.split("\t"))
            theirs[(name[1:], qid)] = float(value)
        assert len(theirs) == 20
        own = frame[frame["system"] == system]
        for reference in (frame, zfile):      # the collection's runs, or the file made from them
            mine = standardise(own, reference)
            for row in mine.itertuples():
                expected = theirs[(TREC_NAMES[row.measure], row.qid)]
                dropped = (row.qid, row.measure) == ("7", "P@10")
                if expected == MISSING and reference is frame and dropped:
                    continue                  # only the file lacks it
                if expected == MISSING:
                    assert np.isnan(row.value), (system, row)
                else:
                    assert row.value == pytest.approx(expected, abs=1e-9), (system, row)
        # and the command's -Z output is trec_eval's, line for line
        ours = trec_eval_lines(qrels, run, ["map", "P.10", "ndcg_cut.10", "recall.5"], per_query=True,
                               summary=False, zscores=zfile, decimals=10)
        assert ours == done.stdout.splitlines()


def test_a_topic_every_run_ties_on_standardises_to_zero():
    """0.1 three times: the mean is 0.1 and the deviation 0, so each z is 0 (trec_eval's rule for
    sd = 0), not the -0.8 that floating-point dust would give."""
    frame = pd.DataFrame({"system": ["a", "b", "c", "a", "b", "c"], "qid": ["1", "1", "1", "2", "2", "2"],
                          "measure": ["P@10"] * 6, "value": [0.1, 0.1, 0.1, 0.2, 0.4, 0.6]})
    z = standardise(frame).set_index(["qid", "system"])["value"]
    assert (z.loc["1"] == 0.0).all()
    sd = np.std([0.2, 0.4, 0.6], ddof=1)
    assert z.loc[("2", "a")] == pytest.approx((0.2 - 0.4) / sd)
