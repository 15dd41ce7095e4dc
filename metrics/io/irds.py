"""Qrels and topics of an ir_datasets collection, by dataset id (``msmarco-passage/dev/small``).

``irds:ID`` strings (ir_measures' convention) name a dataset wherever a qrels path is taken.
ir_datasets downloads a dataset's files on first use into its home folder
(``IR_DATASETS_HOME``, default ``~/.ir_datasets``); reading the qrels or queries of a
dataset whose files are there already needs no network. A missing package, an unknown id
or a dataset without qrels or queries is a one-line :class:`MetricsError`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import MetricsError
from .keys import canonical_digest
from .tables import frame_to_table, from_table
from .validate import QRELS, Origin, Qrels

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PREFIX", "is_irds", "dataset_id", "load_qrels", "load_topics", "load"]

PREFIX = "irds:"


def is_irds(value) -> bool:
    """True for a string ``irds:ID``."""
    return isinstance(value, str) and value.startswith(PREFIX) and len(value) > len(PREFIX)


def dataset_id(value: str) -> str:
    """``irds:msmarco-passage/dev/small`` -> ``msmarco-passage/dev/small`` (a bare id is returned as is)."""
    return str(value).strip().removeprefix(PREFIX)


def load_qrels(dataset) -> Qrels:
    """The dataset's judgments as :class:`metrics.io.Qrels` (named after the id, source ``irds:ID``).

    ``dataset``: an id, ``irds:ID``, or an ir_datasets Dataset object.
    """
    import pandas as pd
    ds, label = _dataset(dataset)
    if not ds.has_qrels():
        raise MetricsError("the dataset has no qrels", source=label,
                           fix="pick a subset with judgments (for example msmarco-passage/dev/small)")
    records = _iterate(ds.qrels_iter, label, "qrels")
    if not records:
        raise MetricsError("the dataset's qrels are empty", source=label, fix="pick a subset with judgments")
    frame = pd.DataFrame({"qid": [str(r.query_id) for r in records], "docno": [str(r.doc_id) for r in records],
                          "rel": [int(r.relevance) for r in records]})
    return from_table(frame_to_table(frame, label), QRELS, label[len(PREFIX):], Origin(label), canonical_digest,
                      "error")


def load_topics(dataset) -> pd.DataFrame:
    """The dataset's queries as a topics frame (``qid`` and one column per text field of its query type)."""
    import pandas as pd

    from .topics import read_topics
    ds, label = _dataset(dataset)
    if not ds.has_queries():
        raise MetricsError("the dataset has no queries", source=label, fix="pick a subset with queries")
    records = _iterate(ds.queries_iter, label, "queries")
    if not records:
        raise MetricsError("the dataset's queries are empty", source=label, fix="pick a subset with queries")
    names = [f for f in type(records[0])._fields if f != "query_id"]
    text = [f for f in names if isinstance(getattr(records[0], f), str)]   # tuples (subtopics) stay out
    frame = pd.DataFrame({"qid": [str(r.query_id) for r in records],
                          **{f: [getattr(r, f) for r in records] for f in text}})
    return read_topics(frame, source=label)


def load(dataset) -> tuple[Qrels, pd.DataFrame]:
    """``(qrels, topics)`` of a dataset: what a collection is made from."""
    return load_qrels(dataset), load_topics(dataset)


def _dataset(dataset):
    """(ir_datasets Dataset, ``irds:ID`` label)."""
    if not isinstance(dataset, str):
        if hasattr(dataset, "has_qrels") and hasattr(dataset, "has_queries"):
            return dataset, PREFIX + str(getattr(dataset, "dataset_id", lambda: "dataset")())
        raise MetricsError(f"expected an ir_datasets id, got a {type(dataset).__name__}",
                           fix="give an id such as irds:msmarco-passage/dev/small")
    ident = dataset_id(dataset)
    label = PREFIX + ident
    if not ident:
        raise MetricsError("no dataset id after irds:", source=dataset, fix="e.g. irds:msmarco-passage/dev/small")
    try:
        import ir_datasets
    except ImportError:
        raise MetricsError("the ir_datasets package is not installed", source=label,
                           fix="pip install ir_datasets, or give a qrels file") from None
    try:
        return ir_datasets.load(ident), label
    except KeyError:
        raise MetricsError(f"ir_datasets has no dataset {ident!r}", source=label,
                           fix="see https://ir-datasets.com for the ids (e.g. msmarco-passage/dev/small)") from None


def _iterate(items, label: str, what: str) -> list:
    try:
        return list(items())
    except MetricsError:
        raise
    except Exception as exc:  # noqa: BLE001 - ir_datasets raises many kinds (network, checksum, format)
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        reason = type(exc).__name__ + (f": {detail}" if detail else "")
        raise MetricsError(f"ir_datasets could not read the {what} ({reason})",
                           source=label, fix="check the network or the files under IR_DATASETS_HOME") from None
