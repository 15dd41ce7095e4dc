"""What runs get wrong: hard negatives, recall failures, and the training set of positives and
hard negatives with its exports (TSV triples, JSON lines)."""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ...ordering import offsets_of, positions
from ...ranking import Ranked
from .rows import as_frame, check_cut, check_depth, check_grade, check_runs, group, qrels_table, stack


def _candidates(runs, depth, min_grade, include_unjudged, *, per_query=None, queries=None) -> pa.Table:
    """Negative candidates: (query, document) pairs of some top ``depth`` that are judged
    non-relevant or, with ``include_unjudged``, unjudged and above all relevant documents in
    some system; best rank, systems and ranks count every system that ranks it in the top
    ``depth``. ``queries`` (bool per query) restricts them, ``per_query`` caps them."""
    rows = stack(runs, depth, min_grade)
    # a judgment belongs to (query, document), so every row of a candidate is selected here
    select = rows.judged & (rows.rel <= 0)
    if include_unjudged:
        select |= ~rows.judged

    def keep(groups):
        mask = groups["judged"] | groups["above"]
        return mask if queries is None else mask & queries(rows.qids)[groups["query"]]

    return group(rows, select, keep=keep, per_query=per_query)


def hard_negatives(runs: Mapping[str, Ranked], depth: int = 10, *, include_unjudged: bool = False,
                   min_grade: int = 1, rank_lists: bool = False) -> pd.DataFrame:
    """Judged non-relevant documents that some system ranks in its top ``depth``.

    Returns ``qid, docno, grade, judged, n_systems, best_rank, ranks`` (ranks:
    "system@rank, ..." in system order; with ``rank_lists``, the list ["system@rank", ...], which
    no comma in a run's name can blur) in the package's document order
    (metrics.analysis.judgments). With ``include_unjudged``, unjudged documents ranked above every
    relevant one (grade >= ``min_grade``) join them with ``judged`` False and grade <NA>.
    """
    table = _candidates(runs, check_depth(depth), check_grade(min_grade), include_unjudged)
    return as_frame(table, ["qid", "docno", "grade", "judged", "n_systems", "best_rank",
                            "ranks_list" if rank_lists else "ranks_text"])


def _positives(qrels, runs, depth, min_grade) -> pa.Table:
    """Judged documents with grade >= min_grade of the compared queries, with their best rank in the top depth."""
    rows = stack(runs, depth, min_grade)
    ranked = group(rows, rows.judged & (rows.rel >= min_grade))
    table = qrels_table(qrels)
    table = table.filter(pc.and_(pc.greater_equal(table["rel"], min_grade),
                                 pc.is_in(table["qid"], value_set=pa.array(rows.qids.tolist(), pa.string()))))
    # Acero joins carry no list columns: join on a row number, then take the columns by it
    keys = ranked.select(["qid", "docno"]).append_column("_row", pa.array(np.arange(ranked.num_rows), pa.int64()))
    joined = table.join(keys, keys=["qid", "docno"], join_type="left outer", use_threads=False)
    joined = joined.sort_by([("qid", "ascending"), ("rel", "descending"), ("docno", "ascending")])
    found = ranked.select(["best_rank", "n_systems", "ranks", "ranks_text"]).take(joined["_row"])
    return pa.table({
        "qid": joined["qid"], "docno": joined["docno"], "grade": joined["rel"],
        "best_rank": found["best_rank"], "n_systems": pc.fill_null(found["n_systems"], 0),
        "ranks": found["ranks"], "ranks_text": found["ranks_text"],
    })


def recall_failures(qrels, runs: Mapping[str, Ranked], depth: int = 10, *, min_grade: int = 1) -> pd.DataFrame:
    """Relevant documents (grade >= ``min_grade``) that no system ranks in its top ``depth``.

    Returns ``qid, docno, grade, best_rank`` where best_rank is the best rank at
    any depth (<NA>: no system retrieves it at all); by qid, grade (highest
    first), docno.
    """
    depth, min_grade = check_cut(depth), check_grade(min_grade)
    positives = _positives(qrels, runs, None, min_grade)
    missed = positives.filter(pc.or_kleene(pc.is_null(positives["best_rank"]),
                                     pc.greater(positives["best_rank"], depth)))
    return as_frame(missed, ["qid", "docno", "grade", "best_rank"])


