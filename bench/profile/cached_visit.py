"""A page's cached visit in Chromium: the seconds to the end of its script run, and the CPU each
kind of Chromium process used for it.

    python bench/profile/cached_visit.py [--home /tmp/bd] [--collection dev] [--visits 3] ["Query explorer"]

Serves the app on the workspace of ``--home`` (personal mode, the harness of tests/e2e; made by
``python bench/bench_dashboard.py --big --home DIR``), opens the page once (its inputs cached),
then ``--visits`` times opens the light page of bench_dashboard (``BETWEEN``), waits for Chromium to
be idle and opens the page again: each visit's seconds as bench_dashboard times them, the wall
seconds of the step, and the CPU seconds of the renderer, the browser process and the GPU
process over it. Behind RESULTS.md's round 9 (the Query explorer's heatmaps).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "bench"), str(ROOT), str(ROOT / "tests" / "e2e")]

from bench_dashboard import (  # noqa: E402
    BETWEEN,
    CHROMIUM,
    CHROMIUM_ARGS,
    AppServer,
    Session,
    chromium_cpu,
    open_page,
    settled,
)
from playwright.sync_api import sync_playwright  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page", nargs="?", default="Query explorer")
    parser.add_argument("--home", type=Path, default=Path("/tmp/bd"))
    parser.add_argument("--collection", default="dev")
    parser.add_argument("--visits", type=int, default=3)
    args = parser.parse_args()
    server = AppServer(home=args.home)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        server.start()
        session = Session(browser, server, args.collection)
        session.open()
        print(f"{args.page}: first visit {open_page(session.page, args.page, 180):.2f} s", flush=True)
        for _ in range(args.visits):
            settled()
            open_page(session.page, BETWEEN, 180)
            settled()
            before, started = chromium_cpu(), time.perf_counter()
            seconds = open_page(session.page, args.page, 180)
            step = time.perf_counter() - started
            settled()
            after = chromium_cpu()
            used = {kind: after[kind] - before.get(kind, 0.0) for kind in ("renderer", "browser", "gpu-process")
                    if kind in after}
            print(f"{args.page}: cached visit {seconds:.2f} s (step {step:.2f} s); Chromium CPU "
                  + ", ".join(f"{kind} {value:.2f} s" for kind, value in used.items()), flush=True)
        browser.close()
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
