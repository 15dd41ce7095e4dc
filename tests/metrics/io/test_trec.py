"""metrics.io: every input format, every validation error, every finding.

Errors are checked for the four parts a user needs: file, line, problem, fix.
"""
from __future__ import annotations

import bz2
import gzip
import hashlib
import io as pyio
import json
import lzma
import pickle
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from metrics import io
from metrics.errors import MetricsError
from metrics.io import keys, sources

RUN = b"007 Q0 d1 1 3.0 bm25\n007 Q0 d2 2 2.0 bm25\n008 Q0 d1 1 1.5 bm25\n"
QRELS = b"007 0 d1 1\n007 0 d2 0\n008 0 d1 2\n"
RUN_ROWS = [("007", "d1", 3.0, 1, "bm25"), ("007", "d2", 2.0, 2, "bm25"), ("008", "d1", 1.5, 1, "bm25")]
QRELS_ROWS = [("007", "d1", 1), ("007", "d2", 0), ("008", "d1", 2)]


def rows(parsed) -> list[tuple]:
    return [tuple(r.values()) for r in parsed.table.to_pylist()]


def fails(fn, *, source: str, line: int | None, problem: str, fix: str) -> MetricsError:
    """Run ``fn``, expect a MetricsError naming source, line, problem (regex) and fix (substring)."""
    with pytest.raises(MetricsError) as info:
        fn()
    err = info.value
    text = str(err)
    assert err.source == source and source in text
    assert err.line == line
    if line is not None:
        assert text.startswith(f"{source} line {line}: ")
    assert re.search(problem, err.problem), err.problem
    assert err.fix and fix in err.fix and fix in text
    return err


def write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


# --------------------------------------------------------------------------- errors


def test_error_message_parts_and_pickling():
    err = MetricsError("expected 6 columns, found 4", source="run.txt", line=1204, fix="add the tag")
    assert str(err) == "run.txt line 1204: expected 6 columns, found 4. add the tag"
    assert isinstance(err, ValueError)
    assert str(MetricsError("bad", fix="do x")) == "bad. do x"
    assert str(MetricsError("bad", source="a.txt")) == "a.txt: bad"
    back = pickle.loads(pickle.dumps(err))
    assert (back.problem, back.source, back.line, back.fix) == (err.problem, "run.txt", 1204, "add the tag")
    assert str(back) == str(err)


# --------------------------------------------------------------------------- formats


def test_plain_trec_run_schema_and_values():
    run = io.read_run(RUN)
    assert run.table.schema == io.RUN_SCHEMA
    assert rows(run) == RUN_ROWS
    assert len(run) == 3
    assert run.findings == []
    assert list(run.df.columns) == ["qid", "docno", "score", "rank", "tag"]


def test_plain_trec_qrels():
    qrels = io.read_qrels(QRELS)
    assert qrels.table.schema == io.QRELS_SCHEMA
    assert rows(qrels) == QRELS_ROWS


def _zstd(data: bytes) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as out:
        out.write(data)
    return sink.getvalue().to_pybytes()


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress, _zstd])
def test_compressed_by_magic_bytes(compress, tmp_path):
    path = write(tmp_path, "bm25.run.gz", compress(RUN))
    run = io.read_run(path)
    assert rows(run) == RUN_ROWS
    assert run.name == "bm25" and run.source == "bm25.run.gz"
    assert run.digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert rows(io.read_qrels(compress(QRELS))) == QRELS_ROWS


def test_corrupt_gzip_is_an_error():
    fails(lambda: io.read_run(gzip.compress(RUN)[:20], source="run.gz"), source="run.gz", line=None,
          problem="cannot decompress", fix="truncated or damaged")


def test_crlf_bom_tabs_blanks_and_comments():
    data = (b"\xef\xbb\xbf# produced by bm25\r\n"
            b"\r\n"
            b"  007\tQ0   d1 \t 1   3.0\tbm25  \r\n"
            b"   # an indented comment\r\n"
            b"007 Q0 d2 2 2.0 bm25\r\n"
            b"\t\r\n"
            b"008\t\tQ0 d1 1 1.5 bm25")
    run = io.read_run(data)
    assert rows(run) == RUN_ROWS
    assert run.line_of([0, 1, 2]).tolist() == [3, 5, 7]


