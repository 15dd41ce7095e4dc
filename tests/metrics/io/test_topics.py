"""Topics in every format, from fixtures written here, with their errors (file, line, problem)."""
from __future__ import annotations

import bz2
import gzip
import io as stdio
import lzma
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from metrics import MetricsError
from metrics.io.topics import default_field, query_text, read_topics, text_fields

ROBUST = b"""<top>
<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international criminal
activity, the locale of each organization, and the names of their leaders.

<narr> Narrative:
A relevant document must as a minimum identify the organization and the type
of illegal activity (e.g., Columbian cartel exporting cocaine).
</top>


<top>
<num> Number: 302
<title> Poliomyelitis and Post-Polio

<desc> Description:
Is the disease of Poliomyelitis (polio) under control in the world?

<narr> Narrative:
Relevant documents should contain data or outbreaks of the polio disease.
</top>
"""

XML_FIELDS = b"""<?xml version="1.0" encoding="UTF-8"?>
<topics task="covid" batch="1">
  <topic number="1">
    <query>coronavirus origin</query>
    <question>what is the origin of COVID-19</question>
    <narrative>seeking range of information about the SARS-CoV-2 virus's origin</narrative>
  </topic>
  <topic number="2">
    <query>coronavirus response to weather changes</query>
    <question>how does the coronavirus respond to changes in the weather</question>
    <narrative>seeking range of information about the SARS-CoV-2 virus viability &amp; weather</narrative>
  </topic>
</topics>
"""

XML_PLAIN = b"""<topics task="adhoc">
<topic number="101">hubble telescope achievements</topic>
<topic number="102">  international   art crime </topic>
</topics>
"""

EXPECTED_ROBUST = {
    "qid": ["301", "302"],
    "title": ["International Organized Crime", "Poliomyelitis and Post-Polio"],
    "description": ["Identify organizations that participate in international criminal activity, the locale of each "
                    "organization, and the names of their leaders.",
                    "Is the disease of Poliomyelitis (polio) under control in the world?"],
    "narrative": ["A relevant document must as a minimum identify the organization and the type of illegal activity "
                  "(e.g., Columbian cartel exporting cocaine).",
                  "Relevant documents should contain data or outbreaks of the polio disease."],
}


@pytest.fixture
def ir_datasets_formats(tmp_path, monkeypatch):
    """ir_datasets' readers as an independent oracle; its home (created on import) in a temp folder."""
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "ir_datasets"))
    return pytest.importorskip("ir_datasets.formats")


def records(frame: pd.DataFrame) -> dict:
    return {c: [None if pd.isna(v) else v for v in frame[c]] for c in frame.columns}


def error(src, **kwargs) -> MetricsError:
    with pytest.raises(MetricsError) as info:
        read_topics(src, **kwargs)
    return info.value


# --------------------------------------------------------------------------- TREC SGML


def test_classic_trec_topics(tmp_path):
    path = tmp_path / "topics.301-302"
    path.write_bytes(ROBUST)
    frame = read_topics(path)
    assert records(frame) == EXPECTED_ROBUST
    assert frame.attrs == {"source": "topics.301-302", "format": "trec"}
    assert all(str(t) == "string" for t in frame.dtypes)


def test_classic_topics_agree_with_ir_datasets_reader(tmp_path, ir_datasets_formats):
    formats = ir_datasets_formats
    from ir_datasets.util import LocalDownload

    path = tmp_path / "topics.txt"
    path.write_bytes(ROBUST)
    theirs = list(formats.TrecQueries(LocalDownload(path)).queries_iter())
    ours = read_topics(path)
    for q, row in zip(theirs, ours.itertuples()):
        assert (q.query_id, " ".join(q.title.split()), " ".join(q.description.split()),
                " ".join(q.narrative.split())) == (row.qid, row.title, row.description, row.narrative)


