"""metrics.io.tables: CSV/TSV with headers and aliases, parquet, JSON, data frames, dicts and
arrow tables, and their errors."""
from __future__ import annotations

import hashlib
import json

import pandas as pd
import pyarrow as pa

from metrics import io
from tests.metrics.io.helpers import QRELS_ROWS, RUN, RUN_ROWS, fails, rows


def test_leading_zero_qids_stay_strings(tmp_path):
    assert io.read_run(RUN).table["qid"].to_pylist() == ["007", "007", "008"]
    assert io.read_run(b"qid,docno,score\n007,0042,1.0\n").table.to_pylist()[0]["qid"] == "007"
    assert io.read_run(b"qid,docno,score\n007,0042,1.0\n").table["docno"][0].as_py() == "0042"
    assert io.read_run(json.dumps({"007": {"0042": 1.0}}).encode()).table["qid"][0].as_py() == "007"
    frame = pd.DataFrame({"qid": ["007"], "docno": ["0042"], "score": [1.0]})
    path = tmp_path / "r.parquet"
    frame.to_parquet(path)
    assert io.read_run(path).table["qid"][0].as_py() == "007"


def test_csv_with_aliases_and_optional_columns():
    run = io.read_run(b"query_id,doc_id,score,rank,tag\n007,d1,3.0,1,bm25\n007,d2,2.0,2,bm25\n008,d1,1.5,1,bm25\n",
                      source="r.csv")
    assert rows(run) == RUN_ROWS and run.source == "r.csv"
    assert run.line_of([2]).tolist() == [4]
    for header in (b"qid,docno,rel", b"qid,docno,label", b"qid,docno,relevance", b"query_id,doc_id,relevance"):
        assert rows(io.read_qrels(header + b"\n007,d1,1\n007,d2,0\n008,d1,2\n")) == QRELS_ROWS


def test_csv_quotes_and_tsv():
    assert rows(io.read_run(b'qid,docno,score\n"007","d,1",1.0\n')) == [("007", "d,1", 1.0, 1, "run")]
    run = io.read_run(b"qid\tdocno\tscore\n007\td1\t1.0\n007\td2\t2.0\n")
    # no rank column: ranks follow the canonical order (score descending)
    assert rows(run) == [("007", "d1", 1.0, 2, "run"), ("007", "d2", 2.0, 1, "run")]


def test_space_separated_table_with_header():
    run = io.read_run(b"qid Q0 docno rank score tag\n007 Q0 d1 1 3.0 bm25\n")
    assert rows(run) == [RUN_ROWS[0]]


def test_parquet_bytes_and_path(tmp_path):
    frame = pd.DataFrame({"qid": ["007", "007", "008"], "docno": ["d1", "d2", "d1"],
                          "score": [3.0, 2.0, 1.5], "rank": [1, 2, 1]})
    path = tmp_path / "bm25.parquet"
    frame.to_parquet(path)
    run = io.read_run(path)
    assert rows(run) == [r[:4] + ("bm25",) for r in RUN_ROWS]   # tag defaults to the run name
    assert run.name == "bm25" and run.digest == hashlib.sha256(path.read_bytes()).hexdigest()
    qrels_path = tmp_path / "q.parquet"
    pd.DataFrame({"qid": ["007", "007", "008"], "docno": ["d1", "d2", "d1"], "label": [1, 0, 2]}).to_parquet(qrels_path)
    assert rows(io.read_qrels(qrels_path.read_bytes())) == QRELS_ROWS


def test_ranx_style_json_and_records():
    run = io.read_run(json.dumps({"007": {"d1": 3.0, "d2": 2.0}, "008": {"d1": 1.5}}).encode(), source="r.json")
    assert rows(run) == [r[:4] + ("run",) for r in RUN_ROWS]
    qrels = io.read_qrels(json.dumps({"007": {"d1": 1, "d2": 0}, "008": {"d1": 2}}).encode())
    assert rows(qrels) == QRELS_ROWS
    records = [{"qid": "007", "docno": "d1", "score": 3.0}, {"qid": "007", "docno": "d2", "score": 2.0}]
    assert rows(io.read_run(json.dumps(records).encode()))[:2] == [("007", "d1", 3.0, 1, "run"),
                                                                   ("007", "d2", 2.0, 2, "run")]


