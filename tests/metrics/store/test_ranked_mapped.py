"""The first load of a ranked run returns the cache file it just wrote, memory-mapped: the parsed run's
columns are not held by what a server keeps (its sessions share the mapped pages), and the arrays are
those of ranking the files."""
from __future__ import annotations

from metrics import io
from metrics.ranking import rank

from .test_ranked import assert_same, files, ws  # noqa: F401  (fixtures)


def test_the_first_load_is_the_mapped_cache_file(ws, files):  # noqa: F811
    run, qrels, _ = files
    fresh = rank(io.read_run(run), io.read_qrels(qrels), name="sys")
    built = ws.load_ranked("c", "sys")
    assert fresh.score.flags.writeable            # arrays of its own
    assert not built.score.flags.writeable        # a view of the mapped rows file (read-only pages)
    assert_same(built, fresh)