def test_hash_inside_docno_is_data():
    run = io.read_run(b"2024-1 Q0 msmarco_v2.1_doc_50_22#13_30 1 0.7 t\n# comment\n2024-1 Q0 d#2 2 0.5 t\n")
    assert run.table["docno"].to_pylist() == ["msmarco_v2.1_doc_50_22#13_30", "d#2"]
    assert run.line_of([1]).tolist() == [3]


def test_hash_inside_docno_in_trec_eval_files(trec_eval_data):
    qrels = io.read_qrels(trec_eval_data / "qrels.comment.test")
    assert qrels.table["docno"][0].as_py() == "msmarco_v2.1_doc_00_880019750#4_1633802806"


def test_trec_eval_style_tab_and_padding():
    run = io.read_run(b"301\tQ0\tFR940202-2-00150\t104\t  2.129133\tSTANDARD\n"
                      b"301\tQ0\tFR940202-2-00151\t414\t  1.724760\tSTANDARD\n")
    assert rows(run) == [("301", "FR940202-2-00150", 2.129133, 104, "STANDARD"),
                         ("301", "FR940202-2-00151", 1.72476, 414, "STANDARD")]


def test_extra_trailing_fields_of_a_run_are_ignored():
    run = io.read_run(b"1 Q0 d1 1 2.0 x more junk\n1 Q0 d2 2 1.0 x\n1 Q0 d3 3 0.5 x at end\n")
    assert rows(run) == [("1", "d1", 2.0, 1, "x"), ("1", "d2", 1.0, 2, "x"), ("1", "d3", 0.5, 3, "x")]


def test_lone_cr_line_ends():
    assert rows(io.read_run(RUN.replace(b"\n", b"\r"))) == RUN_ROWS


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


def test_file_objects_read_from_the_start():
    stream = pyio.BytesIO(RUN)
    stream.seek(0, 2)        # an upload widget may leave the position at the end
    stream.name = "upload.txt"
    run = io.read_run(stream)
    assert rows(run) == RUN_ROWS and run.source == "upload.txt" and run.name == "upload"


def test_parsed_objects_pass_through():
    run = io.read_run(RUN)
    assert io.read_run(run) is run
    renamed = io.read_run(run, name="bm25")
    assert renamed.name == "bm25" and renamed.table is run.table
    qrels = io.read_qrels(QRELS)
    fails(lambda: io.read_run(qrels), source="<bytes>", line=None, problem="parsed qrels", fix="read_run")


@pytest.mark.parametrize("file_name, name", [("bm25.run.gz", "bm25"), ("results.test", "results"),
                                             ("bm25", "bm25"), ("a.b.txt.xz", "a.b"), ("run.txt", "run")])
def test_name_and_source_defaults(tmp_path, file_name, name):
    path = write(tmp_path, file_name, gzip.compress(RUN) if file_name.endswith(".gz") else RUN)
    run = io.read_run(str(path))
    assert (run.name, run.source) == (name, file_name)
    assert io.read_run(path, name="x", source="y").name == "x"


def test_digests():
    assert io.read_run(RUN).digest == hashlib.sha256(RUN).hexdigest()
    frame = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, 2.0]})
    first = io.read_run(frame).digest
    assert re.fullmatch("[0-9a-f]{64}", first)
    assert io.read_run(frame.copy()).digest == first
    assert io.read_run({"1": {"a": 1.0, "b": 2.0}}).digest == first
    changed = frame.assign(score=[1.0, 2.5])
    assert io.read_run(changed).digest != first
    assert io.read_qrels(frame.rename(columns={"score": "rel"})).digest != first


def test_missing_file():
    fails(lambda: io.read_run("/nonexistent/run.txt"), source="run.txt", line=None,
          problem="no such file", fix="check the path")


# --------------------------------------------------------------------------- trec_eval files


def test_trec_eval_files_row_counts(trec_eval_data):
    assert len(io.read_run(trec_eval_data / "results.test")) == 1500
    assert len(io.read_run(trec_eval_data / "results.comment.test")) == 30100
    trunc = io.read_run(trec_eval_data / "results.trunc")
    assert len(trunc) == 584 and set(trunc.table["tag"].to_pylist()) == {"STANDARD"}
    assert len(io.read_qrels(trec_eval_data / "qrels.test")) == 3681
    assert len(io.read_qrels(trec_eval_data / "qrels.comment.test")) == 5890
    rel_level = io.read_qrels(trec_eval_data / "qrels.rel_level")
    assert len(rel_level) == 3681
    negative = [f for f in rel_level.findings if f.kind == "negative_grades"][0]
    assert negative.count == int((rel_level.df["rel"] < 0).sum()) > 0


