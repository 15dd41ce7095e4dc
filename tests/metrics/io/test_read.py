"""metrics.io.read: what read_run and read_qrels accept (file objects, parsed objects, paths) and
the names and sources they give."""
from __future__ import annotations

import gzip
import io as pyio

import pytest

from metrics import io
from metrics.errors import MetricsError
from tests.metrics.io.helpers import QRELS, RUN, RUN_ROWS, fails, rows, write


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


def test_unsupported_input_type():
    with pytest.raises(MetricsError, match="cannot read a run from a int"):
        io.read_run(42)


def test_layout_of_tells_parquet_whole_files_and_trec_text_for_every_reader():
    from metrics.io.read import layout_of
    from metrics.io.sniff import PARQUET_MAGIC, UTF8_BOM, without_bom

    assert layout_of(PARQUET_MAGIC + b"\x15\x04") == "parquet"
    assert layout_of(b'{"q1": {"d1": 1.0}}') == "whole"
    assert layout_of(UTF8_BOM + b"# comment\n\nqid\tdocno\tscore\nq1\td1\t1\n") == "whole"   # a header line
    assert layout_of(UTF8_BOM + b"q1 Q0 d1 1 2.5 sys\n") == "text"
    assert without_bom(UTF8_BOM + b"x") == b"x" and without_bom(b"x") == b"x"
