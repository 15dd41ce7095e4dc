"""Live checks in class: a question open for a few minutes, answered from phones, counted.

One small DuckDB file (``live.duckdb`` under the app's home) holds, per check, its short code,
the exercise link token (the question, never its answer), a SHA-256 of the teacher's key,
when it opened and when it closes; and per (check, answer) a count. Nothing about who
answered is stored: no session, no address, no time of an answer. Each answer is one
transaction (an upsert of its count), so concurrent answers are never lost. A check closes by
itself at ``closes``; answers after that are refused. The file is a
:class:`~metrics.store.connection.Connection`: the processes of one deployment take turns on it.
"""
from __future__ import annotations

import secrets
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import MetricsError
from .connection import Connection
from .registry import token_hash

__all__ = ["LiveChecks", "Check", "CheckClosed", "CODE_ALPHABET", "DEFAULT_MINUTES", "FILE_NAME"]

FILE_NAME = "live.duckdb"
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read from a projector
CODE_LENGTH = 6
DEFAULT_MINUTES = 10
MAX_MINUTES = 120
MAX_ANSWER = 40  # characters of one answer's bucket (a rounded number or an option)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS live_check (code VARCHAR PRIMARY KEY, token VARCHAR NOT NULL, key_hash VARCHAR NOT NULL,
                                       opened DOUBLE NOT NULL, closes DOUBLE NOT NULL);
CREATE TABLE IF NOT EXISTS live_count (code VARCHAR NOT NULL, answer VARCHAR NOT NULL, n BIGINT NOT NULL,
                                       PRIMARY KEY (code, answer));
"""


def _create_tables(con) -> None:
    """Run at each opening of the file (another process may have made it meanwhile)."""
    con.execute(_SCHEMA)


class CheckClosed(MetricsError):
    """The check is closed (its time ran out) or unknown."""


@dataclass(frozen=True)
class Check:
    code: str
    token: str
    opened: float
    closes: float

    def is_open(self, now: float | None = None) -> bool:
        return (time.time() if now is None else now) < self.closes

    def seconds_left(self, now: float | None = None) -> int:
        return max(0, int(self.closes - (time.time() if now is None else now)))


class LiveChecks:
    """The live checks of one server process, in ``home / live.duckdb``."""

    def __init__(self, home: Path | str, *, clock=time.time) -> None:
        self.path = Path(home) / FILE_NAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.clock = clock
        self._lock = threading.Lock()
        self._conn = Connection(self.path, read_only=False, memory_limit=None, on_use=None,
                                describe=_create_tables)

    def close(self) -> None:
        with self._lock:
            self._conn.close(lambda: MetricsError("the live checks are closed"))

    @contextmanager
    def _cursor(self):
        """A cursor of the file, under this object's lock (one operation at a time)."""
        with self._lock, self._conn.cursor() as cur:
            yield cur

    def open(self, token: str, minutes: float = DEFAULT_MINUTES) -> tuple[Check, str]:
        """Open a check of the exercise ``token`` for ``minutes``: the check and the teacher's key."""
        if not 0 < minutes <= MAX_MINUTES:
            raise MetricsError(f"a live check stays open 1 to {MAX_MINUTES} minutes, not {minutes}")
        key = secrets.token_urlsafe(16)
        now = self.clock()
        with self._cursor() as cur:
            for _ in range(20):
                code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
                if not cur.execute("SELECT 1 FROM live_check WHERE code = ?", [code]).fetchone():
                    break
            cur.execute("INSERT INTO live_check VALUES (?, ?, ?, ?, ?)",
                        [code, token, token_hash(key), now, now + minutes * 60])
        return Check(code, token, now, now + minutes * 60), key

    def get(self, code: str) -> Check:
        """The check of ``code`` (open or closed); an unknown code raises :class:`CheckClosed`."""
        code = str(code).strip().upper()
        with self._cursor() as cur:
            row = cur.execute("SELECT code, token, opened, closes FROM live_check WHERE code = ?",
                                             [code]).fetchone()
        if row is None:
            raise CheckClosed(f"no live check has the code {code!r}", fix="check the code on the projector")
        return Check(*row)

    def is_teacher(self, code: str, key: str) -> bool:
        with self._cursor() as cur:
            row = cur.execute("SELECT key_hash FROM live_check WHERE code = ?",
                                             [str(code).upper()]).fetchone()
        return row is not None and secrets.compare_digest(row[0], token_hash(str(key)))

    def answer(self, code: str, answer: str) -> None:
        """Count one answer, in one transaction; refused once the check has closed."""
        answer = str(answer)[:MAX_ANSWER]
        check = self.get(code)
        if not check.is_open(self.clock()):
            raise CheckClosed("this live check is closed", fix="ask your teacher for a new code")
        with self._cursor() as cur:
            cur.execute("BEGIN TRANSACTION")
            try:
                cur.execute("INSERT INTO live_count VALUES (?, ?, 1) "
                            "ON CONFLICT (code, answer) DO UPDATE SET n = n + 1", [check.code, answer])
                cur.execute("COMMIT")
            except BaseException:
                cur.execute("ROLLBACK")
                raise

    def counts(self, code: str) -> dict[str, int]:
        """The number of answers of each kind, most frequent first."""
        with self._cursor() as cur:
            rows = cur.execute("SELECT answer, n FROM live_count WHERE code = ? ORDER BY n DESC, answer",
                                              [str(code).upper()]).fetchall()
        return {a: int(n) for a, n in rows}

    def close_now(self, code: str) -> None:
        """Close the check at once (the teacher's button)."""
        with self._cursor() as cur:
            cur.execute("UPDATE live_check SET closes = LEAST(closes, ?) WHERE code = ?",
                                       [self.clock(), str(code).upper()])
