"""The workspace file's schema, and the steps that upgrade a file of an older schema to it.

:data:`SCHEMA` creates what a file lacks (every statement is ``IF NOT EXISTS``); the
``MIGRATE_n`` texts change what schema ``n`` kept otherwise, and :class:`metrics.store.Workspace`
runs them, in one transaction, on a file opened for writing. A file opened read-only keeps its
own layout (:func:`layout`), which the steps of :mod:`metrics.store.tables` read as it is.
"""
from __future__ import annotations

from dataclasses import dataclass

SCHEMA_VERSION = 4

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE SEQUENCE IF NOT EXISTS object_ids START 1;
CREATE SEQUENCE IF NOT EXISTS collection_ids START 1;
CREATE SEQUENCE IF NOT EXISTS link_ids START 1;
-- One row per stored run or qrels, unique per (kind, digest).
CREATE TABLE IF NOT EXISTS objects (
    id BIGINT PRIMARY KEY, kind VARCHAR NOT NULL, digest VARCHAR NOT NULL,
    n_lines BIGINT NOT NULL, n_queries BIGINT NOT NULL, findings VARCHAR NOT NULL,
    stored TIMESTAMP NOT NULL, n_bytes BIGINT, recipe VARCHAR);
CREATE TABLE IF NOT EXISTS collections (
    id BIGINT PRIMARY KEY, name VARCHAR NOT NULL, baseline VARCHAR, created TIMESTAMP NOT NULL);
-- An object as a collection sees it: its role there, the name and source file it was given.
CREATE TABLE IF NOT EXISTS links (
    id BIGINT PRIMARY KEY, collection_id BIGINT NOT NULL, object_id BIGINT NOT NULL,
    role VARCHAR NOT NULL, name VARCHAR NOT NULL, source VARCHAR NOT NULL, added TIMESTAMP NOT NULL);
-- A run's lines with its qids and tags as codes into run_keys (a run has a few thousand qids and
-- usually one tag over millions of lines). Compression is chosen per column: DuckDB's default
-- analysis of millions of unique docnos costs three times the insert for 15% less disk.
CREATE TABLE IF NOT EXISTS run_lines (
    object_id BIGINT NOT NULL, pos BIGINT NOT NULL USING COMPRESSION bitpacking,
    q INTEGER NOT NULL USING COMPRESSION rle, docno VARCHAR NOT NULL USING COMPRESSION uncompressed,
    score DOUBLE NOT NULL USING COMPRESSION alp, rank BIGINT NOT NULL USING COMPRESSION bitpacking,
    t INTEGER NOT NULL USING COMPRESSION rle);
-- The values behind run_lines' codes: key 'qid' (column q) or 'tag' (column t).
CREATE TABLE IF NOT EXISTS run_keys (
    object_id BIGINT NOT NULL, key VARCHAR NOT NULL, code INTEGER NOT NULL, value VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS qrels_lines (
    object_id BIGINT NOT NULL, pos BIGINT NOT NULL, qid VARCHAR NOT NULL, docno VARCHAR NOT NULL,
    rel BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS topics (
    collection_id BIGINT NOT NULL, pos BIGINT NOT NULL, qid VARCHAR NOT NULL, text VARCHAR);
CREATE TABLE IF NOT EXISTS docs (
    collection_id BIGINT NOT NULL, pos BIGINT NOT NULL, docno VARCHAR NOT NULL, title VARCHAR);
-- Names of shared (base) collections that this workspace hides: deleted, or renamed into its own copy.
CREATE TABLE IF NOT EXISTS hidden (name VARCHAR PRIMARY KEY);
"""

# Schema 1 lacked objects.n_bytes and the hidden table; the table statements above add the
# latter, these fill the former from the stored lines (the data-bytes formula in SQL).
MIGRATE_1 = """
ALTER TABLE objects ADD COLUMN IF NOT EXISTS n_bytes BIGINT;
UPDATE objects SET n_bytes = (SELECT coalesce(sum(strlen(qid) + strlen(docno) + strlen(tag) + 16), 0)
                              FROM run_lines WHERE object_id = objects.id) WHERE kind = 'run' AND n_bytes IS NULL;
UPDATE objects SET n_bytes = (SELECT coalesce(sum(strlen(qid) + strlen(docno) + 8), 0)
                              FROM qrels_lines WHERE object_id = objects.id) WHERE kind = 'qrels' AND n_bytes IS NULL;
"""

# Schema 2 lacked objects.recipe: how a fused run was made (JSON of metrics.analysis.fusion.Recipe).
MIGRATE_2 = "ALTER TABLE objects ADD COLUMN IF NOT EXISTS recipe VARCHAR;"

# Schema 3 kept qid and tag as text on every run line; the table statements above made run_keys,
# these move the lines into the coded layout (codes: the 0-based rank of the value, per run).
MIGRATE_3 = """
ALTER TABLE run_lines RENAME TO run_lines_3;
CREATE TABLE run_lines (
    object_id BIGINT NOT NULL, pos BIGINT NOT NULL USING COMPRESSION bitpacking,
    q INTEGER NOT NULL USING COMPRESSION rle, docno VARCHAR NOT NULL USING COMPRESSION uncompressed,
    score DOUBLE NOT NULL USING COMPRESSION alp, rank BIGINT NOT NULL USING COMPRESSION bitpacking,
    t INTEGER NOT NULL USING COMPRESSION rle);
INSERT INTO run_keys SELECT object_id, 'qid', (dense_rank() OVER (PARTITION BY object_id ORDER BY qid)) - 1, qid
    FROM (SELECT DISTINCT object_id, qid FROM run_lines_3);
INSERT INTO run_keys SELECT object_id, 'tag', (dense_rank() OVER (PARTITION BY object_id ORDER BY tag)) - 1, tag
    FROM (SELECT DISTINCT object_id, tag FROM run_lines_3);
INSERT INTO run_lines SELECT l.object_id, l.pos, kq.code, l.docno, l.score, l.rank, kt.code FROM run_lines_3 l
    JOIN run_keys kq ON kq.object_id = l.object_id AND kq.key = 'qid' AND kq.value = l.qid
    JOIN run_keys kt ON kt.object_id = l.object_id AND kt.key = 'tag' AND kt.value = l.tag
    ORDER BY l.object_id, l.pos;
DROP TABLE run_lines_3;
"""

@dataclass(frozen=True)
class Layout:
    """The columns a file's schema has, where older files differ: ``objects.recipe`` (schema 3) and
    ``run_lines`` with codes (schema 4). A file opened for writing is upgraded to :data:`CURRENT`;
    one opened read-only keeps its own (:func:`layout`, read once per opening, never per listing)."""

    recipe: bool = True
    coded: bool = True


CURRENT = Layout()


def layout(cur) -> Layout:
    """The file's :class:`Layout`, from the catalogue (one query)."""
    found = set(cur.execute(
        "SELECT table_name || '.' || column_name FROM information_schema.columns "
        "WHERE table_catalog = current_database() AND table_name IN ('objects', 'run_lines') "
        "AND column_name IN ('recipe', 'q')").fetchall())
    return Layout(recipe=("objects.recipe",) in found, coded=("run_lines.q",) in found)


def coded_runs(cur) -> bool:
    """Whether run_lines holds codes (schema 4); False in a file of schema 3."""
    return layout(cur).coded
