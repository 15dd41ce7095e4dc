"""Peak memory and time of compression bombs through every entry: every text, codec and form.

    python bench/bench_bombs.py                                 # this checkout, every case (a few minutes)
    python bench/bench_bombs.py --code ../before                # another checkout of nDCG Lab (before)
    python bench/bench_bombs.py --mib 1024 --kinds lines --codecs gz --entries cli stream

Inputs (``--mib`` MiB of text each, written once to ``--cache``, default /tmp/ndcg-lab-bombs):

    zeros     NUL bytes                          newlines  only line ends
    lines     one valid run line, repeated       dup       a valid run line twice, then the first again
    tabs      the run line with tabs             qrels     one qrels line, repeated
    topics    one TREC topic, repeated             comments  one comment line (after a blank), repeated

each in gzip, bz2, xz and zstd (pyarrow's codec), as one stream (``stream``) and as concatenated
members of 8 MiB each (``members``), and plain (``--codecs plain``: the text as it is, one form). Entries:

    cli      python -m metrics eval QRELS RUN (the default engine; a qrels bomb is the QRELS)
    stream   the same with --engine streaming
    dask     the same with --engine dask (a LocalCluster of 2 worker processes started here)
    library  metrics.read_run / read_qrels / read_topics of the path
    upload   the Data page's upload path (ui.ingest.store_uploads) with the file's bytes
    task     a team's submission to a class task of the legal sample (metrics.tasks: the file's
             bytes as the run, whatever the text)
    server   the Data page's "Large runs" form: the path typed on the server, under
             NDCG_LAB_DATA_ROOTS (ui.scale.evaluate_server_source, the streaming engine)

Each (entry, input) runs in a process of its own inside a wrapper that reports the kernel's peak
resident memory of it (``ru_maxrss`` of RUSAGE_CHILDREN: the largest process of the case's tree, so
for Dask the client or one worker, whichever held more); "above" subtracts the peak of the same entry
on the sample's bm25.run. A case still running after ``--timeout`` s is killed and reported so.
Prints a Markdown table for bench/RESULTS.md.
"""
from __future__ import annotations

import argparse
import bz2
import gzip
import json
import lzma
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
MEMBER = 8 << 20

TEXT = {
    "zeros": b"\0" * 64,
    "newlines": b"\n" * 64,
    "lines": b"q1 Q0 doc1 1 1.0 bomb\n",
    "dup": b"q1 Q0 doc1 1 1.0 bomb\nq1 Q0 doc2 2 0.5 bomb\n",
    "tabs": b"q1\tQ0\tdoc1\t1\t1.0\tbomb\n",
    "qrels": b"q1 0 doc1 1\n",
    "topics": b"<top><num>1</num><title>bomb</title></top>\n",
    "comments": b" # a comment line, which every reader skips\n",
}
CODECS = ("gz", "bz2", "xz", "zst", "plain")
FORMS = ("stream", "members")
ENTRIES = ("cli", "stream", "dask", "library", "upload", "task", "server")

LIBRARY = """
import sys, metrics
from metrics.io.topics import read_topics
kind, path = sys.argv[1], sys.argv[2]
reader = {"qrels": metrics.read_qrels, "topics": read_topics}.get(kind, metrics.read_run)
try:
    reader(path)
    print("read", file=sys.stderr)
except metrics.MetricsError as exc:
    print(str(exc), file=sys.stderr)
"""

UPLOAD = """
import io, sys, metrics
from ndcg_lab.ui import ingest
class Upload(io.BytesIO):
    def __init__(self, name, data):
        super().__init__(data)
        self.name, self.size, self.file_id = name, len(data), name
kind, path = sys.argv[1], sys.argv[2]
said = []
ingest._seen = lambda seen=set(): seen
ingest.report = lambda level, text: said.append(text)
readers = {"qrels": ingest.qrels_reader, "topics": ingest.topics_reader}
data = open(path, "rb").read()
ingest.store_uploads([Upload(path.rsplit("/", 1)[-1], data)], readers.get(kind, ingest.run_reader),
                     lambda file, parsed: said.append("read"), metrics.settings.Settings())
print(said[-1] if said else "read", file=sys.stderr)
"""

