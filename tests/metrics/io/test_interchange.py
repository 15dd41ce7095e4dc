"""ranx objects and JSON, trectools frames, {qid: {docno: score}} dicts and TREC text, both ways."""
from __future__ import annotations

import io as stdio
from math import log2

import pandas as pd
import pytest
import ranx

import metrics
from metrics import io
from metrics.errors import MetricsError
from metrics.evaluation import as_runs, is_ranx_dict

RUN_TEXT = b"q1 Q0 d1 1 3.5 sys\nq1 Q0 d2 2 2.25 sys\nq1 Q0 d3 3 1 sys\nq2 Q0 d9 1 0.5 sys\n"
QRELS_TEXT = b"q1 0 d1 2\nq1 0 d3 1\nq2 0 d9 1\nq2 0 d7 0\n"


@pytest.fixture
def run():
    return io.read_run(RUN_TEXT, name="sys")


@pytest.fixture
def qrels():
    return io.read_qrels(QRELS_TEXT)


def test_to_dict_of_a_run_and_of_qrels(run, qrels):
    assert io.to_dict(run) == {"q1": {"d1": 3.5, "d2": 2.25, "d3": 1.0}, "q2": {"d9": 0.5}}
    assert io.to_dict(qrels) == {"q1": {"d1": 2, "d3": 1}, "q2": {"d9": 1, "d7": 0}}


def test_to_ranx_gives_real_ranx_objects_that_ranx_evaluates(run, qrels):
    r, q = io.to_ranx(run), io.to_ranx(qrels)
    assert isinstance(r, ranx.Run) and isinstance(q, ranx.Qrels) and r.name == "sys"
    assert r.to_dict() == io.to_dict(run) and q.to_dict() == io.to_dict(qrels)
    # q1: gains 2, 0, 1 at ranks 1..3, ideal 2, 1; q2: one relevant at rank 1.
    q1 = (2 / log2(2) + 1 / log2(4)) / (2 / log2(2) + 1 / log2(3))
    assert ranx.evaluate(q, r, "ndcg@3") == pytest.approx((q1 + 1) / 2)
    assert metrics.means(metrics.evaluate(q, r, ["nDCG@3"])).loc["sys", "nDCG@3"] == pytest.approx((q1 + 1) / 2)


def test_ranx_objects_and_their_json_read_back(run, qrels, tmp_path):
    r = io.to_ranx(run)
    again = io.read_run(r)
    assert again.name == "sys" and io.to_dict(again) == io.to_dict(run)
    path = tmp_path / "run.json"
    r.save(str(path))                              # ranx's own JSON
    assert io.to_dict(io.read_run(path)) == io.to_dict(run)
    mine = tmp_path / "mine.json"
    io.write_json(run, mine)
    assert ranx.Run.from_file(str(mine)).to_dict() == io.to_dict(run)
    io.write_json(qrels, tmp_path / "qrels.json")
    assert ranx.Qrels.from_file(str(tmp_path / "qrels.json")).to_dict() == io.to_dict(qrels)


def test_trectools_frames_both_ways(run, qrels):
    # trectools is not installed here: the frames are built in the shape of TrecRun.run_data and
    # TrecQrel.qrels_data (columns from trectools' source), and a stand-in object carries them.
    frame = io.to_trectools(run)
    assert tuple(frame.columns) == io.interchange.TRECTOOLS_RUN
    assert frame.iloc[0].tolist() == ["q1", "Q0", "d1", 1, 3.5, "sys"]
    assert io.read_run(frame).table.equals(run.table)
    qframe = io.to_trectools(qrels)
    assert tuple(qframe.columns) == io.interchange.TRECTOOLS_QRELS
    assert io.to_dict(io.read_qrels(qframe)) == io.to_dict(qrels)

    TrecRun = type("TrecRun", (), {"__module__": "trectools.trec_run"})
    wrapped = TrecRun()
    wrapped.run_data = frame
    assert io.read_run(wrapped).table.equals(run.table)
    assert [r.name for r in as_runs(wrapped)] == ["run"]


def test_to_trec_round_trips_runs_and_qrels(run, qrels):
    out = stdio.BytesIO()
    io.to_trec(run, out)
    assert out.getvalue().splitlines()[1] == b"q1 Q0 d2 2 2.25 sys"
    assert io.read_run(out.getvalue(), name="sys").table.equals(run.table)
    out = stdio.BytesIO()
    io.to_trec(qrels, out)
    assert out.getvalue().splitlines()[0] == b"q1 0 d1 2"
    assert io.read_qrels(out.getvalue()).table.equals(qrels.table)
    with pytest.raises(MetricsError, match="parsed run or qrels"):
        io.to_trec({"q1": {"d1": 1.0}}, stdio.BytesIO())


def test_named_dict_runs_are_not_taken_for_one_run(qrels):
    a = {"q1": {"d1": 3.0, "d3": 1.0}, "q2": {"d9": 1.0}}
    b = {"q1": {"d3": 3.0, "d1": 1.0}, "q2": {"d7": 1.0}}
    assert is_ranx_dict(a) and not is_ranx_dict({"a": a, "b": b})
    assert [r.name for r in as_runs({"a": a, "b": b})] == ["a", "b"]
    frame = metrics.evaluate(qrels, {"a": a, "b": b}, ["RR"])
    rr = frame.pivot_table(index="system", columns="qid", values="value")
    # a: d1 (rel 2) first in q1, d9 first in q2; b: d3 (rel 1) first in q1, q2 retrieves only d7 (rel 0).
    assert rr.loc["a"].tolist() == [1 / 1, 1 / 1] and rr.loc["b"].tolist() == [1 / 1, 0.0]
    assert [r.name for r in as_runs(io.to_ranx(io.read_run(a, name="x")))] == ["x"]
    assert [r.name for r in as_runs({"a": io.to_ranx(io.read_run(a)), "b": b})] == ["a", "b"]


def test_evaluate_accepts_ranx_and_trectools_inputs_directly(run, qrels):
    expected = metrics.evaluate(qrels, [run], ["nDCG@10", "AP"])["value"].tolist()
    for runs, q in ((io.to_ranx(run), io.to_ranx(qrels)), (io.to_trectools(run), io.to_trectools(qrels)),
                    (io.to_dict(run), io.to_dict(qrels))):
        assert metrics.evaluate(q, runs, ["nDCG@10", "AP"])["value"].tolist() == expected


def test_irds_ids_are_taken_where_a_qrels_path_is(monkeypatch):
    calls = []

    def fake(dataset):
        calls.append(dataset)
        return io.read_qrels(pd.DataFrame({"qid": ["1"], "docno": ["a"], "rel": [1]}), name="toy", source=dataset)

    monkeypatch.setattr(io.read, "load_qrels", fake)
    assert io.read_qrels("irds:toy/test").source == "irds:toy/test" and calls == ["irds:toy/test"]
    assert io.read_qrels("irds:toy/test", name="mine").name == "mine"


def test_an_unknown_irds_id_is_one_clear_line():
    pytest.importorskip("ir_datasets")
    with pytest.raises(MetricsError, match="irds:no-such/dataset"):
        io.read_qrels("irds:no-such/dataset")

