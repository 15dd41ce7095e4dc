"""metrics.io.trec: TREC run and qrels text (whitespace, comments, line ends, trec_eval's files),
column-count errors and the line numbers of errors.

Errors are checked for the four parts a user needs: file, line, problem, fix.
"""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from metrics import io
from metrics.errors import MetricsError
from metrics.io import lines, read, trec, validate
from tests.hostile_corpus import block_run
from tests.metrics.io.helpers import QRELS, QRELS_ROWS, RUN, RUN_ROWS, fails, rows, write


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




def test_qrels_given_as_run():
    fails(lambda: io.read_run(QRELS, source="q.txt"), source="q.txt", line=1,
          problem="expected at least 6 columns .*found 4", fix="this looks like a qrels file (qid iter docno rel); "
          "load it as qrels")


def test_run_given_as_qrels():
    fails(lambda: io.read_qrels(RUN, source="run.txt"), source="run.txt", line=1,
          problem="expected exactly 4 columns .*found 6", fix="this looks like a run file (qid Q0 docno rank score "
          "tag); load it as a run")


def _traced_peak(fn) -> int:
    """Peak bytes Python and numpy allocated while ``fn`` ran (both report to tracemalloc)."""
    import tracemalloc
    tracemalloc.start()
    try:
        fn()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


LARGE_RUN = b"# a comment\n" + b"".join(b"%d Q0 doc%d 1 %d.5 bm25\n" % (q, q, q) for q in range(200_000))


@pytest.mark.parametrize("as_path", [False, True])
def test_a_large_run_given_as_qrels_is_refused_from_its_first_lines(tmp_path, as_path):
    # The same message as a small file's, and neither the whole file read nor normalised: the
    # 2 GB bench run given as qrels took 59 s and 10 GB before it was refused at its first line.
    assert len(LARGE_RUN) > 40 * trec.HEAD_BYTES
    given = write(tmp_path, "run.txt", LARGE_RUN) if as_path else LARGE_RUN
    fix = "this looks like a run file (qid Q0 docno rank score tag); load it as a run"
    peak = _traced_peak(lambda: fails(lambda: io.read_qrels(given, source="run.txt"), source="run.txt", line=2,
                                      problem="expected exactly 4 columns .*found 6: '0 Q0 doc0 1 0.5 bm25'",
                                      fix=fix))
    assert peak < len(LARGE_RUN) // 4, peak


def test_a_large_file_bad_after_its_head_names_that_line():
    # The head judged alone refuses nothing when its lines are good: the line past it is found
    # as before, numbered in the whole file.
    good = b"".join(b"%d 0 doc%d 1\n" % (q, q) for q in range(20_000))
    assert len(good) > trec.HEAD_BYTES
    fails(lambda: io.read_qrels(good + b"7 0 d\n" + good, source="q.txt"), source="q.txt", line=20_001,
          problem="expected exactly 4 columns .*found 3", fix="lacks the iteration column")


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


def test_bad_score_in_a_clean_large_file_is_located():
    lines = [f"{q} Q0 d{i} {i + 1} {100 - i} t" for q in range(50) for i in range(100)]
    lines[3456] = "34 Q0 d56 57 x12 t"
    data = ("\n".join(lines) + "\n").encode()
    fails(lambda: io.read_run(data, source="big.txt"), source="big.txt", line=3457,
          problem="score 'x12' is not a number", fix="check the column order")


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


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_errors_quote_the_original_line_whatever_the_line_ends(newline):
    data = newline.join([b"# c", b"1 Q0 a 1 2 t", b"", b"1\tQ0 b 2 x t", b"1 Q0 c 3 1 t"])
    err = fails(lambda: io.read_run(data, source="r.txt"), source="r.txt", line=4,
                problem="score 'x' is not a number", fix="column order")
    assert err.problem.endswith(": '1\\tQ0 b 2 x t'")
    assert lines.line_of_offset(data, data.index(b"x")) == 4


_block_run = block_run


def _read_whole(path, **options):
    """read_run on the file's bytes: the whole-file path, the reference of the block path."""
    return io.read_run(path.read_bytes(), name=path.stem, source=path.name, **options)


