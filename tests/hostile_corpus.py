"""Malformed and hostile inputs as data: every case is a file a user could upload, the kind it
is given as, a fragment its one-line error must hold, and the line it must name (None: the
problem is the whole file).

Used by the library and CLI tests (tests/metrics/io/test_hostile.py) and by the browser tests.
Bombs inflate past ``INFLATE_LIMIT``: run those cases with ``NDCG_LAB_INFLATE_LIMIT`` set to it.
"""
from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zipfile
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

INFLATE_LIMIT = 1 << 20
"""The inflate limit the bomb cases are meant for (NDCG_LAB_INFLATE_LIMIT=1048576)."""

MAX_LINE = 10**6
"""The default NDCG_LAB_MAX_LINE (1 MB): the long-line cases hold a line one byte longer."""

GOOD_RUN = b"q1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 1.5 sys\nq2 Q0 d3 1 0.5 sys\n"
GOOD_QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
GOOD_TOPICS = b"q1\tapple pie\nq2\tbanana bread\n"


@dataclass(frozen=True)
class Case:
    name: str            # the file name, as uploaded (it must appear in the message)
    data: bytes
    kind: str            # "run", "qrels" or "topics"
    message: str         # a fragment of the error (compared case-insensitively)
    line: int | None     # the line the error names, or None when it names none

    @property
    def id(self) -> str:
        return self.name


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _xlsx() -> bytes:
    return _zip({"[Content_Types].xml": b"<?xml version='1.0'?><Types/>",
                 "xl/workbook.xml": b"<workbook/>", "xl/worksheets/sheet1.xml": b"<worksheet/>"})


