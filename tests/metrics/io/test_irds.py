"""ir_datasets, offline: datasets registered here from local files written by the tests."""
from __future__ import annotations

import sys
import uuid

import pytest

import metrics
from metrics import MetricsError
from metrics.io import irds

QRELS = b"1 0 d1 1\n1 0 d2 0\n2 0 d3 2\n2 0 d1 -1\n"
QUERIES = b"1\tfirst query\n2\tsecond query\n"
TOPICS = b"""<top>
<num> Number: 1
<title> first title
<desc> Description:
first description
<narr> Narrative:
first narrative
</top>
"""


@pytest.fixture
def ir_datasets(tmp_path, monkeypatch):
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "home"))
    return pytest.importorskip("ir_datasets")


@pytest.fixture
def register(ir_datasets, tmp_path):
    """register(*components) -> a fresh dataset id, removed from the registry afterwards."""
    names = []

    def add(*components) -> str:
        name = f"ndcg-lab-test/{uuid.uuid4().hex[:8]}"
        ir_datasets.registry.register(name, ir_datasets.Dataset(*components))
        names.append(name)
        return name

    yield add
    for name in names:   # the registry has no public removal
        ir_datasets.registry._registered.pop(name, None)


def local(ir_datasets, path, data: bytes):
    from ir_datasets.util import LocalDownload

    path.write_bytes(data)
    return LocalDownload(path)


@pytest.fixture
def tsv_dataset(ir_datasets, register, tmp_path) -> str:
    from ir_datasets.formats import TrecQrels, TsvQueries

    return register(TsvQueries(local(ir_datasets, tmp_path / "queries.tsv", QUERIES)),
                    TrecQrels(local(ir_datasets, tmp_path / "qrels.txt", QRELS), {}))


def test_qrels_equal_reading_the_same_file(tsv_dataset, tmp_path):
    qrels = irds.load_qrels(f"irds:{tsv_dataset}")
    assert qrels.name == tsv_dataset and qrels.source == f"irds:{tsv_dataset}"
    direct = metrics.read_qrels(str(tmp_path / "qrels.txt"))
    assert qrels.table.equals(direct.table)
    assert [f.kind for f in qrels.findings] == ["negative_grades"]


def test_queries_become_a_topics_frame(tsv_dataset):
    topics = irds.load_topics(tsv_dataset)           # a bare id works too
    assert topics.to_dict("list") == {"qid": ["1", "2"], "text": ["first query", "second query"]}
    assert topics.attrs["source"] == f"irds:{tsv_dataset}"


def test_trec_topics_keep_their_fields(ir_datasets, register, tmp_path):
    from ir_datasets.formats import TrecQueries

    name = register(TrecQueries(local(ir_datasets, tmp_path / "topics.txt", TOPICS)))
    topics = irds.load_topics(name)
    assert topics.to_dict("list") == {"qid": ["1"], "title": ["first title"], "description": ["first description"],
                                      "narrative": ["first narrative"]}
    with pytest.raises(MetricsError, match=f"^irds:{name}: the dataset has no qrels"):
        irds.load_qrels(name)


def test_a_collection_evaluates_like_files(tsv_dataset, tmp_path):
    qrels, topics = irds.load(tsv_dataset)
    run = {"1": {"d1": 2.0, "d2": 1.0}, "2": {"d3": 1.0}}
    assert metrics.evaluate(qrels, run, ["P@1"]).equals(metrics.evaluate(str(tmp_path / "qrels.txt"), run, ["P@1"]))
    assert len(topics) == 2


def test_dataset_objects_are_accepted(ir_datasets, tmp_path):
    dataset = ir_datasets.create_dataset(queries_tsv=str(tmp_path / "q.tsv"), qrels_trec=str(tmp_path / "r.txt"))
    (tmp_path / "q.tsv").write_bytes(QUERIES)
    (tmp_path / "r.txt").write_bytes(QRELS)
    assert len(irds.load_qrels(dataset)) == 4


def test_unreadable_files_are_one_line_errors(ir_datasets, register, tmp_path):
    from ir_datasets.formats import TrecQrels
    from ir_datasets.util import LocalDownload

    name = register(TrecQrels(LocalDownload(tmp_path / "absent.txt"), {}))
    with pytest.raises(MetricsError, match=r"ir_datasets could not read the qrels \(FileNotFoundError"):
        irds.load_qrels(name)


def test_unknown_dataset_and_missing_package(ir_datasets, monkeypatch):
    with pytest.raises(MetricsError) as info:
        irds.load_qrels("irds:no-such/dataset")
    assert str(info.value).startswith("irds:no-such/dataset: ir_datasets has no dataset 'no-such/dataset'")
    assert len(str(info.value).splitlines()) == 1
    monkeypatch.setitem(sys.modules, "ir_datasets", None)        # import ir_datasets now fails
    with pytest.raises(MetricsError, match="the ir_datasets package is not installed. pip install ir_datasets"):
        irds.load_topics("irds:msmarco-passage/dev/small")


def test_ids():
    assert irds.is_irds("irds:msmarco-passage/dev/small") and not irds.is_irds("qrels.txt")
    assert not irds.is_irds("irds:")
    assert irds.dataset_id("irds:msmarco-passage/dev/small") == irds.dataset_id("msmarco-passage/dev/small")
    with pytest.raises(MetricsError, match="no dataset id after irds:"):
        irds.load_qrels("irds:")


def test_irds_ids_where_a_qrels_path_is_taken(tsv_dataset, tmp_path, capsys):
    from metrics.cli import main

    run = tmp_path / "run.txt"
    run.write_text("1 Q0 d1 1 2.0 r\n1 Q0 d2 2 1.0 r\n2 Q0 d3 1 1.0 r\n")
    by_id = metrics.evaluate(f"irds:{tsv_dataset}", str(run), ["P@1"])
    assert by_id.equals(metrics.evaluate(str(tmp_path / "qrels.txt"), str(run), ["P@1"]))
    assert metrics.read_qrels(f"irds:{tsv_dataset}").source == f"irds:{tsv_dataset}"
    assert main(["eval", f"irds:{tsv_dataset}", str(run), "-m", "P@1"]) in (0, None)
    # q1: d1 (rel 1) first; q2: d3 (rel 2) first: P@1 = (1 + 1) / 2
    assert capsys.readouterr().out.split("\n")[-2].split() == ["P@1", "all", "1.000000"]