def test_trec_eval_run_values(trec_eval_data):
    run = io.read_run(trec_eval_data / "results.test")
    assert run.table.slice(0, 1).to_pylist() == [
        {"qid": "301", "docno": "FR940202-2-00150", "score": 2.129133, "rank": 104, "tag": "STANDARD"}]
    assert run.table["qid"].to_pylist().count("302") == 500


# --------------------------------------------------------------------------- errors, one by one


def test_qrels_given_as_run():
    fails(lambda: io.read_run(QRELS, source="q.txt"), source="q.txt", line=1,
          problem="expected at least 6 columns .*found 4", fix="this looks like a qrels file (qid iter docno rel); "
          "load it as qrels")


def test_run_given_as_qrels():
    fails(lambda: io.read_qrels(RUN, source="run.txt"), source="run.txt", line=1,
          problem="expected exactly 4 columns .*found 6", fix="this looks like a run file (qid Q0 docno rank score "
          "tag); load it as a run")


def test_frame_kinds_swapped():
    fails(lambda: io.read_qrels(pd.DataFrame({"qid": ["1"], "docno": ["d"], "score": [1.0]})),
          source="<DataFrame>", line=None, problem="no rel column", fix="read_run")
    fails(lambda: io.read_run(pd.DataFrame({"qid": ["1"], "docno": ["d"], "label": [1]})),
          source="<DataFrame>", line=None, problem="no score column", fix="read_qrels")


def test_short_line_in_the_middle_counts_comment_and_blank_lines():
    data = b"# header comment\n301 Q0 d1 1 3.0 t\n\n301 Q0 d2 2 2.0\n"
    err = fails(lambda: io.read_run(data, source="run.txt"), source="run.txt", line=4,
                problem="expected at least 6 columns .*found 5", fix="lacks the Q0 column or the run tag")
    assert "'301 Q0 d2 2 2.0'" in err.problem


def test_qrels_wrong_column_counts():
    fails(lambda: io.read_qrels(b"301 0 d1 1\n301 0 d2 1 0.5\n", source="q.txt"), source="q.txt", line=2,
          problem="exactly 4 columns .*found 5", fix="remove the extra columns")
    fails(lambda: io.read_qrels(b"301 0 d1 1\n301 d2 1\n", source="q.txt"), source="q.txt", line=2,
          problem="found 3", fix="lacks the iteration column")


@pytest.mark.parametrize("score, problem", [(b"abc", "score 'abc' is not a number"),
                                            (b"1,5", "score '1,5' is not a number"),
                                            (b"nan", "score nan is not a finite number"),
                                            (b"inf", "score inf is not a finite number"),
                                            (b"-Infinity", "score -inf is not a finite number")])
def test_bad_scores(score, problem):
    data = b"301 Q0 d1 1 3.0 t\n#\n301 Q0 d2 2 " + score + b" t\n301 Q0 d3 3 1.0 t\n"
    fails(lambda: io.read_run(data, source="run.txt"), source="run.txt", line=3, problem=re.escape(problem),
          fix="number")


def test_bad_score_in_a_clean_large_file_is_located():
    lines = [f"{q} Q0 d{i} {i + 1} {100 - i} t" for q in range(50) for i in range(100)]
    lines[3456] = "34 Q0 d56 57 x12 t"
    data = ("\n".join(lines) + "\n").encode()
    fails(lambda: io.read_run(data, source="big.txt"), source="big.txt", line=3457,
          problem="score 'x12' is not a number", fix="check the column order")


def test_bad_rank():
    fails(lambda: io.read_run(b"1 Q0 d1 one 1.0 t\n", source="r.txt"), source="r.txt", line=1,
          problem="rank 'one' is not a number", fix="whole number")
    run = io.read_run(b"1 Q0 d1 1.0 1.0 t\n")
    assert run.table["rank"].to_pylist() == [1]


@pytest.mark.parametrize("grade, problem", [(b"1.5", "grade '1.5' is not a whole number"),
                                            (b"high", "grade 'high' is not a number"),
                                            (b"nan", "grade 'nan' is not a whole number")])
