"""The workspace's tables: their schema, and the steps that read and write them.

Every function here runs on a DuckDB cursor inside a transaction that
:class:`metrics.store.Workspace` opened; none commits. They are module-level so
that a test can make any single step fail and check that nothing was changed.

The size of stored data is counted in *data bytes*, a formula rather than a file
size, so that a quota is exact and can be checked before anything is written:

    run line:   len(qid) + len(docno) + len(tag) + 16   (score and rank, 8 bytes each)
    qrels line: len(qid) + len(docno) + 8               (grade)
    topic/doc:  len(key) + len(text) + 8                (position)
    link:       len(name) + len(source) + 64            (a run or qrels as a collection names it)
    collection: len(name) + 64

with lengths in UTF-8 bytes. An object stored once and linked from several
collections counts its lines once and each link; so linking one stored qrels into
a thousand collections is not free either. Names are at most 200 characters,
without control characters or bidirectional overrides.

The schema and its migrations are in :mod:`metrics.store.schema` (their names are importable from
here too); a step that fails midway is tested against the same schema text. Names, digests, findings
and times, which need no cursor, are in :mod:`metrics.store.values` (called through that module, so
that a test patches them there).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import io
from ..errors import MetricsError
from ..ordering import run_heads
from . import schema, values
from .schema import CURRENT, Layout

if TYPE_CHECKING:  # pandas is imported where a frame is read or made: evaluating a stored run needs none
    import pandas as pd

# The schema's names, importable from here too (metrics.store.workspace opens and upgrades files with them).
SCHEMA_VERSION, SCHEMA = schema.SCHEMA_VERSION, schema.SCHEMA
MIGRATE_1, MIGRATE_2, MIGRATE_3 = schema.MIGRATE_1, schema.MIGRATE_2, schema.MIGRATE_3
layout, coded_runs = schema.layout, schema.coded_runs

LINES = {"run": ("run_lines", io.RUN_SCHEMA), "qrels": ("qrels_lines", io.QRELS_SCHEMA)}
_FIXED_BYTES = {"run": 16, "qrels": 8}
LINK_BYTES = 64
_TEXT_COLUMNS = {"run": ("qid", "docno", "tag"), "qrels": ("qid", "docno")}


@dataclass(frozen=True)
class StoredInfo:
    """A stored run or qrels as one collection sees it.

    ``id`` names the stored content within one workspace file (equal ids, equal rows);
    ``digest`` names it everywhere. ``uploaded`` is when it was added to the collection, in UTC.
    """

    id: int
    name: str
    source: str
    digest: str
    uploaded: datetime
    n_lines: int
    n_queries: int
    findings: list = field(default_factory=list, compare=False)
    recipe: dict | None = field(default=None, compare=False)


def one(cur, sql: str, params=None) -> tuple | None:
    """The first row of a query, or None; the result is read to the end (DuckDB >= 2 refuses
    other work on a cursor while a result is pending)."""
    rows = cur.execute(sql, params).fetchall()
    return rows[0] if rows else None


def row(cur, sql: str, params=None) -> tuple:
    """The row of a query that returns one by construction (an aggregate, a sequence's next value)."""
    found = one(cur, sql, params)
    if found is None:
        raise MetricsError("the workspace file lacks a row it should hold", source="workspace",
                           fix="reload the page; if this stays, start a new workspace")
    return found


# -- objects (stored runs and qrels) ---------------------------------------------------


def stored_id(cur, kind: str, digest: str) -> int | None:
    row = one(cur, "SELECT id FROM objects WHERE kind = ? AND digest = ?", [kind, digest])
    return None if row is None else row[0]


def store_object(cur, kind: str, obj, recipe: dict | None = None) -> int:
    """Id of the stored copy of a run or qrels (``kind``), inserting its rows if new; ``recipe``
    (a fused run's, JSON-able) is kept with the content."""
    found = stored_id(cur, kind, values.digest(obj))
    if found is not None:
        return found
    lines, schema = LINES[kind]
    table = values.conform(obj.table, schema, obj.source)
    object_id = row(cur, "SELECT nextval('object_ids')")[0]
    n = table.num_rows
    incoming = table.append_column("pos", pa.array(np.arange(n, dtype=np.int64)))
    columns = ", ".join(schema.names)
    if kind == "run":
        incoming, columns = _coded_run(cur, object_id, incoming), "q, docno, score, rank, t"
    insert_rows(cur, lines, f"pos, {columns}", incoming, object_id)
    n_queries = row(cur, "SELECT count(*) FROM run_keys WHERE object_id = ? AND key = 'qid'", [object_id])[0] \
        if kind == "run" else pc.count_distinct(table.column("qid")).as_py()
    cur.execute("INSERT INTO objects (id, kind, digest, n_lines, n_queries, findings, stored, n_bytes, recipe) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [object_id, kind, values.digest(obj), n, n_queries, values.findings_to_json(obj.findings),
                 values.now(),
                 data_bytes(kind, table), None if recipe is None else json.dumps(recipe, sort_keys=True)])
    return object_id