def test_closed_tags_one_line_topics_and_older_fields():
    text = b"""<top>
<head> Tipster Topic Description
<num> Number: 051
<dom> Domain: International Economics
<title> Topic: Airbus Subsidies
<desc> Description: Document will discuss government assistance to Airbus.
<con> Concept(s):
1. Airbus Industrie
<fac> Factor(s):
<nat> Nationality: NOT U.S.
</top>
<top><num>52</num><title>South African Sanctions</title><desc>sanctions against South Africa</desc></top>
"""
    frame = read_topics(text)
    assert frame["qid"].tolist() == ["051", "52"]
    assert frame["title"].tolist() == ["Airbus Subsidies", "South African Sanctions"]
    assert frame.loc[0, "domain"] == "International Economics"
    assert frame.loc[0, "concepts"] == "1. Airbus Industrie"
    assert frame.loc[0, "nationality"] == "NOT U.S."
    assert pd.isna(frame.loc[1, "domain"])
    assert text_fields(frame)[:2] == ["title", "description"]


@pytest.mark.parametrize("text, line, message", [
    (b"<top>\n<num> Number: 1\n<title> a\n</top>\n<top>\n<title> no number\n</top>\n", 5,
     "topic without a number (<num>)"),
    (b"<top>\n<num> Number: 7\n<title> a\n</top>\n\n<top>\n<num> Number: 7\n<title> b\n</top>\n", 6,
     "query id '7' is given twice (lines 1 and 6)"),
    (b"<top>\n<num> Number: 1\n<title> a\n</top>\n<top>\n<num> Number: 2\n<title> b\n", 5,
     "the topic that starts here is not closed (</top> is missing)"),
    (b"<top>\n<num> Number: 1\n<top>\n<num> Number: 2\n</top>\n", 3,
     "a new <top> begins before the topic of line 1 is closed with </top>"),
    (b"<topics>\n</top>\n", 2, "</top> without a <top> before it"),
])
def test_sgml_errors_name_the_line(text, line, message):
    exc = error(text, source="topics.txt")
    assert exc.source == "topics.txt" and exc.line == line and message in exc.problem


# --------------------------------------------------------------------------- TREC XML


def test_xml_topics_with_child_fields():
    frame = read_topics(XML_FIELDS)
    assert frame.attrs["format"] == "trec-xml"
    assert frame["qid"].tolist() == ["1", "2"]
    assert frame["query"].tolist() == ["coronavirus origin", "coronavirus response to weather changes"]
    assert frame.loc[1, "narrative"] == "seeking range of information about the SARS-CoV-2 virus viability & weather"
    assert text_fields(frame) == ["query", "question", "narrative"]


def test_xml_topics_agree_with_ir_datasets_reader(tmp_path, ir_datasets_formats):
    formats = ir_datasets_formats
    from ir_datasets.util import LocalDownload

    path = tmp_path / "topics.xml"
    path.write_bytes(XML_FIELDS)
    theirs = list(formats.TrecXmlQueries(LocalDownload(path), qtype=formats.GenericQuery,
                                         qtype_map={"query": "text"}).queries_iter())
    assert [(q.query_id, q.text) for q in theirs] == list(zip(*(read_topics(path)[c] for c in ("qid", "query"))))


def test_xml_topics_with_plain_text_and_other_id_forms():
    frame = read_topics(XML_PLAIN)
    assert records(frame) == {"qid": ["101", "102"],
                              "query": ["hubble telescope achievements", "international art crime"]}
    other = read_topics(b'<topics><topic id="a1" type="faceted"><title>x <i>y</i></title></topic>'
                        b'<topic><number> b2 </number><title>z</title><subtopic>s1</subtopic><subtopic>s2</subtopic>'
                        b'</topic></topics>')
    assert records(other) == {"qid": ["a1", "b2"], "title": ["x y", "z"], "type": ["faceted", None],
                              "subtopic": [None, "s1\ns2"]}


def test_xml_in_the_encoding_it_declares():
    text = '<?xml version="1.0" encoding="ISO-8859-1"?>\n<topics><topic number="1">café crème</topic></topics>'
    assert read_topics(text.encode("latin-1"))["query"].tolist() == ["café crème"]
    assert read_topics(text.encode("utf-8").replace(b"ISO-8859-1", b"UTF-8"))["query"].tolist() == ["café crème"]