def test_bad_grades(grade, problem):
    data = b"301 0 d1 1\n\n301 0 d2 " + grade + b"\n"
    fails(lambda: io.read_qrels(data, source="q.txt"), source="q.txt", line=3, problem=re.escape(problem),
          fix="whole numbers")


def test_integral_float_grades_are_accepted():
    assert io.read_qrels(b"1 0 d1 2.0\n1 0 d2 -1\n").table["rel"].to_pylist() == [2, -1]


def test_bad_grade_in_a_frame_names_row_query_and_document():
    frame = pd.DataFrame({"qid": ["1", "1"], "docno": ["d1", "d2"], "label": [2, 1.5]})
    err = fails(lambda: io.read_qrels(frame), source="<DataFrame>", line=None,
                problem=r"row 2 \(query '1', document 'd2'\): grade 1.5 is not a whole number", fix="whole numbers")
    assert err.line is None


def test_bad_value_in_a_dict():
    fails(lambda: io.read_run({"q1": {"d1": 1.0, "d2": "high"}}), source="<dict>", line=None,
          problem="query 'q1', document 'd2': score 'high' is not a number", fix="numbers")
    fails(lambda: io.read_run({"q1": [1, 2]}), source="<dict>", line=None,
          problem="expected a mapping", fix="{qid: {docno: score}}")


def test_duplicate_document_in_a_run():
    data = b"301 Q0 d1 1 3.0 t\n301 Q0 d2 2 2.0 t\n# c\n301 Q0 d1 3 1.0 t\n302 Q0 d1 1 1.0 t\n"
    fails(lambda: io.read_run(data, source="run.txt"), source="run.txt", line=4,
          problem="document 'd1' appears twice for query '301' \\(line 1 and line 4\\)", fix="on_duplicate='first'")
    run = io.read_run(data, source="run.txt", on_duplicate="first")
    assert rows(run) == [("301", "d1", 3.0, 1, "t"), ("301", "d2", 2.0, 2, "t"), ("302", "d1", 1.0, 1, "t")]
    assert run.line_of([0, 1, 2]).tolist() == [1, 2, 5]
    dup = [f for f in run.findings if f.kind == "duplicates"]
    assert len(dup) == 1 and dup[0].count == 1
    assert dup[0].examples == ["query 301 document d1 (line 1 and line 4)"]


def test_on_duplicate_option_is_checked():
    with pytest.raises(MetricsError, match="on_duplicate"):
        io.read_run(RUN, on_duplicate="last")


def test_duplicates_match_pandas_on_random_runs():
    rng = np.random.default_rng(7)
    n = 20000
    qid = rng.integers(0, 50, n).astype(str)
    docno = np.char.add("doc-", rng.integers(0, 3000, n).astype(str))
    frame = pd.DataFrame({"qid": qid, "docno": docno, "score": rng.random(n)})
    expected = frame.duplicated(["qid", "docno"], keep="first").to_numpy()
    assert expected.sum() > 100
    run = io.read_run(frame, on_duplicate="first")
    assert len(run) == n - expected.sum()
    assert run.table["docno"].to_pylist() == frame.loc[~expected, "docno"].tolist()
    assert [f.count for f in run.findings if f.kind == "duplicates"] == [int(expected.sum())]


def test_hash_collisions_are_resolved_exactly(monkeypatch):
    # Every docno hashing alike must not create false duplicates.
    monkeypatch.setattr(keys, "string_hash", lambda arr: np.zeros(len(arr), dtype=np.uint64))
    run = io.read_run(b"1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 c 3 1 t\n2 Q0 a 1 1 t\n")
    assert len(run) == 4
    fails(lambda: io.read_run(b"1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 b 3 1 t\n", source="r"), source="r", line=3,
          problem="'b' appears twice", fix="on_duplicate")


def test_string_hash_long_and_non_ascii_ids():
    long_a = "http://example.org/" + "x" * 300 + "/a"
    long_b = "http://example.org/" + "x" * 300 + "/b"
    values = pa.array(["é", "e", "ü€x", long_a, long_b, "é", long_a, ""])
    h = keys.string_hash(values)
    assert h[0] == h[5] and h[3] == h[6]
    assert len(set(h[[0, 1, 2, 3, 4, 7]].tolist())) == 6
    run = io.read_run({"q": {long_a: 1.0, long_b: 2.0, "é": 0.5}})
    assert len(run) == 3


