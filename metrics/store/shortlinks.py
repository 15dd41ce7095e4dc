"""Short links: ``/s/`` plus 8 characters for a long address of the same server, so that a class
can type (or scan) what a projector shows.

The registry is one SQLite file under the app's home (``shortlinks.sqlite3``, through
:class:`~metrics.store.registry.Registry`): every server process of a lecture reads and writes
it at once, each write one transaction. A target is an address relative to the app's root
(``learn?live=ABC234``): never a scheme, a host or a path that climbs out of the app, so a short
link cannot send a class to another site. One target keeps one code (asking twice gives the
same link); a code is drawn at random from 32 characters that read apart on a projector (no 0/O,
1/I), 32^8 = 2^40 codes, and a draw that hits a taken code draws again.
"""
from __future__ import annotations

import re
import secrets
import sqlite3
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import MetricsError
from .registry import Registry

__all__ = ["ALPHABET", "FILE_NAME", "LENGTH", "MAX_TARGET", "ShortLinks", "UnknownLink"]

FILE_NAME = "shortlinks.sqlite3"
ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
LENGTH = 8
MAX_TARGET = 4000  # characters: a sandbox of 20 documents with names is about 600
_DRAWS = 20

_SCHEMA = """
CREATE TABLE IF NOT EXISTS short_link (code TEXT PRIMARY KEY, target TEXT NOT NULL UNIQUE);
"""
_CODE = re.compile(f"[{ALPHABET}]{{{LENGTH}}}")


class UnknownLink(MetricsError):
    """A short code that is malformed or that this server never gave out."""


def _draw() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))


def check_target(target: str) -> str:
    """``target`` if it is an address inside this app (relative, no scheme or host, no ``..``,
    no control character, at most :data:`MAX_TARGET` characters); a MetricsError otherwise."""
    target = str(target)
    parts = urlsplit(target)
    if not target or len(target) > MAX_TARGET:
        raise MetricsError(f"a short link's address holds 1 to {MAX_TARGET} characters, not {len(target)}")
    if (parts.scheme or parts.netloc or target.startswith(("/", "\\")) or "\\" in target
            or ".." in parts.path.split("/") or any(ord(c) < 32 or ord(c) == 127 for c in target)):
        raise MetricsError(f"a short link leads to a page of this app (like 'learn?live=ABC234'), "
                           f"not to {target[:80]!r}")
    return target


def normalise(code: str) -> str:
    """A typed code as stored: without spaces, in capitals; an UnknownLink if it cannot be one."""
    text = str(code).strip().upper()
    if not _CODE.fullmatch(text):
        shown = text[:20] + ("…" if len(text) > 20 else "")
        raise UnknownLink(f"{shown!r} is not a short link of this server",
                          fix=f"a short link is /s/ and {LENGTH} characters (letters and digits 2-9)")
    return text


class ShortLinks:
    """The short links of the server whose home is ``home``."""

    def __init__(self, home: Path | str, *, draw: Callable[[], str] = _draw) -> None:
        self.path = Path(home) / FILE_NAME
        self._registry = Registry(self.path, _SCHEMA)
        self._draw = draw

    def close(self) -> None:
        self._registry.close()

    def shorten(self, target: str) -> str:
        """The code of ``target`` (made on first use, the same code afterwards)."""
        target = check_target(target)
        for _ in range(_DRAWS):
            code = self._draw()
            try:
                with self._registry.write() as db:
                    row = db.execute("SELECT code FROM short_link WHERE target = ?", (target,)).fetchone()
                    if row is not None:
                        return str(row[0])
                    db.execute("INSERT INTO short_link VALUES (?, ?)", (code, target))
                return code
            except sqlite3.IntegrityError:
                continue  # the code is taken (by another target): draw again
        raise MetricsError(f"no free short code in {_DRAWS} draws", fix="try again")

    def resolve(self, code: str) -> str:
        """The target of ``code``; an :class:`UnknownLink` naming the code if there is none."""
        code = normalise(code)
        rows = self._registry.rows("SELECT target FROM short_link WHERE code = ?", (code,))
        if not rows:
            raise UnknownLink(f"no short link /s/{code} on this server",
                              fix="check the letters on the projector (or ask for the link again)")
        return str(rows[0][0])