def test_pyterrier_dataframes():
    frame = pd.DataFrame({"qid": ["007", "007", "008"], "query": ["a b"] * 3, "docid": [5, 6, 5],
                          "docno": ["d1", "d2", "d1"], "score": [3.0, 2.0, 1.5], "rank": [0, 1, 0]})
    run = io.read_run(frame)
    assert run.table["docno"].to_pylist() == ["d1", "d2", "d1"]   # docno wins over docid
    assert run.table["rank"].to_pylist() == [0, 1, 0]
    assert run.name == "run" and run.source == "<DataFrame>"
    qrels = io.read_qrels(pd.DataFrame({"qid": ["007", "007", "008"], "docno": ["d1", "d2", "d1"],
                                        "label": [1, 0, 2]}))
    assert rows(qrels) == QRELS_ROWS
    # integer ids become strings
    numeric = io.read_qrels(pd.DataFrame({"qid": [7, 7], "docno": [1, 2], "label": [1.0, 0.0]}))
    assert rows(numeric) == [("7", "1", 1), ("7", "2", 0)]


def test_dicts_and_arrow_tables():
    run = io.read_run({"q1": {"d1": 1.0, "d2": 2.0}, 2: {"d1": 0.5}})
    assert rows(run) == [("q1", "d1", 1.0, 2, "run"), ("q1", "d2", 2.0, 1, "run"), ("2", "d1", 0.5, 1, "run")]
    assert run.source == "<dict>"
    qrels = io.read_qrels(pa.table({"qid": ["007"], "docno": ["d1"], "rel": [3]}))
    assert rows(qrels) == [("007", "d1", 3)]


def test_frame_kinds_swapped():
    fails(lambda: io.read_qrels(pd.DataFrame({"qid": ["1"], "docno": ["d"], "score": [1.0]})),
          source="<DataFrame>", line=None, problem="no rel column", fix="read_run")
    fails(lambda: io.read_run(pd.DataFrame({"qid": ["1"], "docno": ["d"], "label": [1]})),
          source="<DataFrame>", line=None, problem="no score column", fix="read_qrels")


def test_bad_value_in_a_dict():
    fails(lambda: io.read_run({"q1": {"d1": 1.0, "d2": "high"}}), source="<dict>", line=None,
          problem="query 'q1', document 'd2': score 'high' is not a number", fix="numbers")
    fails(lambda: io.read_run({"q1": [1, 2]}), source="<dict>", line=None,
          problem="expected a mapping", fix="{qid: {docno: score}}")


def test_csv_errors_name_the_line():
    fails(lambda: io.read_run(b"qid,docno,score\n007,d1,1.5\n\n007,d2,x\n", source="r.csv"), source="r.csv",
          line=4, problem="score 'x' is not a number", fix="numbers")
    fails(lambda: io.read_run(b"qid,docno,score\n007,d1,1.5\n007,d2\n", source="r.csv"), source="r.csv", line=3,
          problem="expected 3 columns like the header", fix="every line")


def test_invalid_json():
    fails(lambda: io.read_run(b'{"007": {"d1": 1.5,\n "d2": }}', source="r.json"), source="r.json", line=2,
          problem="invalid JSON", fix="{qid: {docno: score}}")


def test_csv_values_are_trimmed_and_empty_ids_refused():
    assert rows(io.read_run(b"qid, docno, score\n007, d1 , 2.5\n")) == [("007", "d1", 2.5, 1, "run")]
    fails(lambda: io.read_run(b"qid,docno,score\n007,d1,1\n007,,2\n", source="r.csv"), source="r.csv", line=3,
          problem="the docno is empty", fix="every row needs a docno")
    fails(lambda: io.read_qrels(pd.DataFrame({"qid": ["1", None], "docno": ["a", "b"], "rel": [1, 0]})),
          source="<DataFrame>", line=None, problem="row 2: qid is missing", fix="every row needs a qid")
