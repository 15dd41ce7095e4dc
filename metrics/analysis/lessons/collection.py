"""A tiny collection for the lessons: several queries, two systems ranking the same judged
documents, scored with ``metrics.evaluate`` (nDCG@k per query, the means and B's wins over A)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ... import io
from ...errors import MetricsError
from ...evaluation import evaluate
from ...measures import with_gain
from .. import sandbox


@dataclass(frozen=True)
class Collection:
    """Queries, each ``(grades, a, b)``: the grades of its judged documents d1..dn, and the order
    (1-based document numbers) in which systems A and B rank them. Scored with ``metrics.evaluate``."""

    queries: tuple
    cutoff: int = 5
    gain: str = "exp"

    def __post_init__(self):
        queries = []
        for i, query in enumerate(self.queries):
            grades, a, b = (tuple(int(v) for v in part) for part in query)
            n = len(grades)
            for name, order in (("a", a), ("b", b)):
                if not order or any(not 1 <= d <= n for d in order) or len(set(order)) != len(order):
                    raise MetricsError(f"query {i + 1}: {name} must list distinct document numbers 1-{n}",
                                       fix="e.g. a = [2, 1, 3]")
            if any(g not in sandbox.GRADES for g in grades):
                raise MetricsError(f"query {i + 1}: grades must be 0-4")
            queries.append((grades, a, b))
        if len(queries) < 2:
            raise MetricsError("a collection needs at least 2 queries")
        if self.gain not in sandbox.GAIN_NAMES:
            raise MetricsError(f"unknown gain {self.gain!r}", fix="use exp or linear")
        object.__setattr__(self, "queries", tuple(queries))
        object.__setattr__(self, "cutoff", int(self.cutoff))

    @property
    def measure(self) -> str:
        return with_gain(f"nDCG@{self.cutoff}", self.gain)

    def per_query(self) -> pd.DataFrame:
        """nDCG@k of A and B per query (index q1..qn), and ``B - A``."""
        rq, rd, rs, rsys, qq, qd, ql = ([] for _ in range(7))
        for i, (grades, a, b) in enumerate(self.queries):
            qid = f"q{i + 1:02d}"
            for system, order in (("A", a), ("B", b)):
                rq += [qid] * len(order)
                rd += [f"d{d}" for d in order]
                rs += list(range(len(order), 0, -1))
                rsys += [system] * len(order)
            qq += [qid] * len(grades)
            qd += [f"d{j + 1}" for j in range(len(grades))]
            ql += list(grades)
        qrels = io.read_qrels(pd.DataFrame({"qid": qq, "docno": qd, "label": np.asarray(ql, dtype=np.int64)}),
                              name="lesson qrels", source="<lesson>")
        frames = []
        for system in ("A", "B"):
            keep = [s == system for s in rsys]
            run = io.read_run(pd.DataFrame({"qid": np.asarray(rq)[keep], "docno": np.asarray(rd)[keep],
                                            "score": np.asarray(rs, dtype=np.float64)[keep]}),
                              name=system, source="<lesson>")
            frame = evaluate(qrels, run, [self.measure])
            frames.append(frame.set_index("qid")["value"].rename(system))
        table = pd.concat(frames, axis=1).sort_index()
        table.index.name = "query"
        table["B - A"] = table["B"] - table["A"]
        return table

    def summary(self) -> dict[str, float]:
        """Means, sample standard deviations (ddof 1) and the count of B's wins over A."""
        table = self.per_query()
        return {"mean_a": float(table["A"].mean()), "mean_b": float(table["B"].mean()),
                "sd_a": float(table["A"].std(ddof=1)), "sd_b": float(table["B"].std(ddof=1)),
                "wins_b": float((table["B - A"] > 1e-12).sum()), "losses_b": float((table["B - A"] < -1e-12).sum()),
                "queries": float(len(table))}

