"""metrics.engines.buckets: the bucket of a query is crc32 of its qid bytes mod n."""
from __future__ import annotations

import zlib

import pyarrow as pa

from metrics import engines as scale


def test_bucket_is_crc32_of_the_qid_bytes_mod_n():
    qids = ["q1", "", "héllo", "10", "9", "a" * 300]
    assert scale.crc32(pa.array(qids)).tolist() == [zlib.crc32(q.encode()) for q in qids]
    assert scale.bucket_of(pa.array(qids * 3), 7).tolist() == [zlib.crc32(q.encode()) % 7 for q in qids * 3]
