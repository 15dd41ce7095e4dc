"""The bundled sample collections a server offers: where their files are and how they are read."""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import io
from ..errors import MetricsError


@dataclass(frozen=True)
class Sample:
    """A bundled sample collection: ``folder`` holds qrels.txt, *.run, and optionally proxy.txt,
    topics.tsv (qid, text) and docs.tsv (docno, title)."""

    name: str
    folder: Path
    baseline: str | None = None

    def files(self) -> list[Path]:
        folder = Path(self.folder)
        names = ("qrels.txt", "proxy.txt", "topics.tsv", "docs.tsv")
        return [folder / n for n in names if (folder / n).exists()] + sorted(folder.glob("*.run"))

    def read(self) -> dict:
        """The keyword arguments of :meth:`Workspace.replace_collection` for this sample."""
        folder = Path(self.folder)
        if not (folder / "qrels.txt").exists():
            raise MetricsError("the sample has no qrels.txt", source=str(folder), fix="check the sample folder")

        def table(name):
            import pandas as pd  # only a sample with topics or titles needs it

            path = folder / name
            return pd.read_csv(path, sep="\t", dtype=str) if path.exists() else None

        proxy = folder / "proxy.txt"
        return {"qrels": io.read_qrels(folder / "qrels.txt"),
                "proxy": io.read_qrels(proxy) if proxy.exists() else None,
                "topics": table("topics.tsv"), "docs": table("docs.tsv"),
                "runs": [io.read_run(path) for path in sorted(folder.glob("*.run"))], "baseline": self.baseline}


def samples_digest(samples: Sequence[Sample]) -> str:
    """sha256 over the samples' names, baselines and files (names and bytes)."""
    digest = hashlib.sha256()
    for sample in samples:
        digest.update(f"{sample.name}\0{sample.baseline}\0".encode())
        for path in sample.files():
            digest.update(f"{path.name}\0".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()
