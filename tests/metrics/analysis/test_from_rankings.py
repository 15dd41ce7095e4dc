"""Headroom and rank bands take the runs' rankings (a workspace's memory-mapped cache) as well as the
runs: the same values either way, with proxy labels, skipped queries and condensed lists too."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metrics
from metrics.analysis import bands as bd
from metrics.analysis import headroom as hr
from metrics.ranking import rank

LEGAL = Path(__file__).resolve().parents[3] / "ndcg_lab" / "sample_data" / "legal"
OPTIONS = [{}, {"missing": "skip"}, {"judged_only": True}, {"inferred": "proxy", "rel_level": 2}]


@pytest.fixture(scope="module")
def legal():
    """The legal qrels with a query no run retrieves for, a proxy qrels labelling retrieved pairs, and
    the first stage with its re-ranking, as runs and as rankings (one with its docno strings taken,
    as the ranked cache holds them)."""
    qrels = metrics.read_qrels(LEGAL / "qrels.txt").df
    qrels = metrics.read_qrels(pd.concat([qrels, pd.DataFrame({"qid": ["zz"], "docno": ["d"], "rel": [1]})]))
    first = metrics.read_run(LEGAL / "bm25.run", name="bm25")
    second = metrics.read_run(LEGAL / "bm25_ce.run", name="bm25_ce")
    rows = first.df.iloc[::7]
    proxy = metrics.read_qrels(pd.DataFrame({"qid": rows["qid"].astype(str), "docno": rows["docno"].astype(str),
                                             "rel": np.arange(len(rows)) % 3}))
    ranked_first = rank(first, qrels, name="bm25")
    ranked_first = dataclasses.replace(ranked_first, docno=ranked_first.docno)   # strings held, as when mapped
    ranked_second = rank(metrics.read_run(LEGAL / "bm25_ce.run", name="bm25_ce"), qrels, name="bm25_ce")
    return qrels, proxy, (first, second), (ranked_first, ranked_second)


def _options(options: dict, proxy) -> dict:
    return {k: (proxy if v == "proxy" else v) for k, v in options.items()}


@pytest.mark.parametrize("options", OPTIONS)
def test_headroom_of_rankings_equals_headroom_of_runs(legal, options):
    qrels, proxy, runs, ranked = legal
    options = _options(options, proxy)
    expected = hr.headroom(qrels, *runs, depth=20, measure="nDCG(dcg=exp-log2)@10", sweep=[5, 10], **options)
    got = hr.headroom(qrels, *ranked, depth=20, measure="nDCG(dcg=exp-log2)@10", sweep=[5, 10], **options)
    assert (got.first, got.reranked, got.depth, got.detected) == ("bm25", "bm25_ce", 20, expected.detected)
    pd.testing.assert_frame_equal(got.per_query, expected.per_query, check_exact=True)
    pd.testing.assert_frame_equal(got.sweep, expected.sweep, check_exact=True)
    assert got.to_dict() == expected.to_dict()
    # the engine's own values of the two runs under these options, per query
    per_query = got.per_query.set_index("qid")
    for column, run in (("first", runs[0]), ("reranked", runs[1])):
        engine = _values(qrels, run, "nDCG(dcg=exp-log2)@10", options)
        assert per_query[column].to_dict() == engine.reindex(per_query.index).to_dict()


@pytest.mark.parametrize("options", OPTIONS)
def test_bands_of_rankings_equal_bands_of_runs(legal, options):
    qrels, proxy, runs, ranked = legal
    options = _options(options, proxy)
    expected = bd.bands(qrels, *runs, k=30, edges=(3, 10), gain="exp", **options)
    got = bd.bands(qrels, *ranked, k=30, edges=(3, 10), gain="exp", **options)
    assert (got.a, got.b) == ("bm25", "bm25_ce")
    for name in ("parts", "by_band", "by_grade", "dcg", "only_one", "recall", "rescued", "lost"):
        pd.testing.assert_frame_equal(getattr(got, name), getattr(expected, name), check_exact=True, obj=name)
    assert len(expected.only_one) and len(expected.parts)
    for column, run in (("a", runs[0]), ("b", runs[1])):
        engine = _values(qrels, run, "DCG(dcg=exp-log2)@30", options)
        assert got.dcg[column].to_dict() == engine.reindex(got.dcg.index).to_dict()


def _values(qrels, run, measure: str, options: dict) -> pd.Series:
    frame = metrics.evaluate(qrels, metrics.read_run(run.df, name=run.name), [measure], **options)
    return frame.set_index("qid")["value"]