@pytest.mark.parametrize("text, line, message", [
    (b'<topics>\n<topic number="1">a</topic>\n<topic number="2">b</topc>\n</topics>\n', 3,
     "malformed XML: mismatched tag"),
    (b'<topics>\n<topic number="1">a & b</topic>\n</topics>\n', 2, "malformed XML: not well-formed"),
    (b'<topics>\n<topic number="1">a</topic>\n\n<topic>\n<title>b</title>\n</topic>\n</topics>', 4,
     "topic without a number"),
    (b'<topics>\n<topic number="1">a</topic>\n<topic number="1">b</topic>\n</topics>', 3,
     "query id '1' is given twice (lines 2 and 3)"),
    (b'<topics>\n<query>a</query>\n</topics>', 1, "no <topic> elements found"),
])
def test_xml_errors_name_the_line(text, line, message):
    exc = error(text, source="topics.xml")
    assert exc.line == line and message in exc.problem, str(exc)


# --------------------------------------------------------------------------- delimited text


def test_tsv_without_header_keeps_quotes():
    frame = read_topics(b'1048585\twhat is paula deen\'s brother\n2\t"quoted" query\n', source="queries.tsv")
    assert records(frame) == {"qid": ["1048585", "2"], "query": ["what is paula deen's brother", '"quoted" query']}
    assert frame.attrs["format"] == "tsv"


def test_tsv_and_csv_with_headers():
    tsv = read_topics(b"query_id\ttext\tnarrative\n1\tfirst\tlong one\n\n# a comment\n2\tsecond\t\n")
    assert records(tsv) == {"qid": ["1", "2"], "text": ["first", "second"], "narrative": ["long one", ""]}
    csv = read_topics(b'topic,title,description\n301,"crime, organized",who\n302,polio,"is it, ""controlled"""\n')
    assert records(csv) == {"qid": ["301", "302"], "title": ["crime, organized", "polio"],
                            "description": ["who", 'is it, "controlled"']}
    assert csv.attrs["format"] == "csv"


def test_csv_without_header_and_blank_separated_text():
    assert records(read_topics(b"1,hello world\n2,bye\n")) == {"qid": ["1", "2"], "query": ["hello world", "bye"]}
    text = read_topics(b"301 international organized crime\n302   poliomyelitis  and post-polio\n")
    assert records(text) == {"qid": ["301", "302"], "query": ["international organized crime",
                                                              "poliomyelitis  and post-polio"]}


@pytest.mark.parametrize("text, line, message", [
    (b"1\ta\n2\tb\textra\n", 2, "expected 2 columns (qid, query), found 3"),
    (b"qid\tquery\n1\ta\n\n2\n", 4, "expected 2 columns (qid, query), found 1"),
    (b"1 a\n2\n", 2, "expected a query id and its text, found one word"),
    (b"1\ta\n1\tb\n", 2, "query id '1' is given twice (lines 1 and 2)"),
    (b"qid,query\n1,\"unclosed\n", 2, "cannot read the CSV"),
    (b"\ta\n", 1, "the query id is empty"),
])
def test_delimited_errors_name_the_line(text, line, message):
    exc = error(text, source="q.tsv")
    assert exc.line == line and message in exc.problem, str(exc)


# --------------------------------------------------------------------------- JSON


def test_jsonl_variants():
    pyterrier = read_topics(b'{"qid": "1", "query": "a"}\n{"qid": 2, "query": "b"}\n')
    assert records(pyterrier) == {"qid": ["1", "2"], "query": ["a", "b"]}
    beir = read_topics(b'{"_id": "PLAIN-1", "text": "why", "metadata": {"url": "x"}}\n\n'
                       b'{"_id": "PLAIN-2", "text": "how"}\n')
    assert records(beir) == {"qid": ["PLAIN-1", "PLAIN-2"], "text": ["why", "how"]}
    assert beir.attrs["format"] == "jsonl"
    other = read_topics(b'{"query_id": "7", "Text": "t", "title": "ti", "year": 2020}\n')
    assert records(other) == {"qid": ["7"], "text": ["t"], "title": ["ti"], "year": ["2020"]}


