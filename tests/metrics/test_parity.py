"""The parity finding of metrics.lint, checked against ranx and pytrec_eval themselves: on inputs
built to trigger each case, the library differs from trec_eval 10 (our values, exact to it) on
exactly the queries the finding names, and agrees on every other query."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metrics
from metrics.linting import RANX_STABLE_MAX, parity

ranx = pytest.importorskip("ranx")
pytrec_eval = pytest.importorskip("pytrec_eval")

ELEVEN = ("0.00", "0.10", "0.20", "0.30", "0.40", "0.50", "0.60", "0.70", "0.80", "0.90", "1.00")


def _frames(rng, n_queries: int, depth: int, scores, unjudged: float = 0.2):
    """Seeded qrels and run: ``depth`` documents per query with scores drawn from ``scores``
    (so some tie), grades 0..2, some non-relevant documents unjudged, a relevant one per query."""
    q_rows, r_rows = [], []
    for q in range(n_queries):
        qid = f"q{q:03d}"
        docs = [f"d{j}" for j in rng.permutation(3 * depth)[:depth]]
        grades = rng.integers(0, 3, size=depth)
        grades[0] = max(grades[0], 1)
        q_rows += [(qid, doc, int(g)) for doc, g in zip(docs, grades) if g > 0 or rng.random() >= unjudged]
        r_rows += [(qid, doc, float(s)) for doc, s in zip(docs, rng.choice(scores, size=depth))]
    return (pd.DataFrame(q_rows, columns=["qid", "docno", "rel"]),
            pd.DataFrame(r_rows, columns=["qid", "docno", "score"]))


def _nested(frame: pd.DataFrame, value: str) -> dict:
    out: dict = {}
    for qid, docno, v in frame[["qid", "docno", value]].itertuples(index=False):
        out.setdefault(qid, {})[docno] = v
    return out


def _ours(qrels, run, measures) -> pd.DataFrame:
    frame = metrics.evaluate(metrics.read_qrels(qrels), metrics.read_run(run), measures)
    return frame.pivot(index="qid", columns="measure", values="value")


def _named(qrels, run, kind) -> set[str]:
    """Every query the finding of ``kind`` names (empty when there is none)."""
    found = [f for f in parity(metrics.read_qrels(qrels), metrics.read_run(run), examples=10**6) if f.kind == kind]
    assert len(found) <= 1
    if found:
        assert found[0].count == len(found[0].examples)
    return {e.removeprefix("query ") for e in found[0].examples} if found else set()


def _differs(ours: pd.DataFrame, theirs: pd.DataFrame) -> set[str]:
    gap = (ours - theirs.reindex(index=ours.index, columns=ours.columns)).abs().max(axis=1)
    assert not gap.isna().any()
    return set(gap.index[gap > 1e-9])


def _pytrec(qrels, run, measures) -> dict:
    return pytrec_eval.RelevanceEvaluator(_nested(qrels, "rel"), set(measures)).evaluate(_nested(run, "score"))


RANX = {"AP": "map", "nDCG": "ndcg", "nDCG@10": "ndcg@10", "nDCG(dcg='exp-log2')@10": "ndcg_burges@10",
        "P@5": "precision@5", "RR": "mrr"}


def _against_ranx(qrels, run) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(our values, ranx's) per query for the measures both compute the same way."""
    ours = _ours(qrels, run, list(RANX))
    got = ranx.evaluate(ranx.Qrels(_nested(qrels[qrels["rel"] > 0], "rel")), ranx.Run(_nested(run, "score")),
                        list(RANX.values()), return_mean=False, make_comparable=True)
    return ours, pd.DataFrame({name: got[theirs] for name, theirs in RANX.items()}, index=sorted(ours.index))


def test_ranx_differs_on_exactly_the_queries_with_reordered_ties():
    rng = np.random.default_rng(7)
    qrels, run = _frames(rng, 80, RANX_STABLE_MAX, scores=np.arange(1.0, 41.0))
    named = _named(qrels, run, "parity_ranx_ties")
    assert 0 < len(named) < 80
    assert _differs(*_against_ranx(qrels, run)) == named