_CODED = (("qid", "q"), ("tag", "t"))


def _coded_run(cur, object_id: int, table: pa.Table) -> pa.Table:
    """The run's lines with qid and tag replaced by codes (columns q, t), their values stored in run_keys."""
    columns = {"pos": table.column("pos"), "docno": table.column("docno"), "score": table.column("score"),
               "rank": table.column("rank")}
    for key, column in _CODED:
        text = table.column(key).combine_chunks()
        # Runs come in blocks of one qid (and one tag): encode the first value of each block only.
        heads, lengths = run_heads(text)
        coded = pc.dictionary_encode(text.take(pa.array(heads)))
        values = coded.dictionary
        # codes are the values' ranks, so that a migrated file and a new one store the same codes
        order = pc.sort_indices(values).to_numpy()
        rank_of = np.empty(len(order), dtype=np.int32)
        rank_of[order] = np.arange(len(order), dtype=np.int32)
        head_codes = rank_of[coded.indices.to_numpy(zero_copy_only=False)]
        columns[column] = pa.array(np.repeat(head_codes, lengths))
        keys = pa.table({"code": pa.array(np.arange(len(order), dtype=np.int32)), "value": values.take(order)})
        cur.register("incoming_keys", keys)
        try:
            cur.execute("INSERT INTO run_keys SELECT $id, $key, code, value FROM incoming_keys",
                        {"id": object_id, "key": key})
        finally:
            cur.unregister("incoming_keys")
    return pa.table(columns)


def data_bytes(kind: str, table: pa.Table) -> int:
    """Data bytes of a run or qrels table (the formula in the module docstring)."""
    text = sum(pc.sum(pc.binary_length(table.column(c))).as_py() or 0 for c in _TEXT_COLUMNS[kind])
    return int(text + _FIXED_BYTES[kind] * table.num_rows)


def usage(cur) -> tuple[int, int]:
    """(data bytes, number of runs) that the workspace holds."""
    parts = ["SELECT coalesce(sum(n_bytes), 0) FROM objects",
             f"SELECT coalesce(sum(strlen(name) + strlen(source) + {LINK_BYTES}), 0) FROM links",
             f"SELECT coalesce(sum(strlen(name) + {LINK_BYTES}), 0) FROM collections"]
    parts += [f"SELECT coalesce(sum(strlen({key}) + coalesce(strlen({value}), 0) + 8), 0) FROM {what}"
              for what, (key, value, _) in values.EXTRAS.items()]
    total = sum(row(cur, sql)[0] for sql in parts)
    runs = row(cur, "SELECT count(*) FROM links WHERE role = 'run'")[0]
    return int(total), int(runs)


@dataclass(frozen=True)
class Parts:
    """What a workspace holds, named as a copy of it in another file would name it: stored objects
    by (kind, digest), links by (collection, role, digest) (a renamed link is still the same
    content in the same collection), collection names, and the data
    bytes of each collection's topics and docs by (collection, table)."""

    objects: frozenset = frozenset()
    links: frozenset = frozenset()
    collections: frozenset = frozenset()
    extras: dict = field(default_factory=dict)


def _link_rows(cur) -> list[tuple]:
    return cur.execute("SELECT c.name, l.role, o.digest, strlen(l.name) + strlen(l.source) "
                       "FROM links l JOIN collections c ON c.id = l.collection_id "
                       "JOIN objects o ON o.id = l.object_id").fetchall()