def _parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def _bomb_body(kind: str) -> bytes:
    """Valid-looking text that inflates to 4 x INFLATE_LIMIT from a few kB."""
    line = GOOD_RUN.splitlines(keepends=True)[0] if kind == "run" else GOOD_QRELS.splitlines(keepends=True)[0]
    return line * (4 * INFLATE_LIMIT // len(line) + 1)


def _zstd(data: bytes) -> bytes:
    return pa.compress(data, codec="zstd", asbytes=True)


def _cases() -> list[Case]:
    run_line = "q1 Q0 d1 1 2.5 sys\n"
    big = "99999999999999999999"
    cases = [
        # column counts
        Case("four_columns.run", b"q1 Q0 d1 1\n", "run", "expected at least 6 columns", 1),
        Case("five_columns.run", (run_line + "q1 Q0 d2 2 1.5\n").encode(), "run", "found 5", 2),
        Case("qrels_as_run.run", GOOD_QRELS, "run", "looks like a qrels", 1),
        Case("one_field.run", b"hello\n", "run", "expected at least 6 columns", 1),
        Case("long_line.run", b"x" * 200_000 + b"\n", "run", "expected at least 6 columns", 1),
        Case("three_columns.qrels", b"q1 d1 1\n", "qrels", "expected exactly 4 columns", 1),
        Case("five_columns.qrels", b"q1 0 d1 1\nq1 0 d2 1 extra\n", "qrels", "expected exactly 4 columns", 2),
        Case("run_as_qrels.qrels", GOOD_RUN, "qrels", "looks like a run", 1),
        # numbers
        Case("score_word.run", (run_line + "q1 Q0 d2 2 high sys\n").encode(), "run", "'high' is not a number", 2),
        Case("rank_word.run", (run_line + "q1 Q0 d2 first 1.5 sys\n").encode(), "run", "'first' is not a number", 2),
        Case("rank_fraction.run", (run_line + "q1 Q0 d2 2.5 1.5 sys\n").encode(), "run", "not a whole number", 2),
        Case("rank_overflow.run", (run_line + f"q1 Q0 d2 {big} 1.5 sys\n").encode(), "run", "64-bit", 2),
        Case("rank_negative_overflow.run", (run_line + f"q1 Q0 d2 -{big} 1.5 sys\n").encode(), "run", "64-bit", 2),
        Case("rank_float_overflow.run", (run_line + "q1 Q0 d2 1e30 1.5 sys\n").encode(), "run", "64-bit", 2),
        Case("score_1e309.run", (run_line + "q1 Q0 d2 2 1e309 sys\n").encode(), "run",
             "overflows double precision", 2),
        Case("score_minus_1e309.run", (run_line + "q1 Q0 d2 2 -1e309 sys\n").encode(), "run",
             "overflows double precision", 2),
        Case("score_nan.run", (run_line + "q1 Q0 d2 2 nan sys\n").encode(), "run", "not a finite number", 2),
        Case("score_inf.run", (run_line + "q1 Q0 d2 2 inf sys\n").encode(), "run", "not a finite number", 2),
        Case("score_empty_field.run", (run_line + "q1\tQ0\td2\t2\t\tsys\n").encode(), "run", "found 5", 2),
        Case("grade_word.qrels", b"q1 0 d1 1\nq1 0 d2 high\n", "qrels", "'high' is not a number", 2),
        Case("grade_fraction.qrels", b"q1 0 d1 1\nq1 0 d2 1.5\n", "qrels", "not a whole number", 2),
        Case("grade_overflow.qrels", f"q1 0 d1 1\nq1 0 d2 {big}\n".encode(), "qrels", "64-bit", 2),
        Case("grade_negative_overflow.qrels", f"q1 0 d1 1\nq1 0 d2 -{big}\n".encode(), "qrels", "64-bit", 2),
        Case("grade_float_overflow.qrels", b"q1 0 d1 1\nq1 0 d2 1e20\n", "qrels", "64-bit", 2),
        Case("grade_nan.qrels", b"q1 0 d1 1\nq1 0 d2 nan\n", "qrels", "not a whole number", 2),
        Case("grade_overflow_header.tsv", f"qid\tdocno\trel\nq1\td1\t1\nq1\td2\t{big}\n".encode(), "qrels",
             "64-bit", 3),
        Case("rank_overflow_header.tsv",
             f"qid\tdocno\tscore\trank\nq1\td1\t2.5\t1\nq1\td2\t1.5\t{big}\n".encode(), "run", "64-bit", 3),
        Case("score_word_header.csv", b"qid,docno,score\nq1,d1,2.5\nq1,d2,abc\n", "run", "not a number", 3),
        # empty and comments
        Case("empty.run", b"", "run", "the file is empty", 1),
        Case("blank.run", b"\n \n\t\n", "run", "only blank lines", 1),
        Case("comments.run", b"# a run\n# nothing else\n", "run", "no data lines", 2),
        Case("empty.qrels", b"", "qrels", "the file is empty", 1),
        Case("comments.qrels", b"# judgments\n\n# none\n", "qrels", "no data lines", 3),
        Case("empty.gz", _gzip(b""), "run", "the file is empty", 1),
        # duplicates
        Case("duplicate_doc.run", (run_line + "q1 Q0 d1 2 1.5 sys\n").encode(), "run", "appears twice", 2),
        Case("conflicting_grades.qrels", b"q1 0 d1 1\nq1 0 d1 2\n", "qrels", "twice with different grades", 2),
        # encodings and file types
        Case("utf16_bom.run", GOOD_RUN.decode().encode("utf-16"), "run", "UTF-16", None),
        Case("utf16le_no_bom.run", GOOD_RUN.decode().encode("utf-16-le"), "run", "UTF-16", None),
        Case("utf16be_no_bom.run", GOOD_RUN.decode().encode("utf-16-be"), "run", "UTF-16", None),
        Case("utf16_bom.qrels", GOOD_QRELS.decode().encode("utf-16"), "qrels", "UTF-16", None),
        Case("latin1.run", (run_line + "q1 Q0 caf\xe9 2 1.5 sys\n").encode("latin-1"), "run", "invalid UTF-8", 2),
        Case("run.zip", _zip({"run.txt": GOOD_RUN}), "run", "zip archive", None),
        Case("qrels.zip", _zip({"qrels.txt": GOOD_QRELS}), "qrels", "zip archive", None),
        Case("run.xlsx", _xlsx(), "run", "Excel workbook", None),
        Case("qrels.xlsx", _xlsx(), "qrels", "Excel workbook", None),
        Case("nul_byte.run", (run_line + "q1 Q0 d2\x00 2 1.5 sys\n").encode(), "run", "NUL byte", 2),
        Case("nul_byte.qrels", b"q1 0 d1 1\nq1 0 d2\x00 1\nq1 0 d3 1\n", "qrels", "NUL byte", 2),
        Case("image.png", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, "run", "PNG image", None),
        Case("document.pdf", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n", "run", "PDF document", None),
        Case("random.bin", bytes((i * 97 + 13) % 256 for i in range(4096)), "run", "binary", None),
        # compression
        Case("garbage.gz", b"\x1f\x8b\x08\x00" + b"not really gzip at all" * 10, "run", "cannot decompress", None),
        Case("truncated.gz", _gzip(GOOD_RUN * 50)[:-30], "run", "cannot decompress", None),
        Case("garbage.bz2", b"BZh9" + b"\x00garbage" * 20, "run", "cannot decompress", None),
        Case("truncated.xz", lzma.compress(GOOD_RUN * 50)[:-20], "run", "cannot decompress", None),
        Case("garbage.zst", b"\x28\xb5\x2f\xfd" + b"garbage!" * 8, "qrels", "cannot decompress", None),
        Case("bomb.run.gz", _gzip(_bomb_body("run")), "run", "inflates to more than", None),
        Case("bomb.run.bz2", bz2.compress(_bomb_body("run")), "run", "inflates to more than", None),
        Case("bomb.qrels.xz", lzma.compress(_bomb_body("qrels")), "qrels", "inflates to more than", None),
        Case("bomb.qrels.zst", _zstd(_bomb_body("qrels")), "qrels", "inflates to more than", None),
        Case("nested.gz", _gzip(_gzip(GOOD_RUN)), "run", "compressed twice", None),
        Case("zeros.run.xz", lzma.compress(b"\0" * (4 * INFLATE_LIMIT)), "run", "binary", None),
        Case("one_line.run.gz", _gzip(b"x" * (2 * MAX_LINE)), "run", "line is longer than", 1),
        Case("very_long_line.run", GOOD_RUN + b"9" * (MAX_LINE + 1) + b" Q0 d4 4 0.5 sys\n", "run",
             "line is longer than", 4),
        Case("very_long_line.qrels.bz2", bz2.compress(GOOD_QRELS + b"q9 0 " + b"d" * (MAX_LINE + 1) + b" 1\n"),
             "qrels", "line is longer than", 4),
        Case("very_long_line.topics", GOOD_TOPICS + b"q3\t" + b"pie " * (MAX_LINE // 4 + 1) + b"\n", "topics",
             "line is longer than", 3),
        # structured formats
        Case("bad.json", b'{"q1": {"d1": 1.0}, "q2": ', "run", "invalid JSON", 1),
        Case("grade_overflow.json", b'{"q1": {"d1": 199999999999999999999, "d2": 0}}', "qrels", "64-bit", None),
        Case("wrong_columns.parquet", _parquet(pa.table({"a": [1, 2], "b": ["x", "y"]})), "run", "column", None),
        Case("truncated.parquet", _parquet(pa.table({"qid": ["q1"], "docno": ["d1"], "score": [1.0]}))[:-12] +
             b"PAR1", "run", "parquet", None),
        # names a user controls (the message must name them as given) and line endings
        Case("<img src=x onerror=alert(1)>.run", b"q1 Q0 d1 1\n", "run", "expected at least 6 columns", 1),
        Case("[link](http://example.com).run", b"q1 Q0 d1 1\n", "run", "expected at least 6 columns", 1),
        Case("=HYPERLINK(\"http://x\").qrels", b"q1 d1 1\n", "qrels", "expected exactly 4 columns", 1),
        Case("crlf_mix.run", b"q1 Q0 d1 1 2.5 sys\r\nq1 Q0 d2 2 1.5 sys\nq1 Q0 d3 3\r\n", "run", "found 4", 3),
        Case("lone_cr.qrels", b"q1 0 d1 1\rq1 0 d2 1\rq1 0 d3 x\r", "qrels", "'x' is not a number", 3),
        # topics
        Case("empty.topics", b"", "topics", "the file is empty", 1),
        Case("duplicate.topics", b"q1\tapple\nq1\tpear\n", "topics", "twice", 2),
        Case("nul.topics", b"q1\tapple\nq2\t\x00\n", "topics", "NUL byte", 2),
        Case("utf16.topics", GOOD_TOPICS.decode().encode("utf-16"), "topics", "UTF-16", None),
        Case("topics.zip", _zip({"topics.txt": GOOD_TOPICS}), "topics", "zip archive", None),
        Case("broken.xml", b"<topics>\n<topic number=\"1\">apple\n</topics>\n", "topics", "xml", 3),
    ]
    return cases


CASES: list[Case] = _cases()
"""Every hostile case; ``[c for c in CASES if c.kind != "topics"]`` are those `eval` reads."""

BOMBS = [c for c in CASES if c.name.startswith("bomb.")]


def block_run(n_queries: int = 40, depth: int = 50) -> bytes:
    """A clean single-space run of ``n_queries`` x ``depth`` lines (50 kB by default): many blocks
    when the tests set the block size to 4 kB."""
    lines = [f"q{q} Q0 d{(q * 7 + i * 13) % 997} {i + 1} {(depth - i) // 2} tag"
             for q in range(n_queries) for i in range(depth)]
    return ("\n".join(lines) + "\n").encode()


def _deep(change: str, at: int = 1234) -> bytes:
    """:func:`block_run` with line ``at + 1`` changed, well past the first 4 kB block."""
    lines = block_run().decode().splitlines(keepends=True)
    if change == "score":
        lines[at] = lines[at].replace(" tag", "").rsplit(" ", 1)[0] + " x12 tag\n"
    elif change == "nul":
        lines[at] = lines[at].replace(" tag", " t\x00g")
    elif change == "short":
        lines[at] = " ".join(lines[at].split(" ")[:4]) + "\n"
    elif change == "duplicate":
        lines[at] = lines[at - 1].rsplit(" ", 3)[0] + " " + " ".join(lines[at].rsplit(" ", 3)[1:])
    elif change == "long":
        lines[at] = "9" * (MAX_LINE + 1) + lines[at][lines[at].index(" "):]
    return "".join(lines).encode()


def _streamed() -> list[Case]:
    """Compressed runs larger than many blocks, read as a stream (tests set 4 kB blocks)."""
    score = "'x12' is not a number"
    return [
        Case("deep_score.run.gz", _gzip(_deep("score")), "run", score, 1235),
        Case("deep_score.run.bz2", bz2.compress(_deep("score")), "run", score, 1235),
        Case("deep_score.run.xz", lzma.compress(_deep("score")), "run", score, 1235),
        Case("deep_score.run.zst", _zstd(_deep("score")), "run", score, 1235),
        Case("deep_nul.run.gz", _gzip(_deep("nul")), "run", "NUL byte", 1235),
        Case("deep_short.run.gz", _gzip(_deep("short")), "run", "found 4", 1235),
        Case("deep_duplicate.run.gz", _gzip(_deep("duplicate")), "run", "appears twice", 1235),
        Case("deep_long_line.run.gz", _gzip(_deep("long")), "run", "line is longer than", 1235),
        Case("truncated_deep.run.gz", _gzip(block_run())[:len(_gzip(block_run())) // 2], "run",
             "cannot decompress", None),
        Case("valid_text_bomb.run.gz", _gzip(_bomb_body("run")), "run", "inflates to more than", None),
        Case("one_line_gigabyte.run.gz", _gzip(b"7" * (2 * MAX_LINE) + b" Q0 d1 1 1.0 t\n"), "run",
             "line is longer than", 1),
    ]


STREAMED: list[Case] = _streamed()
"""Runs that the block reader inflates as a stream, each refused in the words of the whole file."""


_WORDED_OTHERWISE = ("blank.run", "utf16_bom.run", "utf16le_no_bom.run", "utf16be_no_bom.run", "nested.gz",
                     "zeros.run.xz")
STREAMING = [c for c in CASES if c.kind == "run" and c.name.endswith((".run", ".gz", ".bz2", ".xz", ".zst"))
             and not c.name.startswith(("<", "[")) and c.name not in _WORDED_OTHERWISE]
"""Run cases the streaming engine reads as text from a file (``--engine streaming``) and refuses
in the same words; the others it refuses too, worded from the piece (a NUL byte at line 1)."""

HOSTILE_TEXT = ["[click](http://example.com)", "**bold**", r"$\frac{a}{b}$", "<img src=x onerror=alert(1)>",
                ":red[alarm]", "# heading", "1. first", "- item", "`code`", "~~gone~~", "http://example.com",
                "me@example.com", "a | b", "&amp; &lt;", "_under_", "![img](http://example.com/x.png)",
                "=HYPERLINK(\"http://x\")", "line\nbreak"]
"""Names, document titles and topic text a visitor controls, each of them markup somewhere: every
page shows them letter for letter (ui/text.py)."""


# --------------------------------------------------------------------------- fuzzing

GOOD_TITLES = b"docno\ttitle\nd1\tApple pie, the classic\nd2\tBanana bread\nd3\t\"Quoted\" title\n"

SEEDS: dict[str, list[bytes]] = {
    "run": [GOOD_RUN, GOOD_RUN.replace(b" ", b"\t"), b"# comment\n" + GOOD_RUN.replace(b"\n", b"\r\n"),
            b"qid,docno,score\nq1,d1,2.5\nq1,d2,1.5\n", b'{"q1": {"d1": 2.5, "d2": 1.5}, "q2": {"d3": 0.5}}',
            _gzip(GOOD_RUN), _parquet(pa.table({"qid": ["q1", "q1"], "docno": ["d1", "d2"], "score": [2.5, 1.5]}))],
    "qrels": [GOOD_QRELS, GOOD_QRELS.replace(b" ", b"\t"), b"qid\tdocno\trel\nq1\td1\t1\nq2\td3\t2\n",
              b'{"q1": {"d1": 1, "d2": 0}}', bz2.compress(GOOD_QRELS)],
    "topics": [GOOD_TOPICS, b"<top>\n<num> Number: 301\n<title> apple pie\n<desc> Description:\nabout pies\n</top>\n",
               b'<topics><topic number="1"><query>apple</query></topic></topics>',
               b'{"qid": "q1", "query": "apple"}\n{"qid": "q2", "query": "pear"}\n', b"qid,query\nq1,apple\nq2,pear\n",
               lzma.compress(GOOD_TOPICS)],
    "titles": [GOOD_TITLES, b"d1,Apple\nd2,Banana\n", b"docno\ttitle\n",
               b"docno\ttitle\n" + b"".join(b"d%d\t%s\n" % (i, t.encode()) for i, t in enumerate(HOSTILE_TEXT[:-1]))],
    "text": [t.encode() for t in HOSTILE_TEXT],
}
SEEDS["streaming"] = SEEDS["run"]
SEEDS["streamed"] = [block_run(), _gzip(block_run())]
"""Valid inputs of every reader, which :func:`mutate` damages."""

_INSERTS = (b"\x00", b"\t", b" ", b"  ", b"\r", b"\n", b"\r\n", b"#", b"-", b"e", b".", b",", b'"', b"{", b"}", b"[",
            b"<", b">", b"</top>", b"&", b"99999999999999999999", b"1e309", b"nan", b"-inf", b"\xff\xfe",
            b"\xef\xbb\xbf", b"\xe9", b"\xc3", b"\x1f\x8b", b"PK\x03\x04", b"PAR1", b"Q0", b"0")


def mutate(data: bytes, rnd) -> bytes:
    """``data`` damaged by 1-4 random edits: bit flips, truncation, inserted tokens, deleted or
    repeated spans, two fields swapped on a line. ``rnd`` is a :class:`random.Random`."""
    out = bytearray(data)
    for _ in range(rnd.randint(1, 4)):
        op = rnd.choice(("flip", "truncate", "insert", "delete", "repeat", "swap"))
        at = rnd.randrange(len(out) + 1)
        if op == "flip" and out:
            i = rnd.randrange(len(out))
            out[i] ^= 1 << rnd.randrange(8)
        elif op == "truncate":
            del out[at:]
        elif op == "insert":
            out[at:at] = rnd.choice(_INSERTS) * rnd.choice((1, 1, 1, 2, 50))
        elif op == "delete":
            del out[at:at + rnd.randint(1, 16)]
        elif op == "repeat":
            out[at:at] = out[at:at + rnd.randint(1, 64)] * rnd.randint(1, 8)
        elif op == "swap":
            lines = bytes(out).split(b"\n")
            row = rnd.randrange(len(lines))
            fields = lines[row].split()
            if len(fields) > 1:
                i, j = rnd.sample(range(len(fields)), 2)
                fields[i], fields[j] = fields[j], fields[i]
                lines[row] = b" ".join(fields)
            out = bytearray(b"\n".join(lines))
    return bytes(out)


def fuzz_input(kind: str, rnd) -> bytes:
    """One fuzz input for a reader: a mutated seed mostly, sometimes random bytes."""
    if rnd.random() < 0.15:
        return bytes(rnd.getrandbits(8) for _ in range(rnd.randint(0, 256)))
    return mutate(rnd.choice(SEEDS[kind]), rnd)
