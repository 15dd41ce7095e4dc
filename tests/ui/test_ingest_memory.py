"""A server process gives back what a refused upload took: measured in a child process of its own,
from /proc (resident memory now, and the peak), so that nothing else of the test run counts."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, sys, time
import metrics
from ndcg_lab.ui import ingest
from tests.ui.test_ingest import Upload


def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024


reports = []
ingest._seen = lambda seen=set(): seen
ingest.report = lambda kind, text: reports.append((kind, text))
save = lambda file, run: None
# 2M distinct lines, then the first one's document again: parsed whole, refused at the end
raw = b"".join(b"q%d Q0 doc%d 1 1.0 t\n" % (i % 1000, i) for i in range(2_000_000)) + b"q1 Q0 doc1 1 1.0 t\n"
ingest.store_uploads([Upload("warm.run", b"q1 Q0 d1 1 1.0 t\n")], ingest.run_reader, save,
                     metrics.settings.Settings())
baseline = status("VmRSS")
ingest.store_uploads([Upload("dup.run", raw)], ingest.run_reader, save, metrics.settings.Settings())
start, after = time.monotonic(), status("VmRSS")
while after - baseline > 150e6 and time.monotonic() - start < 10:
    time.sleep(0.5)
    after = status("VmRSS")
print(json.dumps({"baseline": baseline, "after": after, "peak": status("VmHWM"), "reports": reports}))
"""


def test_a_refused_upload_gives_its_memory_back_within_150_mb_of_the_baseline():
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    ((kind, text),) = found["reports"]
    assert kind == "error" and "appears twice" in text
    assert found["peak"] - found["baseline"] > 150e6          # the refusal did take memory to give back
    assert found["after"] - found["baseline"] <= 150e6, found