def _extra_bytes(cur) -> dict:
    found = {}
    for what, (key, value, _) in values.EXTRAS.items():
        for name, n in cur.execute(f"SELECT c.name, sum(strlen({key}) + coalesce(strlen({value}), 0) + 8) "
                                   f"FROM {what} x JOIN collections c ON c.id = x.collection_id "
                                   "GROUP BY c.name").fetchall():
            found[name, what] = int(n)
    return found


def parts(cur) -> Parts:
    """The :class:`Parts` of the workspace."""
    return Parts(objects=frozenset(cur.execute("SELECT kind, digest FROM objects").fetchall()),
                 links=frozenset(row[:3] for row in _link_rows(cur)),
                 collections=frozenset(collection_names(cur)), extras=_extra_bytes(cur))


def inherited(cur, base: Parts) -> tuple[int, int]:
    """(data bytes, runs) of the rows of this workspace that are copies of ``base``'s (the shared
    samples copied on write): a quota bounds what a visitor added, not what they were given."""
    total = sum(int(n or 0) for kind, digest_, n in cur.execute("SELECT kind, digest, n_bytes FROM objects").fetchall()
                if (kind, digest_) in base.objects)
    runs = 0
    for row in _link_rows(cur):
        if row[:3] in base.links:
            total += row[3] + LINK_BYTES
            runs += row[1] == "run"
    total += sum(len(name.encode()) + LINK_BYTES for name in collection_names(cur) if name in base.collections)
    total += sum(min(n, base.extras.get(key, 0)) for key, n in _extra_bytes(cur).items())
    return total, runs


def collect_garbage(cur, object_ids) -> None:
    """Delete the rows of those objects that no collection links any more."""
    if not object_ids:
        return
    ids = sorted(set(int(i) for i in object_ids))
    marks = ", ".join("?" * len(ids))
    orphans = [r[0] for r in cur.execute(
        f"SELECT id FROM objects WHERE id IN ({marks}) AND id NOT IN (SELECT object_id FROM links)",
        ids).fetchall()]
    if not orphans:
        return
    marks = ", ".join("?" * len(orphans))
    for table in ("run_lines", "run_keys", "qrels_lines", "objects"):
        column = "id" if table == "objects" else "object_id"
        cur.execute(f"DELETE FROM {table} WHERE {column} IN ({marks})", orphans)


def fetch_lines(cur, kind: str, object_id: int, layout: Layout = CURRENT) -> pa.Table:
    lines, schema = LINES[kind]
    if kind == "run" and layout.coded:
        return _fetch_coded_run(cur, object_id)
    rel = cur.sql(f"SELECT {', '.join(schema.names)} FROM {lines} WHERE object_id = $id{order(cur)}",
                  params={"id": object_id})
    table = arrow(rel)
    return table if table.schema.equals(schema) else table.cast(schema)


def _fetch_coded_run(cur, object_id: int) -> pa.Table:
    rel = cur.sql(f"SELECT q, docno, score, rank, t FROM run_lines WHERE object_id = $id{order(cur)}",
                  params={"id": object_id})
    coded = arrow(rel)
    columns = {}
    for key, column in _CODED:
        keys = arrow(cur.sql("SELECT value FROM run_keys WHERE object_id = $id AND key = $key ORDER BY code",
                             params={"id": object_id, "key": key})).column("value").combine_chunks()
        columns[key] = keys.take(coded.column(column))
    table = pa.table({"qid": columns["qid"], "docno": coded.column("docno"), "score": coded.column("score"),
                      "rank": coded.column("rank"), "tag": columns["tag"]})
    schema = io.RUN_SCHEMA
    return table if table.schema.equals(schema) else table.cast(schema)


def order(cur) -> str:
    """Rows come back in insertion order unless DuckDB was told it need not keep it."""
    keep = row(cur, "SELECT current_setting('preserve_insertion_order')")[0]
    return "" if keep in (True, "true") else " ORDER BY pos"


def arrow(rel) -> pa.Table:
    fetch = getattr(rel, "to_arrow_table", None) or rel.fetch_arrow_table  # duckdb >= 1.4 / older
    return fetch()


