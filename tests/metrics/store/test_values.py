"""metrics.store.values (names, the topics/docs tables) and metrics.store.tables' data-bytes formula, by hand."""
from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest

from metrics import io
from metrics.errors import MetricsError
from metrics.store import tables, values


def test_data_bytes_of_a_run_and_a_qrels():
    run = io.read_run(b"q1 Q0 d1 1 2.0 bm25\nq1 Q0 d22 2 1.0 bm25\n").table
    # per line len(qid) + len(docno) + len(tag) + 16: (2 + 2 + 4 + 16) + (2 + 3 + 4 + 16)
    assert tables.data_bytes("run", run) == 24 + 25
    qrels = io.read_qrels("q1 0 dé 1\n".encode()).table
    # len(qid) + len(docno) + 8, in UTF-8 bytes: é is two
    assert tables.data_bytes("qrels", qrels) == 2 + 3 + 8


def test_unique_name_numbers_a_taken_name():
    assert values.unique_name("bm25", set()) == "bm25"
    assert values.unique_name("bm25", {"bm25"}) == "bm25 (2)"
    assert values.unique_name("bm25", {"bm25", "bm25 (2)", "bm25 (3)"}) == "bm25 (4)"


def test_clean_name_trims_and_refuses_empty_long_and_control_characters():
    assert values.clean_name("  legal  ", "collection") == "legal"
    with pytest.raises(MetricsError, match="the run name is empty"):
        values.clean_name("   ", "run")
    with pytest.raises(MetricsError, match="201 characters long"):
        values.clean_name("x" * (values.MAX_NAME + 1), "run")
    with pytest.raises(MetricsError, match=r"control character \(U\+202E\)"):
        values.clean_name("evil\u202ename", "run")


def test_extra_table_takes_aliases_and_keeps_ids_as_text():
    table = values.extra_table("topics", pd.DataFrame({"QID": [7, "008"], "query": ["a b", None]}))
    assert table.schema == pa.schema([("qid", pa.string()), ("text", pa.string())])
    assert table.to_pydict() == {"qid": ["7", "008"], "text": ["a b", None]}
    docs = values.extra_table("docs", pd.DataFrame({"docno": ["d1"], "title": ["First"]}))
    assert docs.to_pydict() == {"docno": ["d1"], "title": ["First"]}


def test_extra_table_errors_name_the_columns_and_the_row():
    with pytest.raises(MetricsError, match="needs columns qid and text; found id, body"):
        values.extra_table("topics", pd.DataFrame({"id": ["1"], "body": ["x"]}))
    with pytest.raises(MetricsError, match="row 2 of the docs table has no docno"):
        values.extra_table("docs", pd.DataFrame({"docno": ["d1", None], "title": ["a", "b"]}))
    with pytest.raises(MetricsError, match="must be a pandas DataFrame"):
        values.extra_table("docs", {"docno": ["d1"]})
