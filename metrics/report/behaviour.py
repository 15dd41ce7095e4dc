"""Text output of the measure-behaviour commands (agreement, power, reduce, judges): named sections
of frames, with the settings (the seed first among them) in every format.

- ``table``: a ``key: value`` header, then each section as a titled block;
- ``tsv``: ``# key: value`` lines, then each section as ``# section: NAME`` and its rows;
- ``json``: ``{"version", "settings", "sections": {name: [records]}}`` (non-finite numbers as
  null, "inf" or "-inf").
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping

import pandas as pd

from .. import __version__
from .export import neutralised

FORMATS = ("table", "tsv", "json")


def json_value(value):
    """A numpy or Python scalar as JSON takes it: NaN as null, infinities as "inf" and "-inf"."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def records(frame: pd.DataFrame) -> list[dict]:
    """Rows of a frame as JSON-ready dicts (the index becomes a column when it is named)."""
    shown = frame.reset_index() if frame.index.name is not None else frame
    return [{str(k): json_value(v) for k, v in row.items()} for row in shown.to_dict(orient="records")]


def render(sections: Mapping[str, pd.DataFrame], settings: Mapping, fmt: str) -> str:
    """``sections`` (name -> frame) and ``settings`` in one of :data:`FORMATS`."""
    if fmt == "json":
        return json.dumps({"version": __version__, "settings": {k: json_value(v) for k, v in settings.items()},
                           "sections": {name: records(frame) for name, frame in sections.items()}}, indent=2)
    if fmt == "tsv":
        lines = [f"# {key}: {json.dumps(json_value(value))}" for key, value in settings.items()]
        for name, frame in sections.items():
            lines.append(f"# section: {name}")
            shown = neutralised(frame.reset_index() if frame.index.name is not None else frame)
            lines.append(shown.to_csv(sep="\t", index=False, lineterminator="\n", float_format="%.10g").rstrip("\n"))
        return "\n".join(lines)
    if fmt == "table":
        head = "\n".join(f"{key}: {value}" for key, value in settings.items())
        blocks = [head]
        for name, frame in sections.items():
            body = frame.to_string(float_format=lambda v: f"{v:.4f}", index=frame.index.name is not None)
            blocks.append(f"{name}\n{body}")
        return "\n\n".join(blocks)
    raise ValueError(fmt)
