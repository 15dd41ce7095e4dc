"""metrics.evaluate: the tidy frame, means (sums for counts), curves and run names, by hand."""
from __future__ import annotations

from math import log2

import pandas as pd
import pytest

from metrics import io
from metrics.errors import MetricsError
from metrics.evaluation import as_runs, curve, evaluate, is_ranx_dict, means, measure_list

QRELS = b"q1 0 a 2\nq1 0 b 1\nq1 0 c 0\nq2 0 x 1\n"
# q1 by score: b (3), c (2), a (1); q2 is judged but missing from the run
RUN = b"q1 Q0 a 1 1 t\nq1 Q0 b 2 3 t\nq1 Q0 c 3 2 t\n"


def test_tidy_frame_with_hand_computed_values():
    frame = evaluate(QRELS, {"sys": RUN}, ["nDCG@3", "P@2", "RR"])
    assert list(frame.columns) == ["system", "qid", "measure", "value"]
    assert frame["measure"].tolist() == ["nDCG@3"] * 2 + ["P@2"] * 2 + ["RR"] * 2
    assert frame["qid"].tolist() == ["q1", "q2"] * 3
    dcg = 1 / log2(2) + 0 / log2(3) + 2 / log2(4)          # linear gain: b=1, c=0, a=2
    idcg = 2 / log2(2) + 1 / log2(3)
    values = dict(zip(zip(frame["measure"], frame["qid"]), frame["value"]))
    assert values[("nDCG@3", "q1")] == pytest.approx(dcg / idcg)
    assert values[("P@2", "q1")] == pytest.approx(1 / 2)     # b relevant, c not
    assert values[("RR", "q1")] == pytest.approx(1.0)
    assert values[("nDCG@3", "q2")] == values[("P@2", "q2")] == values[("RR", "q2")] == 0.0  # missing: 0


def test_skip_missing_and_judged_only():
    skipped = evaluate(QRELS, RUN, ["P@2"], missing="skip")
    assert skipped["qid"].tolist() == ["q1"]
    condensed = evaluate(b"q1 0 a 1\nq1 0 b 0\n", b"q1 Q0 u 1 3 t\nq1 Q0 a 2 2 t\n", ["P@1"], judged_only=True)
    assert condensed["value"].tolist() == [1.0]             # u (unjudged) is removed, a moves to rank 1


def test_means_average_and_counts_sum():
    frame = evaluate(QRELS, {"sys": RUN}, ["P@2", "NumRet"])
    table = means(frame)
    assert table.loc["sys", "P@2"] == pytest.approx((1 / 2 + 0) / 2)
    assert table.loc["sys", "NumRet"] == 3                  # summed over queries, as trec_eval


def test_curve_has_every_cutoff_from_one_pass():
    table = curve(QRELS, RUN, "P", max_k=3)
    assert list(table.columns) == [1, 2, 3] and table.index.tolist() == ["q1", "q2"]
    assert table.loc["q1"].tolist() == pytest.approx([1 / 1, 1 / 2, 2 / 3])


def test_run_names_from_mappings_and_duplicates():
    runs = as_runs({"a": RUN, "b": RUN})
    assert [r.name for r in runs] == ["a", "b"]
    same = as_runs([io.read_run(RUN, name="x"), io.read_run(RUN, name="x")])
    assert [r.name for r in same] == ["x#1", "x#2"]
    assert is_ranx_dict({"q1": {"a": 1.0}}) and not is_ranx_dict({"sys": RUN})


def test_measure_list_and_empty_input():
    assert [str(m) for m in measure_list("AP")] == ["AP"]
    assert [str(m) for m in measure_list(["P.5,10", "ndcg_cut.10"])] == ["P@5", "P@10", "nDCG@10"]
    with pytest.raises(MetricsError, match="no measures given"):
        measure_list([])
    empty = evaluate(QRELS, [], ["AP"])
    assert isinstance(empty, pd.DataFrame) and empty.empty


def test_the_options_are_declared_once_and_shown_in_every_signature():
    import dataclasses
    import inspect

    import metrics
    from metrics.engines import scores, streaming
    from metrics.evaluation import Options, score_runs

    names = [f.name for f in dataclasses.fields(Options)]
    assert names == ["missing", "judged_only", "inferred", "max_depth", "rel_level", "ties", "on_duplicate",
                     "progress"]
    for function in (metrics.evaluate, evaluate, score_runs, scores, streaming.evaluate):
        params = inspect.signature(function).parameters
        assert all(params[n].default == getattr(Options(), n) for n in names), function
    with pytest.raises(TypeError, match="missng"):
        evaluate("q", ["r"], missng="skip")


def test_score_runs_reads_each_run_in_turn_and_lets_it_go_before_ordering_it(monkeypatch):
    # A run read from a file is held by nobody but rank(): its table (qid, rank and tag strings)
    # is freed before the ranked arrays are built, and the next run is read only after.
    import sys
    import weakref

    module, ordering = sys.modules["metrics.evaluation"], sys.modules["metrics.ordering"]
    runs, events = [], []
    read, canonical = module.read_named, ordering.canonical_arrays

    def reading(*args, **kwargs):
        run = read(*args, **kwargs)
        runs.append(weakref.ref(run))
        events.append(f"read {run.name}")
        return run

    def ordered(*args, **kwargs):
        events.append("order, run alive" if runs[-1]() is not None else "order, run gone")
        return canonical(*args, **kwargs)

    monkeypatch.setattr(module, "read_named", reading)
    monkeypatch.setattr(ordering, "canonical_arrays", ordered)
    scores = module.score_runs(QRELS, [io.read_run(RUN, name="x").table, RUN], ["AP"])
    assert events == ["read run", "order, run gone", "read run", "order, run gone"]
    assert [s.system for s in scores] == ["run#1", "run#2"]
    assert scores[0].values["AP"].tolist() == scores[1].values["AP"].tolist()
