"""metrics.io.validate: scores, ranks and grades, duplicates, and the findings (rank order, ties,
negative grades)."""
from __future__ import annotations

import pickle
import re

import pandas as pd
import pytest

from metrics import io
from metrics.errors import MetricsError
from tests.metrics.io.helpers import RUN, RUN_ROWS, fails, rows


@pytest.mark.parametrize("score, problem", [(b"abc", "score 'abc' is not a number"),
                                            (b"1,5", "score '1,5' is not a number"),
                                            (b"nan", "score nan is not a finite number"),
                                            (b"inf", "score inf is not a finite number"),
                                            (b"-Infinity", "score -inf is not a finite number")])
def test_bad_scores(score, problem):
    data = b"301 Q0 d1 1 3.0 t\n#\n301 Q0 d2 2 " + score + b" t\n301 Q0 d3 3 1.0 t\n"
    fails(lambda: io.read_run(data, source="run.txt"), source="run.txt", line=3, problem=re.escape(problem),
          fix="number")


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


def test_conflicting_and_repeated_judgments():
    fails(lambda: io.read_qrels(b"301 0 d1 1\n301 0 d2 1\n\n301 0 d1 2\n", source="q.txt"), source="q.txt", line=4,
          problem=r"judges document 'd1' twice with different grades \(1 on line 1, 2 on line 4\)",
          fix="keep one judgment")
    qrels = io.read_qrels(b"301 0 d1 1\n301 0 d2 1\n301 0 d1 1\n302 0 d1 1\n", source="q.txt")
    assert rows(qrels) == [("301", "d1", 1), ("301", "d2", 1), ("302", "d1", 1)]
    found = [f for f in qrels.findings if f.kind == "duplicate_judgments"]
    assert found[0].count == 1 and found[0].examples == ["query 301 document d1 (line 1 and line 3)"]


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




def test_parsed_runs_pickle():
    run = io.read_run(b"# c\n" + RUN)
    back = pickle.loads(pickle.dumps(run))
    assert rows(back) == RUN_ROWS and back.line_of([0]).tolist() == [2] and back.digest == run.digest