# -- links and collections -------------------------------------------------------------


def link(cur, collection_id: int, role: str, object_id: int, name: str, source: str,
         added: datetime | None = None) -> None:
    cur.execute("INSERT INTO links VALUES (nextval('link_ids'), ?, ?, ?, ?, ?, ?)",
                [collection_id, object_id, role, name, source or "", added or values.now()])


def links(cur, cid: int, role: str) -> list[tuple]:
    """(object id, name, source, added, digest) of the collection's links in ``role``, oldest first."""
    return cur.execute("""
        SELECT l.object_id, l.name, l.source, l.added, o.digest FROM links l JOIN objects o ON o.id = l.object_id
        WHERE l.collection_id = ? AND l.role = ? ORDER BY l.id""", [cid, role]).fetchall()


def ranked_keys(cur) -> set[tuple[str, str, str | None]]:
    """(run, qrels, proxy) digests that the ranked cache may hold: every run of a collection with
    its qrels, and with its proxy judgments too where it has them (proxy None: without)."""
    rows = cur.execute("""
        SELECT r.digest, q.digest, p.digest FROM links lr JOIN objects r ON r.id = lr.object_id
        JOIN links lq ON lq.collection_id = lr.collection_id AND lq.role = 'qrels' JOIN objects q ON q.id = lq.object_id
        LEFT JOIN links lp ON lp.collection_id = lr.collection_id AND lp.role = 'proxy'
        LEFT JOIN objects p ON p.id = lp.object_id
        WHERE lr.role = 'run'""").fetchall()
    return {(r, q, None) for r, q, _ in rows} | {(r, q, p) for r, q, p in rows if p is not None}


def load_judgments(cur, cid: int, role: str) -> io.Qrels | None:
    row = one(cur, """
        SELECT l.object_id, l.name, l.source, o.digest, o.findings
        FROM links l JOIN objects o ON o.id = l.object_id
        WHERE l.collection_id = ? AND l.role = ?""", [cid, role])
    if row is None:
        return None
    object_id, name, source, digest_, findings = row
    return io.Qrels(fetch_lines(cur, "qrels", object_id), name, source, digest_, values.findings_from_json(findings))


def load_run(cur, cid: int, name: str, layout: Layout = CURRENT) -> io.Run | None:
    row = one(cur, """
        SELECT l.object_id, l.name, l.source, o.digest, o.findings
        FROM links l JOIN objects o ON o.id = l.object_id
        WHERE l.collection_id = ? AND l.role = 'run' AND l.name = ?""", [cid, name])
    if row is None:
        return None
    object_id, name, source, digest_, findings = row
    return io.Run(fetch_lines(cur, "run", object_id, layout), name, source, digest_,
                  values.findings_from_json(findings))


def infos(cur, *, role: str, collection_id: int | None = None, name: str | None = None,
          layout: Layout = CURRENT) -> list[tuple[StoredInfo, int]]:
    """(info, collection id) of the links in ``role``, optionally of one collection / one name
    (``layout``: the file's, for a read-only file of an older schema)."""
    where: list[str] = ["l.role = ?"]
    params: list[object] = [role]
    if collection_id is not None:
        where.append("l.collection_id = ?")
        params.append(collection_id)
    if name is not None:
        where.append("l.name = ?")
        params.append(name)
    rows = cur.execute(f"""
        SELECT o.id, l.name, l.source, o.digest, l.added, o.n_lines, o.n_queries, o.findings, l.collection_id,
               {"o.recipe" if layout.recipe else "NULL"}
        FROM links l JOIN objects o ON o.id = l.object_id
        WHERE {' AND '.join(where)} ORDER BY l.id""", params).fetchall()
    return [(StoredInfo(id=oid, name=n, source=src, digest=dg, uploaded=values.utc(added), n_lines=lines,
                        n_queries=queries, findings=values.findings_from_json(findings),
                        recipe=None if recipe is None else json.loads(recipe)), cid)
            for oid, n, src, dg, added, lines, queries, findings, cid, recipe in rows]


