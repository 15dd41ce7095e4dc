"""What pages read, in one place: ``from ndcg_lab.ui import state`` then ``state.sidebar()``,
``state.means(sel, ...)``, ``state.workspace()``.

The names live in three modules, re-exported here: :mod:`ndcg_lab.ui.session` (the session's workspace,
the workspace manager, the operator's settings and upload bounds), :mod:`ndcg_lab.ui.selection` (the
sidebar and its :class:`Selection`, the export stamp) and :mod:`ndcg_lab.ui.caches` (content-keyed
caches of runs, judgments, ranked runs, evaluations, curves, lint findings, topics and titles).
"""
from __future__ import annotations

from ndcg_lab.ui.caches import (
    CACHE_TTL,
    cached_ranked,
    curves,
    docs,
    evaluate,
    lint,
    mean_curves,
    means,
    proxy,
    qrels,
    ranked,
    run,
    topics,
)
from ndcg_lab.ui.selection import (
    CORRECTIONS,
    DEFAULT_COLLECTION,
    GAINS,
    HASH_FUNCS,
    TESTS,
    Selection,
    all_system_names,
    collection_info,
    forget_baseline,
    open_collection,
    remember,
    run_page,
    selection,
    sidebar,
    stamp,
)
from ndcg_lab.ui.session import (
    SAMPLE_BASELINES,
    SAMPLE_COLLECTIONS,
    SAMPLES,
    TOKEN_PARAM,
    access,
    app_arguments,
    base_url,
    link,
    manager,
    read_only,
    reload_sample,
    samples,
    scope_of,
    settings,
    workspace,
)

__all__ = ["CACHE_TTL", "CORRECTIONS", "DEFAULT_COLLECTION", "GAINS", "HASH_FUNCS", "SAMPLES", "SAMPLE_BASELINES",
           "SAMPLE_COLLECTIONS", "TESTS", "TOKEN_PARAM", "Selection", "access", "all_system_names",
           "app_arguments", "base_url", "cached_ranked", "collection_info", "curves", "docs", "evaluate",
           "forget_baseline", "link", "lint", "manager", "mean_curves", "means", "open_collection", "proxy", "qrels",
           "ranked", "read_only", "reload_sample", "remember", "run", "run_page", "samples", "scope_of", "selection",
           "settings", "sidebar", "stamp", "topics", "workspace"]
