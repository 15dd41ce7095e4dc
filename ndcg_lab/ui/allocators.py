"""The allocator settings of a server process, which numpy and pyarrow read when they load: no
transparent huge pages for numpy's arrays (``NUMPY_MADVISE_HUGEPAGE``) or pyarrow's pool
(mimalloc's ``MIMALLOC_ALLOW_THP``).

On the 2-core virtual machines we measure on, the first touch of a huge page cost several times
the system time of the same memory in 4 KiB pages: the Fusion page's pool of two 7M-line runs
took 2.9-4.7 s to build with both allocators' huge pages and 1.1-1.2 s with neither
(``python bench/profile/fusion_steps.py``, bench/RESULTS.md, round 10). ``ndcg-lab app`` puts these
in the server's environment; the entry script sets them too, before it imports pyarrow, for
``streamlit run app.py``. An operator's own values win. Nothing here imports numpy or pyarrow.
"""
from __future__ import annotations

import os
from collections.abc import MutableMapping

SERVER_ENV = {"NUMPY_MADVISE_HUGEPAGE": "0", "MIMALLOC_ALLOW_THP": "0"}


def set_defaults(env: MutableMapping[str, str] = os.environ) -> None:
    """:data:`SERVER_ENV` into ``env`` (this process's environment by default), where not set."""
    for name, value in SERVER_ENV.items():
        env.setdefault(name, value)