def linked(cur, cid: int, role: str, kind: str, digest_: str) -> StoredInfo | None:
    """The collection's entry in ``role`` holding content ``digest_``, if any."""
    row = one(cur, """
        SELECT l.name FROM links l JOIN objects o ON o.id = l.object_id
        WHERE l.collection_id = ? AND l.role = ? AND o.kind = ? AND o.digest = ?""", [cid, role, kind, digest_])
    if row is None:
        return None
    return infos(cur, role=role, collection_id=cid, name=row[0])[0][0]


def collection_id(cur, name: str) -> int | None:
    row = one(cur, "SELECT id FROM collections WHERE name = ?", [name])
    return None if row is None else row[0]


def collection_names(cur) -> list[str]:
    return [r[0] for r in cur.execute("SELECT name FROM collections ORDER BY id").fetchall()]


def create_collection(cur, name: str, qrels, proxy, topics: pa.Table | None, docs: pa.Table | None,
                      created: datetime | None = None) -> int:
    """Insert a collection around its judgments, topics and docs; its id."""
    cid = row(cur, "SELECT nextval('collection_ids')")[0]
    cur.execute("INSERT INTO collections VALUES (?, ?, NULL, ?)", [cid, name, created or values.now()])
    link(cur, cid, "qrels", store_object(cur, "qrels", qrels), qrels.name, qrels.source)
    if proxy is not None:
        link(cur, cid, "proxy", store_object(cur, "qrels", proxy), proxy.name, proxy.source)
    if topics is not None:
        insert_extra(cur, "topics", cid, topics)
    if docs is not None:
        insert_extra(cur, "docs", cid, docs)
    return cid


def drop_collection(cur, cid: int) -> list[int]:
    """Delete a collection, its links, topics and docs; the ids of the objects it linked
    (for :func:`collect_garbage` once nothing else may link them again)."""
    objects = [r[0] for r in cur.execute("SELECT object_id FROM links WHERE collection_id = ?", [cid]).fetchall()]
    cur.execute("DELETE FROM links WHERE collection_id = ?", [cid])
    cur.execute("DELETE FROM topics WHERE collection_id = ?", [cid])
    cur.execute("DELETE FROM docs WHERE collection_id = ?", [cid])
    cur.execute("DELETE FROM collections WHERE id = ?", [cid])
    return objects


def hidden(cur) -> set[str]:
    return {r[0] for r in cur.execute("SELECT name FROM hidden").fetchall()}


def hide(cur, name: str) -> None:
    cur.execute("INSERT INTO hidden VALUES (?) ON CONFLICT DO NOTHING", [name])


def unhide(cur, name: str) -> None:
    cur.execute("DELETE FROM hidden WHERE name = ?", [name])


def run_link(cur, cid: int, collection: str, name: str) -> int:
    row = one(cur, "SELECT id FROM links WHERE collection_id = ? AND role = 'run' AND name = ?", [cid, name])
    if row is None:
        raise values.no_run(collection, name)
    return row[0]


def run_names(cur, cid: int) -> set[str]:
    return {r[0] for r in cur.execute(
        "SELECT name FROM links WHERE collection_id = ? AND role = 'run'", [cid]).fetchall()}


# -- topics and docs -------------------------------------------------------------------


def insert_extra(cur, what: str, cid: int, table: pa.Table) -> None:
    key, value, _ = values.EXTRAS[what]
    incoming = table.append_column("pos", pa.array(np.arange(table.num_rows, dtype=np.int64)))
    insert_rows(cur, what, f"pos, {key}, {value}", incoming, cid)


def insert_rows(cur, target: str, columns: str, incoming: pa.Table, owner: int) -> None:
    """``INSERT INTO target SELECT owner, columns FROM incoming``: the Arrow table is registered
    with DuckDB for the statement only (no copy through Python rows)."""
    view = f"incoming_{target}"
    cur.register(view, incoming)
    try:
        cur.execute(f"INSERT INTO {target} SELECT $id, {columns} FROM {view}", {"id": owner})
    finally:
        cur.unregister(view)


def load_extra(cur, what: str, cid: int) -> pd.DataFrame:
    key, value, _ = values.EXTRAS[what]
    rel = cur.sql(f"SELECT {key}, {value} FROM {what} WHERE collection_id = $id{order(cur)}", params={"id": cid})
    return arrow(rel).to_pandas()
