"""Interchange with the peers: ranx ``Run``/``Qrels`` objects and their JSON, trectools frames,
``{qid: {docno: value}}`` dicts, and TREC text.

Reading goes through :func:`metrics.io.read_run` / :func:`metrics.io.read_qrels`, which take
every one of these shapes (:func:`unwrap` turns a trectools ``TrecRun``/``TrecQrel`` into its
frame). Writing starts from a parsed :class:`Run` or :class:`Qrels`; rows keep the table's
order (a fused run's is score order).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ..errors import MetricsError
from .validate import Qrels, Run

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TRECTOOLS_QRELS", "TRECTOOLS_RUN", "to_dict", "to_ranx", "to_trec", "to_trectools", "unwrap",
           "write_json"]

TRECTOOLS_RUN = ("query", "q0", "docid", "rank", "score", "system")
"""Columns of trectools' ``TrecRun.run_data``."""
TRECTOOLS_QRELS = ("query", "q0", "docid", "rel")
"""Columns of trectools' ``TrecQrel.qrels_data``."""


def unwrap(src):
    """The frame inside a trectools ``TrecRun`` (``run_data``) or ``TrecQrel`` (``qrels_data``);
    anything else is returned as is."""
    if type(src).__module__.startswith("trectools"):
        import pandas as pd  # trectools holds pandas frames: it is imported already

        for attr in ("run_data", "qrels_data"):
            frame = getattr(src, attr, None)
            if isinstance(frame, pd.DataFrame):
                return frame
    return src


def _value_column(obj) -> str:
    if isinstance(obj, Run):
        return "score"
    if isinstance(obj, Qrels):
        return "rel"
    raise MetricsError(f"expected a parsed run or qrels, got a {type(obj).__name__}",
                       fix="read it first with metrics.io.read_run or read_qrels")


def to_dict(obj) -> dict:
    """``{qid: {docno: score}}`` of a run (``{qid: {docno: rel}}`` of qrels), queries in first-seen
    order, documents in table order (ranx's and pytrec_eval's input)."""
    value = _value_column(obj)
    t = obj.table
    qids = t["qid"].combine_chunks() if isinstance(t["qid"], pa.ChunkedArray) else t["qid"]
    encoded = pc.dictionary_encode(qids)
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(encoded.dictionary) + 1))
    docnos = np.asarray(t["docno"].to_numpy(zero_copy_only=False), dtype=object)[order]
    values = t[value].to_numpy()[order].tolist()
    return {q: dict(zip(docnos[a:b].tolist(), values[a:b]))
            for q, a, b in zip(encoded.dictionary.to_pylist(), bounds[:-1], bounds[1:])}


def to_ranx(obj):
    """A ranx ``Run`` (named like the run) or ``Qrels``.

    The frame handed to ``from_df`` has object-dtype columns: ranx builds numba typed dicts
    from them, and pandas 3's string dtype is refused there.
    """
    import pandas as pd
    import ranx  # optional: only this conversion needs it

    value = _value_column(obj)
    t = obj.table
    frame = pd.DataFrame({"q_id": pd.Series(t["qid"].to_numpy(zero_copy_only=False), dtype=object),
                          "doc_id": pd.Series(t["docno"].to_numpy(zero_copy_only=False), dtype=object),
                          "score": t[value].to_numpy()})
    if value == "score":
        return ranx.Run.from_df(frame, q_id_col="q_id", doc_id_col="doc_id", score_col="score", name=obj.name)
    return ranx.Qrels.from_df(frame, q_id_col="q_id", doc_id_col="doc_id", score_col="score")


def to_trectools(obj) -> pd.DataFrame:
    """trectools' frame: ``TrecRun.run_data`` (:data:`TRECTOOLS_RUN`) for a run, ``TrecQrel.qrels_data``
    (:data:`TRECTOOLS_QRELS`) for qrels; assign it to the object's attribute to get one."""
    import pandas as pd
    value = _value_column(obj)
    t = obj.table
    n = t.num_rows
    columns = {"query": t["qid"].to_numpy(zero_copy_only=False),
               "q0": np.full(n, "Q0" if value == "score" else "0", dtype=object),
               "docid": t["docno"].to_numpy(zero_copy_only=False)}
    if value == "score":
        columns |= {"rank": t["rank"].to_numpy(), "score": t["score"].to_numpy(),
                    "system": t["tag"].to_numpy(zero_copy_only=False)}
    else:
        columns["rel"] = t["rel"].to_numpy()
    return pd.DataFrame(columns)


def to_trec(obj, dest) -> None:
    """Write TREC text: ``qid Q0 docno rank score tag`` for a run (scores in shortest round-trip
    form, so reading it back gives the same doubles), ``qid 0 docno rel`` for qrels.

    ``dest``: a path or a binary file object. Rows are written in the table's order.
    """
    value = _value_column(obj)
    t = obj.table
    n = t.num_rows
    if value == "score":
        out = pa.table({"qid": t["qid"], "q0": pa.repeat(pa.scalar("Q0"), n), "docno": t["docno"],
                        "rank": t["rank"], "score": pc.cast(t["score"], pa.string()), "tag": t["tag"]})
    else:
        out = pa.table({"qid": t["qid"], "iter": pa.repeat(pa.scalar("0"), n), "docno": t["docno"],
                        "rel": t["rel"]})
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    pacsv.write_csv(out, str(dest) if isinstance(dest, Path) else dest, write_options=options)


def write_json(obj, dest) -> None:
    """Write ``{qid: {docno: value}}`` JSON: the format of ranx's ``Run.save``/``Qrels.save`` (.json)."""
    text = json.dumps(to_dict(obj))
    if isinstance(dest, (str, Path)):
        Path(dest).write_text(text, encoding="utf-8")
    else:
        dest.write(text.encode("utf-8"))
