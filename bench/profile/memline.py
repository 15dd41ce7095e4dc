"""Where the peak RSS of ``python -m metrics eval`` happens: samples the process's RSS every
2 ms on a thread while the CLI runs in-process, and prints the main thread's stack at the
highest samples.

    python bench/profile/memline.py bench/data/dev-qrels.txt bench/data/dev-run.txt -m nDCG@10 ...

Arguments are those of ``python -m metrics eval``; the CLI's output goes to /dev/null.
"""
from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 2**20


def main() -> None:
    main_id = threading.get_ident()
    samples: list[tuple[float, float, str]] = []
    done = threading.Event()
    best = [0.0]

    def sample() -> None:
        start = time.perf_counter()
        while not done.is_set():
            rss = rss_mb()
            where = ""
            if rss > best[0]:
                best[0] = rss
                frame = sys._current_frames().get(main_id)
                stack = traceback.extract_stack(frame)[-6:] if frame is not None else []
                where = " < ".join(f"{Path(s.filename).name}:{s.lineno} {s.name}" for s in reversed(stack))
            samples.append((time.perf_counter() - start, rss, where))
            time.sleep(0.002)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    from metrics.cli import main as cli_main
    with open(os.devnull, "w") as out, contextlib.redirect_stdout(out):
        cli_main(["eval", *sys.argv[1:]])
    done.set()
    thread.join()
    peak = max(s[1] for s in samples)
    print(f"peak RSS {peak:.0f} MB over {samples[-1][0]:.2f} s ({len(samples)} samples)")
    marks = [s for s in samples if s[2]]
    for t, rss, where in marks[-8:]:
        print(f"{t:6.2f} s {rss:6.0f} MB  {where}")
    step = max(1, len(samples) // 40)
    print("timeline (s, MB):", " ".join(f"{t:.2f}:{rss:.0f}" for t, rss, _ in samples[::step]))


if __name__ == "__main__":
    main()
