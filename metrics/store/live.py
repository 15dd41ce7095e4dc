"""Live checks in class: a question open for a few minutes, answered from phones, counted.

One SQLite file (``live.sqlite3`` under the app's home, through
:class:`~metrics.store.registry.Registry`, so every server process of a lecture shares it) holds,
per check, its short code, the exercise link token (the question, never its answer), a SHA-256
of the teacher's key, when it opened, when it closes and when its answer was revealed; and per
answer the text typed, whether it was right, and a SHA-256 of (code, device id). The device id
is a random id the student's browser keeps; its hash per check lets a device answer once and
cannot link two checks. Nothing else about who answered is stored: no session, no address, no
time of an answer.

A device's second answer is refused and changes nothing (the primary key (code, device) in one
transaction). A check takes no answer once it closed or its answer was revealed (revealing closes
it). Whether an answer is right is decided by the caller on the value typed, never on a rounded
one.
"""
from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import MetricsError
from .registry import Registry, token_hash

__all__ = ["LiveChecks", "Check", "CheckClosed", "Tally", "CODE_ALPHABET", "DEFAULT_MINUTES", "FILE_NAME"]

FILE_NAME = "live.sqlite3"
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read from a projector
CODE_LENGTH = 6
DEFAULT_MINUTES = 10
MAX_MINUTES = 120
MAX_ANSWER = 40  # characters of one answer as stored (a number as typed, an option's label)
MAX_DEVICE = 128

_SCHEMA = """
CREATE TABLE IF NOT EXISTS live_check (code TEXT PRIMARY KEY, token TEXT NOT NULL, key_hash TEXT NOT NULL,
                                       opened REAL NOT NULL, closes REAL NOT NULL, revealed REAL);
CREATE TABLE IF NOT EXISTS live_answer (code TEXT NOT NULL, device_hash TEXT NOT NULL, answer TEXT NOT NULL,
                                        correct INTEGER NOT NULL, PRIMARY KEY (code, device_hash));
"""


class CheckClosed(MetricsError):
    """The check is closed (its time ran out, or its answer was revealed) or unknown."""


@dataclass(frozen=True)
class Check:
    code: str
    token: str
    opened: float
    closes: float
    revealed: float | None = None

    def is_open(self, now: float | None = None) -> bool:
        return self.revealed is None and (time.time() if now is None else now) < self.closes

    def seconds_left(self, now: float | None = None) -> int:
        if self.revealed is not None:
            return 0
        return max(0, int(self.closes - (time.time() if now is None else now)))


@dataclass(frozen=True)
class Tally:
    """The answers of one kind: the text, how many devices sent it, and whether it is right."""

    answer: str
    n: int
    correct: bool


def device_hash(code: str, device: str) -> str:
    """What a check keeps of a device: sha256(code, device id), hex (no link between two checks)."""
    return hashlib.sha256(f"{code}\0{device}".encode()).hexdigest()


class LiveChecks:
    """The live checks of a server, in ``home / live.sqlite3``."""

    def __init__(self, home: Path | str, *, clock=time.time) -> None:
        self.path = Path(home) / FILE_NAME
        self.clock = clock
        self._registry = Registry(self.path, _SCHEMA)

    def close(self) -> None:
        self._registry.close()

    def open(self, token: str, minutes: float = DEFAULT_MINUTES) -> tuple[Check, str]:
        """Open a check of the exercise ``token`` for ``minutes``: the check and the teacher's key."""
        if not 0 < minutes <= MAX_MINUTES:
            raise MetricsError(f"a live check stays open 1 to {MAX_MINUTES} minutes, not {minutes}")
        key = secrets.token_urlsafe(16)
        now = self.clock()
        with self._registry.write() as db:
            for _ in range(20):
                code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
                if not db.execute("SELECT 1 FROM live_check WHERE code = ?", (code,)).fetchone():
                    break
            db.execute("INSERT INTO live_check VALUES (?, ?, ?, ?, ?, NULL)",
                       (code, token, token_hash(key), now, now + minutes * 60))
        return Check(code, token, now, now + minutes * 60), key

    def get(self, code: str) -> Check:
        """The check of ``code`` (open or closed); an unknown code raises :class:`CheckClosed`."""
        code = str(code).strip().upper()[:CODE_LENGTH + 10]
        rows = self._registry.rows("SELECT code, token, opened, closes, revealed FROM live_check WHERE code = ?",
                                   (code,))
        if not rows:
            raise CheckClosed(f"no live check has the code {code!r}", fix="check the code on the projector")
        return Check(*rows[0])

    def is_teacher(self, code: str, key: str) -> bool:
        rows = self._registry.rows("SELECT key_hash FROM live_check WHERE code = ?", (str(code).upper(),))
        return bool(rows) and secrets.compare_digest(rows[0][0], token_hash(str(key)))

    def answer(self, code: str, device: str, answer: str, correct: bool) -> bool:
        """Count one device's answer, in one transaction: True if counted, False if this device had
        answered already (the first answer stays). Refused once the check has closed or revealed."""
        device = str(device)
        if not 16 <= len(device) <= MAX_DEVICE:
            raise MetricsError("this browser has no device id", fix="allow cookies for this site and reload")
        check = self.get(code)
        with self._registry.write() as db:
            row = db.execute("SELECT closes, revealed FROM live_check WHERE code = ?", (check.code,)).fetchone()
            if row[1] is not None or self.clock() >= row[0]:
                raise CheckClosed("this live check is closed", fix="ask your teacher for a new code")
            cursor = db.execute("INSERT OR IGNORE INTO live_answer VALUES (?, ?, ?, ?)",
                                (check.code, device_hash(check.code, device), str(answer)[:MAX_ANSWER],
                                 int(bool(correct))))
            return cursor.rowcount == 1

    def has_answered(self, code: str, device: str) -> bool:
        code = str(code).upper()
        return bool(self._registry.rows("SELECT 1 FROM live_answer WHERE code = ? AND device_hash = ?",
                                        (code, device_hash(code, str(device)))))

    def tally(self, code: str) -> list[Tally]:
        """The answers grouped by text, most frequent first."""
        rows = self._registry.rows("SELECT answer, COUNT(*), MAX(correct) FROM live_answer WHERE code = ? "
                                   "GROUP BY answer ORDER BY COUNT(*) DESC, answer", (str(code).upper(),))
        return [Tally(a, int(n), bool(c)) for a, n, c in rows]

    def counts(self, code: str) -> dict[str, int]:
        """The number of answers of each kind, most frequent first."""
        return {t.answer: t.n for t in self.tally(code)}

    def reveal(self, code: str) -> None:
        """Reveal the answer (the teacher's button): the check takes no more answers."""
        with self._registry.write() as db:
            db.execute("UPDATE live_check SET revealed = COALESCE(revealed, ?), closes = MIN(closes, ?) "
                       "WHERE code = ?", (self.clock(), self.clock(), str(code).upper()))

    def close_now(self, code: str) -> None:
        """Close the check at once (the teacher's button)."""
        with self._registry.write() as db:
            db.execute("UPDATE live_check SET closes = MIN(closes, ?) WHERE code = ?",
                       (self.clock(), str(code).upper()))
