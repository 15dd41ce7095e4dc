"""The snapshot cache: reused while the task file's generation is unchanged, read again after a write."""
from __future__ import annotations

from dataclasses import dataclass

from metrics.tasks import snapshot as snapshot_module
from tests.metrics.tasks.conftest import make_task


def test_a_snapshot_is_kept_per_generation_and_dropped_with_the_file(tasks, clock):
    access = tasks.open(make_task(tasks).instructor)
    path = str(access.task.path)
    first = access.snapshot()
    clock.now += 5
    again = access.snapshot()
    assert again.submissions is first.submissions and again.now == first.now + 5  # same read, the clock's now
    access.set_options(anonymous=True)  # a write: a new generation
    after = access.snapshot()
    assert after.submissions is not first.submissions and bool(after.meta["anonymous"])
    access.task.remove_files()
    assert snapshot_module.cached_snapshot(path, "any", clock.now) is None


@dataclass
class Seen:
    now: float


def test_the_cache_keeps_the_newest_files_only(monkeypatch):
    monkeypatch.setattr(snapshot_module, "SNAPSHOTS_KEPT", 2)
    for name in ("/t/a", "/t/b", "/t/c"):
        snapshot_module.keep_snapshot(name, "g1", Seen(0.0))
    assert snapshot_module.cached_snapshot("/t/a", "g1", 1.0) is None  # the oldest, dropped
    assert snapshot_module.cached_snapshot("/t/b", "g1", 3.0) == Seen(3.0)
    assert snapshot_module.cached_snapshot("/t/b", "g2", 3.0) is None  # another generation: read again
    snapshot_module.keep_snapshot("/t/d", None, Seen(0.0))  # a file without a generation is never kept
    assert snapshot_module.cached_snapshot("/t/d", None, 3.0) is None
    for name in ("/t/b", "/t/c"):
        snapshot_module.forget_snapshot(name)