def test_conflicting_and_repeated_judgments():
    fails(lambda: io.read_qrels(b"301 0 d1 1\n301 0 d2 1\n\n301 0 d1 2\n", source="q.txt"), source="q.txt", line=4,
          problem=r"judges document 'd1' twice with different grades \(1 on line 1, 2 on line 4\)",
          fix="keep one judgment")
    qrels = io.read_qrels(b"301 0 d1 1\n301 0 d2 1\n301 0 d1 1\n302 0 d1 1\n", source="q.txt")
    assert rows(qrels) == [("301", "d1", 1), ("301", "d2", 1), ("302", "d1", 1)]
    found = [f for f in qrels.findings if f.kind == "duplicate_judgments"]
    assert found[0].count == 1 and found[0].examples == ["query 301 document d1 (line 1 and line 3)"]


def test_empty_and_comment_only_files():
    fails(lambda: io.read_run(b"", source="e.txt"), source="e.txt", line=1, problem="the file is empty",
          fix="qid Q0 docno rank score tag")
    fails(lambda: io.read_qrels(b"  \n\n", source="e.txt"), source="e.txt", line=1,
          problem="only blank lines", fix="qid iter docno rel")
    fails(lambda: io.read_run(b"# a\n\n# b\n", source="e.txt"), source="e.txt", line=3,
          problem="no data lines: all 3 lines are blank or comments", fix="qid Q0 docno rank score tag")


def test_binary_and_undecodable_input():
    fails(lambda: io.read_run(RUN + b"301 Q0 d\x009 1 1.0 t\n", source="b.txt"), source="b.txt", line=4,
          problem="NUL byte", fix="plain-text")
    fails(lambda: io.read_run(b"# ok\n301 Q0 caf\xe9 1 1.0 t\n", source="b.txt"), source="b.txt", line=2,
          problem=r"invalid UTF-8 \(byte 0xe9 at column 11\)", fix="save the file as UTF-8")
    # valid UTF-8 is fine
    assert io.read_run("301 Q0 café 1 1.0 t\n".encode()).table["docno"][0].as_py() == "café"


def test_csv_errors_name_the_line():
    fails(lambda: io.read_run(b"qid,docno,score\n007,d1,1.5\n\n007,d2,x\n", source="r.csv"), source="r.csv",
          line=4, problem="score 'x' is not a number", fix="numbers")
    fails(lambda: io.read_run(b"qid,docno,score\n007,d1,1.5\n007,d2\n", source="r.csv"), source="r.csv", line=3,
          problem="expected 3 columns like the header", fix="every line")


def test_invalid_json():
    fails(lambda: io.read_run(b'{"007": {"d1": 1.5,\n "d2": }}', source="r.json"), source="r.json", line=2,
          problem="invalid JSON", fix="{qid: {docno: score}}")


def test_unsupported_input_type():
    with pytest.raises(MetricsError, match="cannot read a run from a int"):
        io.read_run(42)


# --------------------------------------------------------------------------- findings


def test_rank_disagreeing_with_scores():
    run = io.read_run(b"1 Q0 a 1 1.0 t\n1 Q0 b 2 2.0 t\n2 Q0 a 1 1.0 t\n2 Q0 b 2 0.5 t\n3 Q0 a 2 1.0 t\n"
                      b"3 Q0 b 1 3.0 t\n")
    found = [f for f in run.findings if f.kind == "rank_order"]
    # query 1: rank 2 has the higher score; query 3 is listed out of rank order but consistent
    assert len(found) == 1 and found[0].count == 1 and found[0].examples == ["query 1"]


def test_ties_are_counted():
    run = io.read_run(b"1 Q0 a 1 2.0 t\n1 Q0 b 2 2.0 t\n1 Q0 c 3 2.0 t\n1 Q0 d 4 1.0 t\n"
                      b"2 Q0 a 1 1.0 t\n2 Q0 b 2 1.0 t\n3 Q0 a 1 1.0 t\n4 Q0 a 1 1.0 t\n")
    ties = [f for f in run.findings if f.kind == "ties"]
    assert ties[0].count == 5          # 3 in query 1, 2 in query 2; equal scores across queries do not count
    assert "in 2 queries" in ties[0].message
    assert ties[0].examples == ["query 1: 3 tied documents", "query 2: 2 tied documents"]


