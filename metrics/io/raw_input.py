"""One input's raw bytes, a file or bytes in memory, opened as often as a reader needs
(:class:`RawInput`), and their sha256 computed on a second thread while they are parsed."""
from __future__ import annotations

import contextlib
import hashlib
import io as _stdio
import os
import threading

from .inflate import open_decompressed
from .sniff import compression_of


class RawInput:
    """The raw bytes of one input, a file or bytes in memory, opened as often as a reader needs:
    :meth:`text` streams its text (inflated when its magic bytes name a compression)."""

    def __init__(self, *, path=None, raw: bytes | None = None):
        self.path, self.raw = path, raw
        if raw is not None:
            self.compression, self.size = compression_of(raw[:6]), len(raw)
        else:
            with open(path, "rb") as f:
                self.compression, self.size = compression_of(f.read(6)), os.fstat(f.fileno()).st_size

    @contextlib.contextmanager
    def text(self):
        """(a binary stream of the text: the bytes as they are, or inflated; a function that
        answers how many raw bytes have been read so far, read-ahead buffers included)."""
        with contextlib.ExitStack() as stack:
            raw = stack.enter_context(open(self.path, "rb")) if self.raw is None else _stdio.BytesIO(self.raw)
            stream = open_decompressed(raw, self.compression)
            if stream is not raw:
                stack.callback(stream.close)
            yield stream, raw.tell

    def digest_later(self):
        """:func:`sha256_later` of the raw bytes (compressed bytes for a compressed input)."""
        return sha256_later(self.path if self.raw is None else self.raw)


def sha256_later(raw):
    """sha256 of ``raw`` (bytes, or a path: the file's bytes) computed on a second thread
    (hashlib releases the GIL) while we parse; call the result for the hex digest.

    The thread is not a daemon: when parsing fails, the interpreter may start to exit while the
    hash still runs in C without the GIL. A daemon thread that then asks for the GIL back is
    ended by ``pthread_exit`` in the middle of finalisation, which can abort the process
    (SIGABRT, exit 134); a normal thread is joined before finalisation begins.
    """
    if isinstance(raw, (bytes, bytearray, memoryview)) and len(raw) < (1 << 20):
        digest = hashlib.sha256(raw).hexdigest()
        return lambda: digest
    box: dict = {}
    worker = threading.Thread(target=lambda: box.setdefault("hex", _sha256(raw)), name="ndcg-lab-sha256",
                              daemon=False)
    worker.start()

    def result() -> str:
        worker.join()
        return box["hex"]
    return result


def _sha256(raw) -> str:
    if isinstance(raw, (bytes, bytearray, memoryview)):
        return hashlib.sha256(raw).hexdigest()
    with open(raw, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()
