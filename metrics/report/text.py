"""Text for people: p-values, percentages, significance markers, the export stamp, sizes, progress."""
from __future__ import annotations

import sys
import time
from collections.abc import Callable

Progress = Callable[[int, int, str], None]


def terminal_progress(stream=None, *, min_interval: float = 0.5) -> Progress:
    """A progress callback that writes one line per step to ``stream`` (stderr), throttled."""
    stream = stream or sys.stderr
    last = {"t": 0.0, "message": None}
    tty = hasattr(stream, "isatty") and stream.isatty()

    def report(done: int, total: int, message: str) -> None:
        now = time.monotonic()
        final = done >= total
        if not final and now - last["t"] < min_interval:
            return
        last["t"] = now
        if message.startswith("partition") and total:
            text = f"{message}: {100 * done / total:5.1f}% ({human_bytes(done)} of {human_bytes(total)})"
        else:
            text = f"{message} [{done}/{total}]"
        if tty:
            stream.write("\r\033[K" + text + ("\n" if final else ""))
        else:
            stream.write(text + "\n")
        stream.flush()
    return report


def human_bytes(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n} B"