TASK = """
import shutil, sys, tempfile, time
from pathlib import Path
import metrics
from metrics import settings
from metrics.tasks import TaskDefinition, Tasks
kind, path = sys.argv[1], Path(sys.argv[2])
legal = Path("ndcg_lab/sample_data/legal")
home = tempfile.mkdtemp(prefix="ndcg-lab-bomb-task-")
tasks = Tasks(settings.load({**__import__("os").environ, "NDCG_LAB_HOME": home}))
try:
    task = tasks.create(TaskDefinition(title="bombs", closes=time.time() + 86400, measures=("nDCG@10",)),
                        topics=legal / "topics.tsv", qrels=legal / "qrels.txt", baselines=[])
    team = tasks.open(tasks.join(task.join, "A"))
    team.submit(path.read_bytes(), "bomb", path.name)
    print("read", file=sys.stderr)
except metrics.MetricsError as exc:
    print(str(exc), file=sys.stderr)
finally:
    tasks.close()
    shutil.rmtree(home)
"""

SERVER = """
import os, sys
kind, path = sys.argv[1], sys.argv[2]
os.environ["NDCG_LAB_DATA_ROOTS"] = os.path.dirname(path)
import metrics
from ndcg_lab.ui import ingest, scale
said = []
ingest.report = lambda level, text: said.append(text)
class Selection:
    collection, gain = "bombs", "exp"
class Workspace:
    def load_qrels(self, collection):
        return metrics.read_qrels("ndcg_lab/sample_data/legal/qrels.txt")
scale.evaluate_server_source(path, Selection(), Workspace())
print(said[-1] if said else "read", file=sys.stderr)
"""
SCRIPTS = {"library": LIBRARY, "upload": UPLOAD, "task": TASK, "server": SERVER}


def _writer(codec: str, path: Path):
    if codec == "gz":
        return gzip.open(path, "wb", compresslevel=1)
    if codec == "bz2":
        return bz2.open(path, "wb", compresslevel=1)
    if codec == "xz":
        return lzma.open(path, "wb", preset=0)
    return pa.CompressedOutputStream(str(path), "zstd")


def _member(codec: str, data: bytes) -> bytes:
    return {"gz": lambda: gzip.compress(data, 1), "bz2": lambda: bz2.compress(data, 1),
            "xz": lambda: lzma.compress(data, preset=0),
            "zst": lambda: pa.compress(data, codec="zstd", asbytes=True)}[codec]()


