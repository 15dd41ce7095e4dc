"""metrics.io.keys: content digests, string hashes and exact duplicate detection."""
from __future__ import annotations

import hashlib
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from metrics import io
from metrics.io import keys
from tests.metrics.io.helpers import RUN, fails


def test_digests():
    assert io.read_run(RUN).digest == hashlib.sha256(RUN).hexdigest()
    frame = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, 2.0]})
    first = io.read_run(frame).digest
    assert re.fullmatch("[0-9a-f]{64}", first)
    assert io.read_run(frame.copy()).digest == first
    assert io.read_run({"1": {"a": 1.0, "b": 2.0}}).digest == first
    changed = frame.assign(score=[1.0, 2.5])
    assert io.read_run(changed).digest != first
    assert io.read_qrels(frame.rename(columns={"score": "rel"})).digest != first


def test_duplicates_match_pandas_on_random_runs():
    rng = np.random.default_rng(7)
    n = 20000
    qid = rng.integers(0, 50, n).astype(str)
    docno = np.char.add("doc-", rng.integers(0, 3000, n).astype(str))
    frame = pd.DataFrame({"qid": qid, "docno": docno, "score": rng.random(n)})
    expected = frame.duplicated(["qid", "docno"], keep="first").to_numpy()
    assert expected.sum() > 100
    run = io.read_run(frame, on_duplicate="first")
    assert len(run) == n - expected.sum()
    assert run.table["docno"].to_pylist() == frame.loc[~expected, "docno"].tolist()
    assert [f.count for f in run.findings if f.kind == "duplicates"] == [int(expected.sum())]


@pytest.mark.parametrize("sort_rows", [1 << 18, 7, 1])
def test_duplicates_in_query_blocks_match_pandas(monkeypatch, sort_rows):
    # Queries one after another, of many lengths (one of them every other query's), sorted block
    # by block: the same rows as pandas finds, wherever in its block a repeat lies. The blocks are
    # gathered a few at a time, or taken in place as long blocks (``sort_rows``).
    monkeypatch.setattr(keys, "_SORT_ROWS", sort_rows)
    rng = np.random.default_rng(11)
    lengths = np.where(rng.random(300) < 0.5, 40, rng.integers(1, 120, 300))
    qid = np.repeat([f"q{i}" for i in range(len(lengths))], lengths)
    docno = np.char.add("doc-", rng.integers(0, 400, len(qid)).astype(str))
    expected = pd.DataFrame({"qid": qid, "docno": docno}).duplicated(keep="first").to_numpy()
    assert 100 < expected.sum() < len(qid) // 4
    qcode = np.repeat(np.arange(len(lengths)), lengths)
    found = keys.exact_duplicates(pa.array(qid), pa.array(docno), qcode)
    first = pd.Series(np.arange(len(qid))).groupby([qid, docno]).transform("first").to_numpy()
    assert list(found[0]) == list(np.flatnonzero(expected))
    assert list(found[1]) == list(first[expected])
    # every block of one length (the keys as a matrix); one repeat, at a block's two ends
    same = np.tile([f"d{i}" for i in range(50)], 30)
    same[49] = "d0"
    found = keys.exact_duplicates(pa.array(np.repeat([f"q{i}" for i in range(30)], 50)), pa.array(same),
                                  np.repeat(np.arange(30), 50))
    assert list(found[0]) == [49] and list(found[1]) == [0]
    assert keys.exact_duplicates(pa.array(["q"] * 3), pa.array(["a", "b", "c"]), np.zeros(3, np.int64)) is None


def test_a_query_in_two_blocks_is_checked_across_them():
    # q1's rows, q2's, then q1's again: the repeat of d1 lies in q1's second block.
    qcode = np.array([0, 0, 1, 1, 0, 0])
    found = keys.exact_duplicates(pa.array(["q1", "q1", "q2", "q2", "q1", "q1"]),
                                  pa.array(["d1", "d2", "d1", "d3", "d4", "d1"]), qcode)
    assert found is not None and list(found[0]) == [5] and list(found[1]) == [0]


def test_hash_collisions_are_resolved_exactly(monkeypatch):
    # Every docno hashing alike must not create false duplicates.
    monkeypatch.setattr(keys, "string_hash", lambda arr: np.zeros(len(arr), dtype=np.uint64))
    run = io.read_run(b"1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 c 3 1 t\n2 Q0 a 1 1 t\n")
    assert len(run) == 4
    fails(lambda: io.read_run(b"1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 b 3 1 t\n", source="r"), source="r", line=3,
          problem="'b' appears twice", fix="on_duplicate")


def test_string_hash_long_and_non_ascii_ids():
    long_a = "http://example.org/" + "x" * 300 + "/a"
    long_b = "http://example.org/" + "x" * 300 + "/b"
    values = pa.array(["é", "e", "ü€x", long_a, long_b, "é", long_a, ""])
    h = keys.string_hash(values)
    assert h[0] == h[5] and h[3] == h[6]
    assert len(set(h[[0, 1, 2, 3, 4, 7]].tolist())) == 6
    run = io.read_run({"q": {long_a: 1.0, long_b: 2.0, "é": 0.5}})
    assert len(run) == 3


def test_string_hash_does_not_depend_on_the_other_strings_of_a_chunk():
    # Chunks of one column pad to different widths; equal strings must hash alike in all of them.
    alone = keys.string_hash(pa.array(["abc", "abcdefgh", "abcdefghi"]))
    beside_long = keys.string_hash(pa.array(["abc", "abcdefgh", "abcdefghi", "x" * 40]))
    assert list(alone) == list(beside_long[:3])
    # beside an id long enough to be hashed by its ends (a URL), too
    url = "http://example.org/" + "x" * 300
    beside_url = keys.string_hash(pa.array(["abc", url, "abcdefgh", "abcdefghi"]))
    assert list(alone) == [beside_url[0], *beside_url[2:]]
    assert beside_url[1] == keys.string_hash(pa.array([url]))[0]


@pytest.mark.parametrize("other", ["a-much-longer-docno-than-eight-bytes", "http://example.org/" + "x" * 300])
def test_duplicates_across_chunks_of_different_widths_are_found(other):
    docno = pa.chunked_array([pa.array(["d1", "d2"]), pa.array(["d1", other])])
    found = keys.exact_duplicates(pa.chunked_array([pa.array(["1", "1"]), pa.array(["1", "1"])]), docno,
                                  np.zeros(4, dtype=np.int32))
    assert found is not None and list(found[0]) == [2] and list(found[1]) == [0]


def test_pair_keys_hashed_in_slices_equal_the_keys_hashed_whole(monkeypatch):
    # Slices of a chunk bound the padded copy of its strings; each key is that of its own row alone.
    rng = np.random.default_rng(7)
    docno = pa.chunked_array([pa.array([f"d{'x' * int(n)}{i}" for i, n in enumerate(rng.integers(0, 40, 3000))]),
                              pa.array([f"doc{i}" for i in range(1000)])])
    qcode = rng.integers(0, 50, len(docno)).astype(np.int64)
    whole = keys.pair_keys(qcode, docno)
    monkeypatch.setattr(keys, "_HASH_SLICE", 257)
    assert np.array_equal(keys.pair_keys(qcode, docno), whole)
    alone = [keys.pair_keys(qcode[i:i + 1], pa.chunked_array([docno.combine_chunks()[i:i + 1]]))[0]
             for i in (0, 256, 257, 2999, 3000, 3999)]
    assert [int(whole[i]) for i in (0, 256, 257, 2999, 3000, 3999)] == [int(k) for k in alone]
