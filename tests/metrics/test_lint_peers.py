"""metrics.lint.peer_differences: the numbers it says each peer would print are the numbers the
peers print: ranx itself (tie order), pytrec_eval itself (float32 scores) and ir_measures' gdeval
(5 decimals); every other query and measure agrees with nDCG Lab."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import metrics
from metrics.cli import main
from metrics.linting import CORRECTIONS, REASONS, peer_differences

ROOT = Path(__file__).resolve().parents[2]
LEGAL = next(p for p in (ROOT / "sample_data" / "legal", ROOT / "ndcg_lab" / "sample_data" / "legal") if p.exists())


def write(tmp_path, qrels: dict, run: dict) -> tuple[str, str]:
    """TREC files of dicts, the run's lines in the dicts' order (ranx's input order)."""
    (tmp_path / "q.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    (tmp_path / "r.run").write_text("".join(f"{q} Q0 {d} {i + 1} {s!r} r\n" for q, docs in run.items()
                                            for i, (d, s) in enumerate(docs.items())))
    return str(tmp_path / "q.txt"), str(tmp_path / "r.run")


def generated(seed: int, depth: int, tie: float):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(40):
        docs = [f"D{d:03d}" for d in rng.choice(300, size=depth, replace=False)]
        grades = rng.choice([0, 0, 1, 2, 3], size=depth)
        grades[0] = 2
        qrels[str(q)] = {d: int(g) for d, g in zip(docs, grades)}
        base = rng.integers(0, 4, size=depth).astype(float)   # many ties
        run[str(q)] = {d: float(b + tie * rng.integers(0, 2)) for d, b in zip(docs, base)}
    return qrels, run


def by_peer(records, peer, reason):
    return {(r["qid"], r["measure"]): r["peer_value"] for r in records if r["peer"] == peer and r["reason"] == reason}


def test_ranx_numbers_are_ranx_own(tmp_path):
    ranx = pytest.importorskip("ranx")
    qrels, run = generated(0, 12, 0.0)
    q, r = write(tmp_path, qrels, run)
    records = peer_differences(q, r, ["nDCG@10", "AP", "P@5", "RR"])
    told = by_peer(records, "ranx", "ranx_ties")
    ranx_run = ranx.Run(run)
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx_run, ["ndcg@10", "map", "precision@5", "mrr"], return_mean=False)
    qids = list(ranx_run.keys())   # ranx's per-query arrays follow its own (sorted) query order
    ranx_values = {m: dict(zip(qids, theirs[name])) for m, name in
            zip(["nDCG@10", "AP", "P@5", "RR"], ["ndcg@10", "map", "precision@5", "mrr"])}
    mine = metrics.evaluate(q, r, ["nDCG@10", "AP", "P@5", "RR"]).set_index(["qid", "measure"])["value"]
    differ = {(qid, m) for m, values in ranx_values.items() for qid, v in values.items()
              if abs(v - mine[(qid, m)]) > 1e-9}
    assert differ and set(told) == differ
    for (qid, m), value in told.items():
        assert value == pytest.approx(ranx_values[m][qid], abs=1e-9)
    assert not by_peer(records, "ranx", "ranx_unstable")   # 12 documents a query: ranx's sort is stable


def test_pytrec_eval_numbers_are_pytrec_eval_own(tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = generated(1, 30, 1e-9)   # scores 1e-9 apart tie in float32
    q, r = write(tmp_path, qrels, run)
    records = peer_differences(q, r, ["nDCG@10", "AP", "P@5"])
    told = by_peer(records, "pytrec_eval", "float32")
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map", "P.5"}).evaluate(run)
    key = {"nDCG@10": "ndcg_cut_10", "AP": "map", "P@5": "P_5"}
    mine = metrics.evaluate(q, r, list(key)).set_index(["qid", "measure"])["value"]
    differ = {(qid, m) for qid in qrels for m in key if abs(theirs[qid][key[m]] - mine[(qid, m)]) > 1e-9}
    assert differ and set(told) == differ
    for (qid, m), value in told.items():
        assert value == pytest.approx(theirs[qid][key[m]], abs=1e-9)
    assert by_peer(records, "ir_measures", "float32") == told == by_peer(records, "PyTerrier", "float32")


def test_gdeval_rounding_is_what_ir_measures_prints():
    ir_measures = pytest.importorskip("ir_measures")
    measures = ["nDCG(dcg='exp-log2')@10", "ERR@20"]
    records = peer_differences(LEGAL / "qrels.txt", LEGAL / "bm25.run", measures + ["nDCG@10"])
    told = by_peer(records, "ir_measures", "gdeval_rounding")
    try:
        printed = {(m.query_id, str(m.measure)): m.value for m in ir_measures.gdeval.iter_calc(
            [ir_measures.parse_measure(x) for x in measures],
            list(ir_measures.read_trec_qrels(str(LEGAL / "qrels.txt"))),
            list(ir_measures.read_trec_run(str(LEGAL / "bm25.run"))))}
    except Exception as error:
        pytest.skip(f"gdeval does not run here: {error}")
    assert len(told) > 50
    for key, value in told.items():
        assert value == pytest.approx(printed[key], abs=1e-12), key
    assert {m for _, m in told} == set(measures)   # linear nDCG goes through pytrec_eval, unrounded


def test_lint_json_lists_every_difference_with_its_reason(capsys):
    assert main(["lint", str(LEGAL / "qrels.txt"), str(LEGAL / "bm25.run"), "--format", "json",
                 "-m", "nDCG(dcg=exp-log2)@10", "-m", "IPrec@0.3"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["measures"] == ["nDCG(dcg=exp-log2)@10", "IPrec@0.3"]
    assert body["reasons"] == REASONS and body["corrections"] == CORRECTIONS
    assert body["corrections"]["ranx"] == "none" and "per measure" in body["corrections"]["PyTerrier"]
    assert "correction_family" in body["reasons"] and "5 decimals" in body["reasons"]["gdeval_rounding"]
    reasons = {(d["peer"], d["reason"]) for d in body["differences"]}
    assert {("ir_measures", "gdeval_rounding"), ("PyTerrier", "gdeval_rounding"),
            ("pytrec_eval", "iprec_rounding")} <= reasons
    assert {d["measure"] for d in body["differences"]} == {"nDCG(dcg='exp-log2')@10", "IPrec@0.3"}
    assert any(f["kind"] == "judged" for f in body["findings"])