def test_ties_when_rank_disagrees():
    run = io.read_run(b"1 Q0 a 1 1.0 t\n1 Q0 b 2 2.0 t\n1 Q0 c 3 1.0 t\n")
    assert {f.kind: f.count for f in run.findings} == {"rank_order": 1, "ties": 2}


def test_negative_grades_are_counted():
    qrels = io.read_qrels(b"1 0 a -1\n1 0 b 2\n2 0 a -2\n")
    found = [f for f in qrels.findings if f.kind == "negative_grades"]
    assert found[0].count == 2
    assert found[0].examples == ["query 1 document a (grade -1)", "query 2 document a (grade -2)"]


# --------------------------------------------------------------------------- robustness


def test_random_layouts_parse_alike_and_keep_line_numbers():
    """Seeded fuzz: the same rows in random whitespace, comments, blank lines and line ends."""
    rng = np.random.default_rng(2024)
    blanks = [" ", "  ", "\t", " \t ", "\t\t"]
    for trial in range(60):
        n = int(rng.integers(1, 40))
        expected = [(f"{rng.integers(0, 5):03d}", f"d{i}#{rng.integers(0, 9)}", float(rng.integers(-50, 50)) / 4,
                     int(rng.integers(1, 100)), "tag") for i in range(n)]
        newline = ["\n", "\r\n", "\r"][trial % 3]
        lines, data_lines = [], []
        for row in expected:
            while rng.random() < 0.2:
                lines.append(rng.choice(["", "   ", "# comment", "  # indented comment", "\t"]))
            seps = [blanks[i] for i in rng.integers(0, len(blanks), 5)]
            fields = [row[0], "Q0", row[1], str(row[3]), repr(row[2]), row[4]]
            text = "".join(f + s for f, s in zip(fields, seps + [""]))
            if rng.random() < 0.2:
                text = rng.choice(blanks) + text
            if rng.random() < 0.2:
                text += rng.choice(blanks)
            lines.append(text)
            data_lines.append(len(lines))
        data = newline.join(lines) + (newline if rng.random() < 0.5 else "")
        run = io.read_run(data.encode(), on_duplicate="first")
        assert rows(run) == expected, (trial, data)
        assert run.line_of(np.arange(n)).tolist() == data_lines, (trial, data)


def test_line_numbers_of_errors_after_random_comments():
    rng = np.random.default_rng(5)
    for _ in range(20):
        lines = []
        for i in range(30):
            if rng.random() < 0.3:
                lines.append("# note")
            lines.append(f"1 Q0 d{i} {i + 1} {30 - i} t")
        bad = int(rng.integers(0, len(lines)))
        while lines[bad].startswith("#"):
            bad = (bad + 1) % len(lines)
        lines[bad] = lines[bad].replace(" t", "")
        with pytest.raises(MetricsError) as info:
            io.read_run("\n".join(lines).encode(), source="r.txt")
        assert info.value.line == bad + 1


def test_parsed_runs_pickle():
    run = io.read_run(b"# c\n" + RUN)
    back = pickle.loads(pickle.dumps(run))
    assert rows(back) == RUN_ROWS and back.line_of([0]).tolist() == [2] and back.digest == run.digest


def test_csv_values_are_trimmed_and_empty_ids_refused():
    assert rows(io.read_run(b"qid, docno, score\n007, d1 , 2.5\n")) == [("007", "d1", 2.5, 1, "run")]
    fails(lambda: io.read_run(b"qid,docno,score\n007,d1,1\n007,,2\n", source="r.csv"), source="r.csv", line=3,
          problem="the docno is empty", fix="every row needs a docno")
    fails(lambda: io.read_qrels(pd.DataFrame({"qid": ["1", None], "docno": ["a", "b"], "rel": [1, 0]})),
          source="<DataFrame>", line=None, problem="row 2: qid is missing", fix="every row needs a qid")


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_errors_quote_the_original_line_whatever_the_line_ends(newline):
    data = newline.join([b"# c", b"1 Q0 a 1 2 t", b"", b"1\tQ0 b 2 x t", b"1 Q0 c 3 1 t"])
    err = fails(lambda: io.read_run(data, source="r.txt"), source="r.txt", line=4,
                problem="score 'x' is not a number", fix="column order")
    assert err.problem.endswith(": '1\\tQ0 b 2 x t'")
    assert sources.line_of_offset(data, data.index(b"x")) == 4