def bomb(cache: Path, kind: str, codec: str, form: str, mib: int) -> Path:
    """The input file, written once."""
    if codec == "plain":
        form = "plain"
    path = cache / f"{kind}-{form}-{mib}m.{codec}"
    if path.exists():
        return path
    cache.mkdir(parents=True, exist_ok=True)
    block = TEXT[kind] * (MEMBER // len(TEXT[kind]))
    n = max(1, (mib << 20) // len(block))
    partial = path.with_suffix(path.suffix + ".part")
    if codec == "plain":
        with open(partial, "wb") as out:
            for _ in range(n):
                out.write(block)
    elif form == "members":
        packed = _member(codec, block)
        with open(partial, "wb") as out:
            for _ in range(n):
                out.write(packed)
    else:
        with _writer(codec, partial) as out:
            for _ in range(n):
                out.write(block)
    os.replace(partial, path)
    return path


def command(entry: str, kind: str, path: Path, qrels: Path, run: Path) -> list[str] | None:
    if entry in ("cli", "stream", "dask"):
        if kind == "topics":
            return None                   # the command line reads no topics
        pair = [str(path), str(run)] if kind == "qrels" else [str(qrels), str(path)]
        engine = {"stream": ["--engine", "streaming"], "dask": ["--engine", "dask", "--workers", "2"]}
        return [sys.executable, "-m", "metrics", "eval", *pair, "--no-progress", *engine.get(entry, [])]
    return [sys.executable, "-c", SCRIPTS[entry], kind, str(path)]


def measure(argv: list[str], code: Path, timeout: float) -> dict:
    """Run one case in a wrapper process (``--one``) so that its RUSAGE_CHILDREN is this case's."""
    wrapper = [sys.executable, __file__, "--one", json.dumps(argv), "--code", str(code), "--timeout", str(timeout)]
    return json.loads(subprocess.run(wrapper, capture_output=True, text=True, check=True).stdout)


def run_one(argv: list[str], code: Path, timeout: float) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code), "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.perf_counter()
    process = subprocess.Popen(argv, cwd=code, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _, err = process.communicate(timeout=timeout)
        lines = [line for line in err.splitlines() if line.strip()]
        outcome = lines[-1] if lines else "read"
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        outcome = f"still running after {timeout:.0f} s (killed)"
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return {"peak": peak, "seconds": seconds, "outcome": outcome}


def short(outcome: str) -> str:
    text = outcome.split(": ", 1)[-1] if ": " in outcome else outcome
    for words, label in (("times its compressed size", "refused: inflate ratio"),
                         ("inflates to more than", "refused: inflate limit"), ("binary data", "refused: binary"),
                         ("only blank lines", "refused: blank lines"), ("appears twice", "refused: duplicate"),
                         ("a degenerate input", "refused: degenerate"), ("still running", "killed at the timeout")):
        if words in text:
            return label
    return text[:60].replace("|", "/")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--code", type=Path, default=ROOT, help="checkout of nDCG Lab to measure")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/ndcg-lab-bombs"))
    parser.add_argument("--mib", type=int, default=256, help="MiB of text each bomb inflates to")
    parser.add_argument("--kinds", nargs="+", default=list(TEXT), choices=list(TEXT))
    parser.add_argument("--codecs", nargs="+", default=list(CODECS), choices=CODECS)
    parser.add_argument("--forms", nargs="+", default=list(FORMS), choices=FORMS)
    parser.add_argument("--entries", nargs="+", default=list(ENTRIES), choices=ENTRIES)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    code = args.code.resolve()
    if args.one:
        print(json.dumps(run_one(json.loads(args.one), code, args.timeout)))
        return
    sample = code / "ndcg_lab" / "sample_data" / "legal"
    sample = sample if sample.exists() else code / "sample_data" / "legal"   # an older checkout
    qrels, run = sample / "qrels.txt", sample / "bm25.run"
    load = os.getloadavg()[0]
    print(f"code: {code.name} · {args.mib} MiB of text a bomb · timeout {args.timeout:g} s · "
          f"load average {load:.1f} on {os.cpu_count()} cores\n")
    print("| entry | input | compressed | peak MB | above baseline MB | seconds | outcome |\n"
          "|---|---|---:|---:|---:|---:|---|")
    for entry in args.entries:
        base = measure(command(entry, "lines", run, qrels, run), code, args.timeout)["peak"]
        for kind in args.kinds:
            for codec in args.codecs:
                for form in (args.forms if codec != "plain" else args.forms[:1]):
                    argv = command(entry, kind, path := bomb(args.cache, kind, codec, form, args.mib), qrels, run)
                    if argv is None:
                        continue
                    found = measure(argv, code, args.timeout)
                    print(f"| {entry} | {path.name} | {path.stat().st_size:,} | {found['peak'] >> 20:,} | "
                          f"{(found['peak'] - base) >> 20:,} | {found['seconds']:.1f} | {short(found['outcome'])} |",
                          flush=True)


if __name__ == "__main__":
    main()