def test_json_documents():
    assert records(read_topics(b'[{"qid": "1", "query": "a"}, {"qid": "2", "query": "b"}]')) == \
        {"qid": ["1", "2"], "query": ["a", "b"]}
    assert records(read_topics(b'{"1": "a", "2": "b"}')) == {"qid": ["1", "2"], "query": ["a", "b"]}
    assert records(read_topics(b'{"1": {"title": "a", "description": "aa"}}')) == \
        {"qid": ["1"], "title": ["a"], "description": ["aa"]}
    assert records(read_topics(b'{"queries": [{"id": "x", "text": "y"}]}')) == {"qid": ["x"], "text": ["y"]}
    assert records(read_topics({"q1": "first"})) == {"qid": ["q1"], "query": ["first"]}


@pytest.mark.parametrize("text, line, message", [
    (b'{"qid": "1", "query": "a"}\n{"qid": "2", "query": "b"\n', 2, "invalid JSON"),
    (b'{"qid": "1", "query": "a"}\n["2", "b"]\n', 2, "expected an object, got list"),
    (b'{"qid": "1", "query": "a"}\n\n{"query": "b"}\n', 3, "the record has no query id"),
    (b'{"qid": "1", "query": "a"}\n{"qid": "1", "query": "b"}\n', 2, "query id '1' is given twice (lines 1 and 2)"),
    (b'[{"qid": "1",\n "query": }]', 2, "invalid JSON"),
])
def test_json_errors_name_the_line(text, line, message):
    exc = error(text, source="q.jsonl")
    assert exc.line == line and message in exc.problem, str(exc)


# --------------------------------------------------------------------------- frames, parquet


def test_pyterrier_frames_tables_and_parquet(tmp_path):
    frame = pd.DataFrame({"qid": ["1", "2"], "query": ["a", "b"], "query_0": ["a0", "b0"]})
    assert records(read_topics(frame)) == {"qid": ["1", "2"], "query": ["a", "b"], "query_0": ["a0", "b0"]}
    table = pa.table({"query_id": [1, 2], "text": ["x", "y"]})
    assert records(read_topics(table)) == {"qid": ["1", "2"], "text": ["x", "y"]}
    path = tmp_path / "topics.parquet"
    pq.write_table(table, path)
    got = read_topics(path)
    assert records(got) == {"qid": ["1", "2"], "text": ["x", "y"]} and got.attrs["format"] == "parquet"
    with pytest.raises(MetricsError, match=r"query id '1' is given twice \(rows 1 and 2\)"):
        read_topics(pd.DataFrame({"qid": ["1", "1"], "query": ["a", "b"]}))
    with pytest.raises(MetricsError, match="no query-id column among docno, title"):
        read_topics(pd.DataFrame({"docno": ["1"], "title": ["a"]}))


# --------------------------------------------------------------------------- compression, bad files


FIXTURES = {"trec": ROBUST, "trec-xml": XML_FIELDS, "tsv": b"1\ta\n2\tb\n", "csv": b"qid,query\n1,a\n",
            "jsonl": b'{"qid": "1", "query": "a"}\n'}


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress], ids=["gz", "bz2", "xz"])
@pytest.mark.parametrize("kind", list(FIXTURES))
def test_every_format_compressed(tmp_path, kind, compress):
    path = tmp_path / f"topics.{kind}.packed"
    path.write_bytes(compress(FIXTURES[kind]))
    got = read_topics(path)
    assert got.attrs["format"] == kind
    assert records(got) == records(read_topics(FIXTURES[kind]))


def test_file_objects_are_named_after_their_file():
    upload = stdio.BytesIO(b"1\ta\n1\tb\n")
    upload.name = "uploaded.tsv"
    with pytest.raises(MetricsError, match=r"^uploaded.tsv line 2: query id '1' is given twice"):
        read_topics(upload)