def test_long_queries_with_mixed_ties_are_named_as_unstable():
    rng = np.random.default_rng(3)
    depth = 4 * RANX_STABLE_MAX
    qrels, run = _frames(rng, 30, depth, scores=np.arange(1.0, 3.0 * depth))
    untied = run["qid"].str[1:].astype(int) % 3 == 0  # a third of the queries without ties
    run.loc[untied, "score"] = -run[untied].groupby("qid").cumcount().astype(float)
    named = _named(qrels, run, "parity_ranx_unstable")
    assert not _named(qrels, run, "parity_ranx_ties")
    differs = _differs(*_against_ranx(qrels, run))
    assert differs and differs <= named  # outside the named queries ranx agrees
    assert 0 < len(named) <= 20 and not named & set(run.loc[untied, "qid"])


def test_pytrec_eval_differs_on_exactly_the_queries_whose_scores_collapse_in_float32():
    rng = np.random.default_rng(11)
    qrels, run = _frames(rng, 80, 20, scores=np.arange(1.0, 61.0))
    # two thirds of the queries get a float64 nudge below float32's resolution on some documents
    nudged = run["qid"].str[1:].astype(int) % 3 != 0
    run.loc[nudged, "score"] += rng.choice([0.0, 1e-9], size=int(nudged.sum()))
    named = _named(qrels, run, "parity_float32")
    assert 0 < len(named) < 80
    names = {"AP": "map", "nDCG": "ndcg", "nDCG@10": "ndcg_cut_10", "P@5": "P_5", "RR": "recip_rank"}
    ours = _ours(qrels, run, list(names))
    got = _pytrec(qrels, run, ["map", "ndcg", "ndcg_cut.10", "P.5", "recip_rank"])
    theirs = pd.DataFrame({ours_name: {q: v[name] for q, v in got.items()} for ours_name, name in names.items()})
    assert _differs(ours, theirs) == named


def test_pytrec_eval_iprec_differs_on_exactly_the_queries_named():
    rng = np.random.default_rng(5)
    # distinct scores exact in float32: only the recall cut-off rule can differ
    qrels, run = _frames(rng, 80, 25, scores=np.arange(1.0, 26.0))
    run["score"] = run.groupby("qid").cumcount().astype(float) * -1.0
    named = _named(qrels, run, "parity_iprec")
    assert 0 < len(named) < 80
    levels = [float(x) for x in ELEVEN]
    ours = _ours(qrels, run, [f"IPrec@{x!r}" for x in levels] + ["11pt_avg"])
    got = _pytrec(qrels, run, ["iprec_at_recall", "11pt_avg"])
    theirs = pd.DataFrame({**{f"IPrec@{x!r}": {q: v[f"iprec_at_recall_{name}"] for q, v in got.items()}
                              for x, name in zip(levels, ELEVEN)},
                           "11pt_avg": {q: v["11pt_avg"] for q, v in got.items()}})
    assert _differs(ours, theirs) == named


def test_a_run_that_every_library_orders_alike_has_no_parity_finding():
    qrels = pd.DataFrame({"qid": ["1", "1", "1"], "docno": ["a", "c", "d"], "rel": [1, 2, 0]})
    run = pd.DataFrame({"qid": ["1", "1", "1"], "docno": ["d", "c", "a"], "score": [1.0, 1.0, 0.5]})
    # the tie (d, c) is in docno-descending order already and the scores are float32; ranks hold
    # grades 0, 2, 1, so P@1..3 = 0, 1/2, 2/3 and IPrec is 2/3 at 0, 1 or 2 relevant documents:
    # 9.0.8's floor(x R + 0.9) and 10's round(x R) give the same values
    assert parity(metrics.read_qrels(qrels), metrics.read_run(run)) == []


def test_lint_command_prints_the_parity_findings_with_examples(tmp_path, capsys):
    from metrics.cli import main

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n")
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 a 1 1.0 x\n1 Q0 b 2 1.0 x\n")  # tied; trec_eval puts b (docno descending) first
    assert main(["lint", str(qrels), str(run)]) == 0
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    (row,) = [line for line in lines if line[2] == "parity_ranx_ties"]
    assert row[3].startswith("ranx would score 1 query of run differently") and row[3].endswith("(e.g. query 1)")