def test_large_files_read_in_blocks_equal_the_whole_file(tmp_path, monkeypatch):
    monkeypatch.setattr(trec, "FILE_BLOCK", 4096)
    data = _block_run()
    path = write(tmp_path, "big.txt", data)
    calls = []
    blocks = trec.read_trec_blocks
    monkeypatch.setattr(read, "read_trec_blocks", lambda *a: calls.append(1) or blocks(*a))
    run = io.read_run(path)
    whole = _read_whole(path)
    assert calls and trec.read_trec_blocks(path, validate.RUN, "big.txt", read._plain_trec_head) is not None
    assert run.table.equals(whole.table)
    assert run.digest == whole.digest == hashlib.sha256(data).hexdigest()
    assert [(f.kind, f.message, f.examples) for f in run.findings] == \
        [(f.kind, f.message, f.examples) for f in whole.findings]
    assert list(run.line_of([0, 5, len(run) - 1])) == [1, 6, len(run)]
    # a last line without a newline
    path = write(tmp_path, "open.txt", data.rstrip(b"\n"))
    assert io.read_run(path).table.equals(whole.table)


def test_a_duplicate_beside_a_url_docno_is_found_in_blocks(tmp_path, monkeypatch):
    """A chunk holding a docno longer than 256 bytes hashed its short docnos another way, so a
    docno repeated from another chunk went unseen (and trec_eval refuses the file)."""
    monkeypatch.setattr(trec, "FILE_BLOCK", 4096)
    lines = [f"1 Q0 d{i} {i + 1} {1000 - i} t" for i in range(400)]
    lines[299] = "1 Q0 d5 300 701 t"
    lines[300] = "1 Q0 http://example.org/" + "x" * 300 + " 301 700 t"
    lines[301] = "1 Q0 d5 302 699 t"   # the url shares its chunk with one of them at least
    path = write(tmp_path, "big.txt", ("\n".join(lines) + "\n").encode())
    run = io.read_run(path, on_duplicate="first")
    assert [(f.kind, f.count) for f in run.findings if f.kind == "duplicates"] == [("duplicates", 2)]
    assert run.table.equals(_read_whole(path, on_duplicate="first").table)
    with pytest.raises(MetricsError, match="'d5' appears twice"):
        io.read_run(path)


@pytest.mark.parametrize("change", ["score", "blank", "comment", "tab", "crlf", "double_space", "duplicate",
                                    "nan", "utf8", "nul", "short"])
def test_blocks_leave_every_problem_to_the_whole_file_path(tmp_path, monkeypatch, change):
    monkeypatch.setattr(trec, "FILE_BLOCK", 4096)
    lines = _block_run().decode().splitlines()
    at = 1234   # a line well past the first block
    if change == "score":
        lines[at] = lines[at].replace(" tag", "").rsplit(" ", 1)[0] + " x12 tag"
    elif change == "blank":
        lines.insert(at, "")
    elif change == "comment":
        lines.insert(at, "# a comment")
    elif change == "tab":
        lines[at] = lines[at].replace(" ", "\t")
    elif change == "crlf":
        lines[at] += "\r"
    elif change == "double_space":
        lines[at] = lines[at].replace(" Q0 ", "  Q0 ")
    elif change == "duplicate":
        lines[at] = lines[at - 1].rsplit(" ", 3)[0] + " " + " ".join(lines[at].rsplit(" ", 3)[1:])
    elif change == "nan":
        lines[at] = lines[at].replace(" tag", "").rsplit(" ", 1)[0] + " nan tag"
    elif change == "utf8":
        lines[at] = lines[at].replace(" tag", " t\u00e9g")
    elif change == "nul":
        lines[at] = lines[at].replace(" tag", " t\x00g")
    elif change == "short":
        lines[at] = lines[at].rsplit(" ", 1)[0]
    data = ("\n".join(lines) + "\n").encode()
    path = write(tmp_path, "big.txt", data)
    try:
        expected = _read_whole(path)
    except MetricsError as exc:
        with pytest.raises(MetricsError) as info:
            io.read_run(path)
        assert str(info.value) == str(exc)
        return
    run = io.read_run(path)
    assert run.table.equals(expected.table) and run.digest == expected.digest
    assert list(run.line_of(np.arange(len(run)))) == list(expected.line_of(np.arange(len(expected))))
