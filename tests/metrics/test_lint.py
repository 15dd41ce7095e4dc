"""metrics.lint: query overlap, the run's own findings, and Judged@k from the measure itself."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metrics import io
from metrics.linting import lint

RUN = b"007 Q0 d1 1 3.0 bm25\n007 Q0 d2 2 2.0 bm25\n008 Q0 d1 1 1.5 bm25\n"
QRELS = b"007 0 d1 1\n007 0 d2 0\n008 0 d1 2\n"


def test_lint_query_overlap_and_judged_at_k():
    qrels = io.read_qrels(b"1 0 a 1\n1 0 b 0\n1 0 z 0\n2 0 a 1\n9 0 a 1\n")
    # query 1: scores c=3 > {b, a, z} tied at 2 -> docno descending: z, b, a.
    # top 3 = c, z, b: judged z, b -> 2/3. query 2: one document (judged) -> 1/min(3, 1) = 1.
    # query 9 is judged but not retrieved: it counts 0, as in evaluate(..., ["Judged@3"]).
    run = io.read_run(b"1 Q0 a 1 2 t\n1 Q0 b 2 2 t\n1 Q0 c 3 3 t\n1 Q0 z 4 2 t\n2 Q0 a 1 1 t\n5 Q0 a 1 1 t\n")
    findings = {f.kind: f for f in lint(qrels, run, k=3)}
    assert findings["queries_not_in_qrels"].count == 1 and findings["queries_not_in_qrels"].examples == ["5"]
    assert findings["queries_not_in_run"].count == 1 and findings["queries_not_in_run"].examples == ["9"]
    judged = findings["judged"]
    assert judged.value == pytest.approx((2 / 3 + 1 + 0) / 3)
    assert judged.count == 3 and "Judged@3" in judged.message and "counts 0" in judged.message
    assert "ties" in findings and "rank_order" in findings     # the run's own findings come along


def test_lint_matches_ir_measures_on_trec_eval_data(trec_eval_data):
    ir_measures = pytest.importorskip("ir_measures")
    qrels_path, run_path = trec_eval_data / "qrels.comment.test", trec_eval_data / "results.comment.test"
    judged = [f for f in lint(qrels_path, run_path, k=10) if f.kind == "judged"][0]
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    per_query = {m.query_id: m.value for m in ir_measures.iter_calc(
        [ir_measures.Judged @ 10], qrels, ir_measures.read_trec_run(str(run_path)))}
    judged_queries = {q.query_id for q in qrels}
    # ir_measures averages over the queries the run has; missing judged queries count 0 here.
    assert judged.value == pytest.approx(sum(per_query.get(q, 0.0) for q in judged_queries) / len(judged_queries))
    assert judged.count == len(judged_queries)


def test_lint_accepts_paths(tmp_path):
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_bytes(QRELS)
    r.write_bytes(RUN)
    kinds = [f.kind for f in lint(q, r)]
    assert kinds == ["judged"]
    assert [f.value for f in lint(q, r)] == [1.0]


def test_judged_at_k_matches_a_brute_force_on_random_runs():
    """Canonical order (score desc, docno desc) with many ties at the cutoff, unsorted input."""
    rng = np.random.default_rng(11)
    for trial in range(10):
        n = 3000
        run_frame = pd.DataFrame({"qid": rng.integers(0, 40, n).astype(str),
                                  "docno": np.char.add("d", rng.integers(0, 400, n).astype(str)),
                                  "score": rng.integers(0, 6, n).astype(float)})
        run_frame = run_frame.drop_duplicates(["qid", "docno"]).sample(frac=1, random_state=trial)
        qrels_frame = pd.DataFrame({"qid": rng.integers(0, 45, 4000).astype(str),
                                    "docno": np.char.add("d", rng.integers(0, 400, 4000).astype(str)),
                                    "rel": rng.integers(0, 3, 4000)}).drop_duplicates(["qid", "docno"])
        k = int(rng.integers(1, 30))
        judged_set = set(zip(qrels_frame.qid, qrels_frame.docno))
        per_query = []
        for qid in sorted(set(qrels_frame.qid)):
            group = run_frame[run_frame.qid == qid]
            if group.empty:
                per_query.append(0.0)       # judged query the run lacks
                continue
            by_docno = sorted(zip(group.score, group.docno), key=lambda x: x[1].encode(), reverse=True)
            ranked = sorted(by_docno, key=lambda x: -x[0])    # stable: ties keep docno descending
            top = ranked[:k]
            per_query.append(sum((qid, d) in judged_set for _, d in top) / len(top))
        found = [f for f in lint(qrels_frame, run_frame, k=k) if f.kind == "judged"][0]
        assert found.count == len(per_query)
        assert found.value == pytest.approx(np.mean(per_query), abs=1e-12), trial


def test_lint_orders_the_run_once_for_judged_and_parity_and_once_more_for_ranx(monkeypatch):
    """trec_eval's order serves Judged@k and the parity checks: a run whose scores are exact in
    float32 is ordered twice (trec_eval's order, ranx's), not three times (Judged@k had its own)."""
    from metrics import ordering

    calls = []
    real = ordering.canonical_arrays   # every rank() orders through it, whoever imported rank
    monkeypatch.setattr(ordering, "canonical_arrays", lambda *a: calls.append(a[-1]) or real(*a))
    findings = {f.kind: f for f in lint(QRELS, RUN, k=2)}
    assert calls == ["score", "rank"]
    assert findings["judged"].value == 1.0 and findings["judged"].count == 2