@pytest.mark.parametrize("data, line, message", [
    (b"", 1, "the file is empty"),
    (b"\n  \n", 1, "the file holds only blank lines"),
    (b"1\tok\n2\tbad\x00\x01\n", 2, "binary data (a NUL byte) at byte 10"),
    (b"1\tok\n2\tcaf\xe9\n", 2, "invalid UTF-8 (byte 0xe9 at column 6)"),
    (b"# only\n# comments\n", 2, "every line is blank or a comment"),
    (gzip.compress(b"1\ta\n", mtime=0)[:-6], None, "cannot decompress the file"),
])
def test_bad_files(data, line, message):
    exc = error(data, source="t.tsv")
    assert exc.line == line and message in exc.problem, str(exc)


def test_paths_that_are_not_files(tmp_path):
    assert "no such file" in str(error(tmp_path / "missing.tsv"))
    assert "is a folder, not a file" in str(error(tmp_path))
    assert "unknown topics format 'yaml'" in str(error(b"x", format="yaml"))


# --------------------------------------------------------------------------- picking the query text


def test_field_choice():
    frame = read_topics(ROBUST)
    assert default_field(frame) == "title"
    assert query_text(frame).to_dict("list") == {"qid": ["301", "302"], "text": EXPECTED_ROBUST["title"]}
    assert query_text(frame, "narrative")["text"].tolist() == EXPECTED_ROBUST["narrative"]
    no_field = "the topics have no field 'query'. choose one of title, description, narrative"
    with pytest.raises(MetricsError, match=no_field):
        query_text(frame, "query")
    empty_title = read_topics(b"qid\ttitle\tdescription\n1\t\tabout x\n")
    assert default_field(empty_title) == "description"
    partial = read_topics(b"<topics><topic number='1'><title>a</title></topic><topic number='2'><desc>b</desc>"
                          b"</topic></topics>")
    assert query_text(partial, "title")["text"].tolist() == ["a", ""]


def test_the_path_of_a_real_file_is_its_name(tmp_path):
    path = Path(tmp_path) / "q.jsonl"
    path.write_bytes(b'{"qid": "1", "query": "a"}\n{"qid": "1", "query": "b"}\n')
    assert str(error(path)).startswith("q.jsonl line 2: query id '1' is given twice")


BULK_FIXTURES = [
    b"1048585\twhat is paula deen's brother\n2\t\"quoted\" query\n",
    b"query_id\ttext\tnarrative\n1\tfirst\tlong one\n\n2\tsecond\t\n",
    b"qid,query\n1,a\n2,b\n",
    b'topic,title,description\n301,"crime, organized",who\n302,polio,"is it, ""controlled"""\n',
    b"1,hello world\n2,bye\n",
    b'{"qid": 1, "query": "a"}\n{"qid": 2, "query": "b"}\n',
    b'{"_id": "PLAIN-1", "text": "why", "metadata": {"url": "x"}}\n\n{"_id": "PLAIN-2", "text": "how"}\n',
    b'{"query_id": "7", "Text": "t", "title": "ti", "year": 2020}\n{"query_id": "8", "Text": "u"}\n',
]


@pytest.mark.parametrize("data", BULK_FIXTURES)
def test_bulk_and_line_by_line_readers_agree(data, monkeypatch):
    from metrics.io import topics

    kind = "jsonl" if data.startswith(b"{") else "tsv" if b"\t" in data.split(b"\n")[0] else "csv"
    bulk = topics._bulk_jsonl(data) if kind == "jsonl" else topics._bulk_delimited(data.decode(), kind)
    assert bulk is not None                                 # the fixture takes the bulk path
    fast = read_topics(data)
    monkeypatch.setattr(topics, "_bulk_delimited", lambda *a: None)
    monkeypatch.setattr(topics, "_bulk_jsonl", lambda *a: None)
    slow = read_topics(data)
    pd.testing.assert_frame_equal(fast, slow)
    assert fast.attrs == slow.attrs