@dataclass
class TrainingSet:
    """Positives and capped hard negatives per query, ready to export.

    Only queries with at least one positive and one negative are kept.
    ``positives``: ``qid, docno, grade, best_rank, n_systems, ranks`` (every
    judged document with grade >= min_grade; by grade, highest first, then
    docno). ``negatives``: ``qid, docno, grade, judged, n_systems, best_rank,
    ranks``, at most ``per_query`` per query in the package's document order (metrics.analysis.judgments).
    Ranks are within the top ``depth`` (<NA>: not ranked there).
    """

    positives: pa.Table
    negatives: pa.Table
    depth: int
    per_query: int
    min_grade: int
    include_unjudged: bool
    systems: list[str]

    @property
    def queries(self) -> list[str]:
        return list(dict.fromkeys(self.positives["qid"].to_pylist()))

    def frames(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        return (as_frame(self.positives, ["qid", "docno", "grade", "best_rank", "n_systems", "ranks_text"]),
                as_frame(self.negatives, ["qid", "docno", "grade", "judged", "n_systems", "best_rank", "ranks_text"]))

    def triples(self) -> pd.DataFrame:
        """``qid, positive_docno, negative_docno``: every positive of a query with each of its negatives.

        Order: query, positive (grade desc, docno), negative (document order).
        """
        table = self._triples()
        return table.to_pandas(types_mapper={pa.string(): pd.StringDtype()}.get)

    def _triples(self) -> pa.Table:
        pos_q = _query_codes(self.positives["qid"], self.queries)
        neg_q = _query_codes(self.negatives["qid"], self.queries)
        n_neg = np.bincount(neg_q, minlength=len(self.queries))
        neg_start = offsets_of(n_neg)[:-1]
        # every positive repeats once per negative of its query; both tables are sorted by query
        repeats = n_neg[pos_q]
        pos_rows = np.repeat(np.arange(len(pos_q)), repeats)
        neg_rows = np.repeat(neg_start[pos_q], repeats) + positions(offsets_of(repeats))
        return pa.table({
            "qid": self.positives["qid"].take(pa.array(pos_rows, pa.int64())),
            "positive_docno": self.positives["docno"].take(pa.array(pos_rows, pa.int64())),
            "negative_docno": self.negatives["docno"].take(pa.array(neg_rows, pa.int64())),
        })

    def to_tsv(self) -> str:
        """Triples as TSV: the header ``qid<TAB>positive_docno<TAB>negative_docno``, then one triple a line."""
        table = self._triples()
        body = pc.binary_join_element_wise(table["qid"], table["positive_docno"], table["negative_docno"], "\t")
        return "".join(line + "\n" for line in ["qid\tpositive_docno\tnegative_docno", *body.to_pylist()])

    def to_jsonl(self) -> str:
        """One JSON object per query: ``{"qid", "positives": [...], "negatives": [...]}``.

        A positive is ``{"docno", "grade", "best_rank", "ranks"}``; a negative
        ``{"docno", "grade", "judged", "best_rank", "n_systems", "ranks"}``, with
        ``ranks`` = {system: rank within the top depth}; ``grade`` is null for
        an unjudged negative, ``best_rank`` null for a positive no system ranks
        in the top depth.
        """
        positives = _by_query(self.positives, ("docno", "grade", "best_rank", "ranks"))
        negatives = _by_query(self.negatives, ("docno", "grade", "judged", "best_rank", "n_systems", "ranks"))
        lines = [json.dumps({"qid": qid, "positives": positives.get(qid, []), "negatives": negatives.get(qid, [])},
                            ensure_ascii=False)
                 for qid in self.queries]
        return "".join(line + "\n" for line in lines)


def _query_codes(qid: pa.ChunkedArray | pa.Array, queries: list[str]) -> np.ndarray:
    return pc.index_in(qid, value_set=pa.array(queries, pa.string())).to_numpy(zero_copy_only=False).astype(np.int64)


def _by_query(table: pa.Table, columns) -> dict[str, list[dict]]:
    """{qid: [row dicts]} in table order (serialisation only; the rows are the output)."""
    records = table.select(["qid", *columns]).to_pylist()
    out: dict[str, list[dict]] = {}
    for record in records:
        qid = record.pop("qid")
        if "ranks" in record:
            record["ranks"] = {item["system"]: item["rank"] for item in (record["ranks"] or [])}
        out.setdefault(qid, []).append(record)
    return out


def training_set(qrels, runs: Mapping[str, Ranked], *, depth: int = 100, per_query: int = 10, min_grade: int = 1,
                 include_unjudged: bool = False) -> TrainingSet:
    """Positives (grade >= ``min_grade``) and the ``per_query`` hardest negatives of every query.

    Negatives are the hard negatives of :func:`hard_negatives` at ``depth``
    (plus unjudged documents above every relevant one with
    ``include_unjudged``), in the package's document order (metrics.analysis.judgments), cut at
    ``per_query``. Documents with 0 < grade < ``min_grade`` are neither.
    """
    depth, min_grade = check_cut(depth), check_grade(min_grade)
    per_query = check_cut(per_query, "per_query")
    runs = check_runs(runs)
    positives = _positives(qrels, runs, depth, min_grade)
    with_positive = pc.unique(positives["qid"])

    def has_positive(qids: np.ndarray) -> np.ndarray:
        return pc.is_in(pa.array(qids.tolist(), pa.string()), value_set=with_positive).to_numpy(zero_copy_only=False)

    negatives = _candidates(runs, depth, min_grade, include_unjudged, per_query=per_query, queries=has_positive)
    positives = positives.filter(pc.is_in(positives["qid"], value_set=pc.unique(negatives["qid"])))
    return TrainingSet(positives=positives, negatives=negatives, depth=depth, per_query=per_query,
                       min_grade=min_grade, include_unjudged=include_unjudged, systems=list(runs))
