"""Text for people: p-values, percentages, significance markers, the export stamp, sizes, progress."""
from __future__ import annotations

import math
import sys
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..settings import human_bytes
from ..stats.comparison import BETTER, WORSE

if TYPE_CHECKING:
    from ..engines.partitioning import Progress

LATEX_MARKERS = {BETTER: "\\blacktriangle", WORSE: "\\blacktriangledown"}
"""The LaTeX command that stands for each significance marker of :func:`metrics.stats.compare`."""


def format_p(p: float) -> str:
    """A p-value with 4 significant digits, the same on the Compare page and in ``compare --format table``."""
    return f"{p:.4g}"


def percent(value: float) -> str:
    """A relative difference as a signed percentage (``+12.5%``); ``n/a`` when it is not finite."""
    return "n/a" if not math.isfinite(value) else f"{100 * value:+.1f}%"


def latex_marks(markers: Mapping) -> dict:
    """{cell: LaTeX command} for the cells of ``markers`` ({cell: "▲" / "▼" / ""}) that carry a marker."""
    return {cell: LATEX_MARKERS[marker] for cell, marker in markers.items() if marker}


def comparison_marks(table) -> dict:
    """{(system, measure): LaTeX command} of a :func:`metrics.stats.compare` table's significant rows."""
    return latex_marks(dict(zip(zip(table["system"], table["measure"]), table["marker"])))


TOPIC_LIMIT = 80  # characters of a topic shown in a table cell, a heading or a hover label


def shorten(text: str, limit: int = TOPIC_LIMIT) -> str:
    """``text`` cut to at most ``limit`` characters, an ellipsis (…) marking the cut; shorter text as it is.
    A long topic (a 150-word patient description) fits a table cell or a heading this way; pages
    give the full text on demand."""
    text = str(text)
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


NAME_LIMIT = 18
"""Characters of a run name that a sidebar chip shows before it cuts the rest."""


def distinct_labels(names, limit: int = NAME_LIMIT) -> dict[str, str]:
    """``{name: label}`` with every label at most ``limit`` characters and no two alike, so that two
    runs that share a long prefix (``trec_21_IKR3_TT_M_run1``, ``..._run2``) never show as the same
    cut name. A short name is its own label; a long one keeps its head and as much of its tail as
    it takes to tell it apart (``trec_21…M_run1``); names that differ only in the middle show the
    part where they differ (``…IKR3_TT…``)."""
    names = list(dict.fromkeys(str(n) for n in names))
    labels = {n: n for n in names if len(n) <= limit}
    long = [n for n in names if len(n) > limit]
    for tail in range(4, limit - 2):
        head = limit - 1 - tail
        trial = {n: n[:head] + "…" + n[-tail:] for n in long}
        taken = list(labels.values()) + list(trial.values())
        if len(set(taken)) == len(taken):
            return {n: labels[n] if n in labels else trial[n] for n in names}
    for n in long:   # names alike at both ends: show where each first differs from the others
        others = [o for o in names if o != n]
        start = max((_common_prefix(n, o) for o in others), default=0)
        window = n[max(0, start - 3):][:limit - 2]
        labels[n] = "…" + window + "…"
    seen: dict[str, int] = {}
    out = {}
    for n in names:
        label = labels[n]
        seen[label] = seen.get(label, 0) + 1
        out[n] = label if seen[label] == 1 else f"{label[:limit - 3]}#{seen[label]}"
    return out


def _common_prefix(a: str, b: str) -> int:
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    return i


def markers_note(test: str, correction: str, alpha: float) -> str:
    """The export stamp's line that says what the LaTeX markers mean."""
    corrected = "no correction" if correction.lower() in ("none", "no correction") else f"{correction} correction"
    return (f"{test}, {corrected}, p < {alpha:g}: blacktriangle = better, blacktriangledown = worse "
            "than the baseline")


def terminal_progress(stream=None, *, min_interval: float = 0.5) -> Progress:
    """A progress callback that writes one line per step to ``stream`` (stderr), throttled."""
    stream = stream or sys.stderr
    last: dict[str, Any] = {"t": 0.0, "message": None}
    tty = hasattr(stream, "isatty") and stream.isatty()

    def report(done: int, total: int, message: str) -> None:
        now = time.monotonic()
        final = done >= total
        if not final and now - last["t"] < min_interval:
            return
        last["t"] = now
        if message.startswith(("partition", "read")) and total:
            text = f"{message}: {100 * done / total:5.1f}% ({human_bytes(done)} of {human_bytes(total)})"
        else:
            text = f"{message} [{done}/{total}]"
        if tty:
            stream.write("\r\033[K" + text + ("\n" if final else ""))
        else:
            stream.write(text + "\n")
        stream.flush()
    return report


