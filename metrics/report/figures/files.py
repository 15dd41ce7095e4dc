"""Figures as files for papers: SVG, PDF and PNG (the format chosen by the file's suffix).

Every figure builder of :mod:`metrics.report.figures` returns a plotly figure; :func:`save`
writes one, :func:`save_all` many with one browser. Plotly draws in a browser: kaleido (v1)
drives a Chromium found on this machine (``BROWSER_PATH``, else ``chromium``, ``chromium-browser``,
``google-chrome`` on the PATH; Debian's ``apt-get install chromium``) and never downloads one.
plotly.js comes from the plotly package and MathJax is off, so drawing needs no network.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from ...errors import MetricsError

__all__ = ["FORMATS", "BROWSERS", "browser_path", "save", "save_all"]

FORMATS = {".svg": "svg", ".pdf": "pdf", ".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".webp": "webp"}
"""File suffix -> kaleido's format."""

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
"""Browser commands looked up on the PATH, in this order, when ``BROWSER_PATH`` is not set."""

ATTEMPTS = 2
"""Tries of a figure in a new browser each: kaleido 1.5 sometimes calls its first figure's script in
the blank page before its own page has loaded ("ReferenceError: kaleido_scopes is not defined",
1 browser in 30 on a loaded machine); the file of that figure is then missing, and a second
browser draws it."""


def browser_path() -> str:
    """The Chromium or Chrome that draws figures: ``BROWSER_PATH`` (choreographer's variable) when
    set, else the first of :data:`BROWSERS` on the PATH."""
    given = os.environ.get("BROWSER_PATH")
    if given:
        if not (Path(given).is_file() and os.access(given, os.X_OK)):
            raise MetricsError(f"BROWSER_PATH={given!r} is no executable file",
                               fix="point it at chromium or chrome, or unset it")
        return given
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    raise MetricsError("no Chromium or Chrome found to draw figures as files",
                       fix="install one (Debian: apt-get install chromium) or set BROWSER_PATH to it")


def format_of(path) -> str:
    """kaleido's format for ``path``'s suffix (``.svg``, ``.pdf``, ``.png``, ``.jpg``, ``.webp``)."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise MetricsError(f"{path}: cannot tell the figure format from the suffix {suffix or '(none)'!r}",
                           fix=f"end the name with one of {', '.join(sorted(set(FORMATS)))}")
    return FORMATS[suffix]


def save(fig, path, *, width: int | None = None, height: int | None = None, scale: float | None = None) -> Path:
    """Write the plotly figure ``fig`` to ``path`` in the format its suffix names; returns the path.

    ``width`` and ``height`` in CSS pixels (default: the figure's layout, else 700 x 500);
    ``scale`` multiplies the pixels of a PNG, JPEG or WebP (2 for print)."""
    return save_all([(fig, path)], width=width, height=height, scale=scale)[0]


def save_all(items: Iterable[tuple[object, str | os.PathLike]], *, width: int | None = None,
             height: int | None = None, scale: float | None = None) -> list[Path]:
    """Write several ``(figure, path)`` pairs with one browser (starting it costs about a second)."""
    specs: list[dict] = []
    paths: list[Path] = []
    for fig, path in items:
        path = Path(path)
        opts: dict[str, str | float] = {"format": format_of(path)}
        for key, value in (("width", width), ("height", height), ("scale", scale)):
            if value is not None:
                opts[key] = value
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)      # a file found after drawing is this drawing's
        specs.append({"fig": fig, "path": path, "opts": opts})
        paths.append(path)
    if not specs:
        return []
    try:
        import kaleido  # type: ignore[import-untyped]
    except ImportError:
        raise MetricsError("drawing figures as files needs the kaleido package",
                           fix="pip install 'kaleido>=1' (it uses the Chromium already installed)") from None
    browser = browser_path()
    error: BaseException | None = None
    for _ in range(ATTEMPTS):
        try:
            # kaleido returns the figures' errors rather than raising them, and deletes each failed file
            errors = kaleido.write_fig_from_object_sync(specs, kopts={"path": browser, "mathjax": False})
        except Exception as failed:   # the browser's failures arrive as many types
            errors = (failed,)
        specs = [spec for spec in specs if not spec["path"].is_file()]
        if not specs:
            return paths
        error = next(iter(errors or ()), None)
    detail = f": {type(error).__name__}: {str(error)[:300]}" if error is not None else ""
    raise MetricsError(f"{specs[0]['path']}: drawing the figure failed in {browser}{detail}",
                       fix="check that the browser starts (BROWSER_PATH), then try again")
