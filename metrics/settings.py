"""Operator settings, read from the environment in one place, typed and checked.

=========================== ==================================== ============== ===============
variable                    meaning                              personal       shared
=========================== ==================================== ============== ===============
NDCG_LAB_MODE               ``personal`` or ``shared``           personal
NDCG_LAB_HOME               folder of the workspace files        $XDG_DATA_HOME/ndcg-lab
NDCG_LAB_DATA_ROOTS         server folders visitors may read     none (off)     none (off)
                            (``os.pathsep``-separated)
NDCG_LAB_URL_SCHEMES        fsspec URL schemes allowed           none           none
                            (comma-separated: ``s3,gs,https``)
NDCG_LAB_INFLATE_LIMIT      bytes a compressed input may         min(4 GB, RAM/4)
                            inflate to
NDCG_LAB_INFLATE_TOTAL      inflated bytes all inputs being      the inflate limit
                            read at once may hold (one process)
NDCG_LAB_INFLATE_RATIO      times its compressed size a          20
                            compressed input may inflate to
                            (past its first 16 MiB)
NDCG_LAB_MAX_LINE           bytes of one line of a text input    1 MB
NDCG_LAB_UPLOAD_FILES       files in one upload                  64             16
NDCG_LAB_UPLOAD_BYTES       bytes in one upload                  4 GB           512 MB
NDCG_LAB_QUOTA_BYTES        data bytes one workspace may hold    unlimited      2 GB
NDCG_LAB_QUOTA_RUNS         runs one workspace may hold          unlimited      200
NDCG_LAB_TTL                idle time before a visitor's         7d             7d
                            workspace is removed
NDCG_LAB_OPEN_WORKSPACES    DuckDB files kept open at once       32             32
NDCG_LAB_WORKSPACE_MEMORY   DuckDB memory limit per open file    DuckDB's       512 MB
NDCG_LAB_PUBLIC_URL         the address visitors use (links)     http://localhost:8501/
NDCG_LAB_TASKS              who may create a class task:         anyone         key
                            ``anyone`` or ``key``
NDCG_LAB_INSTRUCTOR_KEY     the key that ``key`` asks for        none           none
NDCG_LAB_DEPLOYMENT         the deployment this process is one   none           none
                            of (set by ``ndcg-lab app
                            --replicas``: its processes share
                            NDCG_LAB_HOME)
=========================== ==================================== ============== ===============

Sizes are bytes, or a number with a unit (``512MB``, ``2GB`` decimal; ``2GiB`` binary);
quotas also take ``unlimited``. The TTL needs a unit (``7d``, ``12h``, ``30m``, ``1w``) or
``never``: a bare ``7`` would read as seven seconds, so it is refused. A bad value is a
one-line :class:`MetricsError` naming the variable, raised when the settings are loaded.

Reading server files is off unless ``NDCG_LAB_DATA_ROOTS`` lists folders (in both modes):
:func:`check_server_source` is the one gate that the readers and the app call before
opening a path or URL a user typed.
"""
from __future__ import annotations

import glob as globlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, overload

from .errors import MetricsError

__all__ = ["Settings", "load", "home", "check_server_source", "physical_memory", "MODES"]

MODES = ("personal", "shared")
TASK_PERMISSIONS = ("anyone", "key")
DEFAULT_PUBLIC_URL = "http://localhost:8501/"
GB = 10**9
MB = 10**6

_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": MB, "mb": MB, "g": GB, "gb": GB, "t": 10**12,
          "tb": 10**12, "ki": 2**10, "kib": 2**10, "mi": 2**20, "mib": 2**20, "gi": 2**30, "gib": 2**30,
          "ti": 2**40, "tib": 2**40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$", re.IGNORECASE)
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)\s*$", re.IGNORECASE)
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_UNLIMITED = ("unlimited", "none")
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*$")
_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_GLOB_CHARS = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class Settings:
    """Every operator setting; :func:`load` reads them from the environment.

    Sizes are bytes, ``ttl`` is seconds; ``None`` means no limit (quotas, TTL, memory, the inflate
    ratio), and for ``inflate_total`` the inflate limit (:attr:`inflate_budget`).
    ``data_roots`` are resolved folders (symlinks followed).
    """

    mode: str = "personal"
    home: Path = field(default_factory=lambda: home({}))
    data_roots: tuple[Path, ...] = ()
    url_schemes: frozenset[str] = frozenset()
    inflate_limit: int = 4 * GB
    inflate_total: int | None = None
    inflate_ratio: int | None = 20
    max_line: int = MB
    upload_files: int = 64
    upload_bytes: int = 4 * GB
    quota_bytes: int | None = None
    quota_runs: int | None = None
    ttl: float | None = 7 * 86400.0
    open_workspaces: int = 32
    workspace_memory: int | None = None
    public_url: str = DEFAULT_PUBLIC_URL
    tasks: str = "anyone"
    instructor_key: str | None = field(default=None, repr=False)
    deployment: str | None = None

    @property
    def inflate_budget(self) -> int:
        """Inflated bytes that every input read at once in this process may hold together."""
        return self.inflate_limit if self.inflate_total is None else self.inflate_total

    @property
    def shared(self) -> bool:
        return self.mode == "shared"

    @property
    def server_files(self) -> bool:
        """Whether a form for server paths or URLs may exist at all."""
        return bool(self.data_roots or self.url_schemes)


def _deployment(text: str) -> str | None:
    """``NDCG_LAB_DEPLOYMENT``: letters, digits, ``-`` and ``_``, at most 64 (it names a lock file)."""
    text = text.strip()
    if text and not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", text):
        raise MetricsError(f"NDCG_LAB_DEPLOYMENT must be 1-64 letters, digits, '-' or '_', not {text[:80]!r}",
                           source="NDCG_LAB_DEPLOYMENT", fix="unset it: ndcg-lab app --replicas sets it")
    return text or None


def load(env: Mapping[str, str] | None = None) -> Settings:
    """The settings from ``env`` (default ``os.environ``); MetricsError names a bad variable."""
    env = os.environ if env is None else env
    mode = (env.get("NDCG_LAB_MODE") or "personal").strip().lower()
    if mode not in MODES:
        raise _bad("NDCG_LAB_MODE", env["NDCG_LAB_MODE"], "personal or shared")
    shared = mode == "shared"
    return Settings(
        mode=mode,
        home=home(env),
        data_roots=_roots(env.get("NDCG_LAB_DATA_ROOTS", "")),
        url_schemes=_schemes(env.get("NDCG_LAB_URL_SCHEMES", "")),
        inflate_limit=_size(env, "NDCG_LAB_INFLATE_LIMIT", default_inflate_limit()),
        inflate_total=_size(env, "NDCG_LAB_INFLATE_TOTAL", None),
        inflate_ratio=_count(env, "NDCG_LAB_INFLATE_RATIO", 20, unlimited=True),
        max_line=_size(env, "NDCG_LAB_MAX_LINE", MB),
        upload_files=_count(env, "NDCG_LAB_UPLOAD_FILES", 16 if shared else 64),
        upload_bytes=_size(env, "NDCG_LAB_UPLOAD_BYTES", 512 * MB if shared else 4 * GB),
        quota_bytes=_size(env, "NDCG_LAB_QUOTA_BYTES", 2 * GB if shared else None, unlimited=True),
        quota_runs=_count(env, "NDCG_LAB_QUOTA_RUNS", 200 if shared else None, unlimited=True),
        ttl=_duration(env, "NDCG_LAB_TTL", 7 * 86400.0),
        open_workspaces=_count(env, "NDCG_LAB_OPEN_WORKSPACES", 32),
        workspace_memory=_size(env, "NDCG_LAB_WORKSPACE_MEMORY", 512 * MB if shared else None, unlimited=True),
        public_url=_public_url(env.get("NDCG_LAB_PUBLIC_URL", "")),
        tasks=_choice(env, "NDCG_LAB_TASKS", "key" if shared else "anyone", TASK_PERMISSIONS),
        instructor_key=(env.get("NDCG_LAB_INSTRUCTOR_KEY") or "").strip() or None,
        deployment=_deployment(env.get("NDCG_LAB_DEPLOYMENT", "")),
    )


def home(env: Mapping[str, str] | None = None) -> Path:
    """``$NDCG_LAB_HOME``, else ``$XDG_DATA_HOME/ndcg-lab``, else ``~/.local/share/ndcg-lab``."""
    env = os.environ if env is None else env
    if env.get("NDCG_LAB_HOME"):
        return Path(env["NDCG_LAB_HOME"]).expanduser()
    data = env.get("XDG_DATA_HOME") or Path(env.get("HOME") or Path.home()) / ".local" / "share"
    return Path(data).expanduser() / "ndcg-lab"


def physical_memory() -> int:
    """Bytes of memory this process may use: the machine's RAM, or the cgroup's limit if lower."""
    ram = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
    except OSError:
        return ram
    return min(ram, int(limit)) if limit.isdigit() else ram


def default_inflate_limit() -> int:
    """min(4 GB, RAM / 4): a compressed input never inflates past a quarter of the machine."""
    return min(4 * GB, physical_memory() // 4)


# -- server files ----------------------------------------------------------------------


def check_server_source(src, settings: Settings | None = None) -> str:
    """The path or URL ``src`` if this server may read it, else MetricsError.

    A local path is resolved (``~``, ``..`` and every symlink) and must lie under one of
    ``data_roots``; the resolved path is returned, so open that one, not ``src``. A glob
    is checked by its folder part, may not hold ``..``, and every file it matches now must
    resolve under a root too (a symlink inside a root may point anywhere); a reader checks each
    file it opens again, since the folder may change. A URL needs a scheme listed in
    ``url_schemes``; chained fsspec URLs (``::``) are refused. The check never opens the file,
    and its messages never quote it.
    """
    settings = load() if settings is None else settings
    text = os.fspath(src) if isinstance(src, os.PathLike) else str(src)
    given = text
    if "\x00" in text:
        raise MetricsError("the path holds a NUL byte", fix="type the path again")
    if not settings.server_files:
        raise MetricsError("reading files on the server is turned off here", source=given,
                           fix="upload the file instead; the operator can allow folders with "
                               "NDCG_LAB_DATA_ROOTS and URL schemes with NDCG_LAB_URL_SCHEMES")
    if "::" in text and "://" in text:
        raise MetricsError("chained URLs (with '::') are not allowed", source=given,
                           fix="give one plain URL or path")
    if text.startswith("file://"):
        text = text[len("file://"):]
    elif "://" in text:
        return _check_url(text, given, settings)
    if not settings.data_roots:
        raise MetricsError("reading server folders is turned off here (only URLs are allowed)", source=given,
                           fix=f"give a URL ({_listed(settings.url_schemes, '://...')}), or upload the file")
    parts = Path(os.path.expanduser(text)).parts
    first_glob = next((i for i, part in enumerate(parts) if _GLOB_CHARS.search(part)), None)
    if first_glob is not None:
        if ".." in parts:
            raise MetricsError("a pattern may not hold '..'", source=given, fix="give the folder without '..'")
        folder = Path(os.path.realpath(Path(*parts[:first_glob]) if first_glob else "."))
        _under_root(folder, given, settings)
        pattern = str(folder.joinpath(*parts[first_glob:]))
        for match in globlib.iglob(pattern):
            _under_root(Path(os.path.realpath(match)), given, settings)
        return pattern
    resolved = Path(os.path.realpath(os.path.expanduser(text)))
    _under_root(resolved, given, settings)
    if not resolved.exists():
        raise MetricsError("no such file or folder", source=given, fix="check the path")
    if not (resolved.is_file() or resolved.is_dir()):
        raise MetricsError("not a regular file or folder", source=given, fix="give a file or a folder of files")
    return str(resolved)


def _under_root(resolved: Path, given: str, settings: Settings) -> None:
    if not any(resolved == root or resolved.is_relative_to(root) for root in settings.data_roots):
        raise MetricsError("the path is outside the folders this server may read", source=given,
                           fix=f"give a path under {_listed(settings.data_roots)}")


def _check_url(text: str, given: str, settings: Settings) -> str:
    match = _URL.match(text)
    scheme = match.group(1).lower() if match else None
    if scheme is None or scheme not in settings.url_schemes:
        what = f"the scheme {scheme!r}" if scheme else "no valid scheme"
        raise MetricsError(f"URLs with {what} are not allowed here", source=given,
                           fix=(f"allowed: {_listed(settings.url_schemes, '://')}" if settings.url_schemes
                                else "upload the file instead; the operator can allow schemes with "
                                     "NDCG_LAB_URL_SCHEMES"))
    return text


def _listed(items, suffix: str = "") -> str:
    return ", ".join(f"{item}{suffix}" for item in sorted(map(str, items))) or "none"


# -- parsing ---------------------------------------------------------------------------


def _bad(variable: str, value: str, expected: str) -> MetricsError:
    return MetricsError(f"expected {expected}, found {value!r}", source=variable,
                        fix=f"set {variable} to a valid value or unset it for the default")


def _roots(text: str) -> tuple[Path, ...]:
    roots = []
    for item in (t.strip() for t in text.split(os.pathsep)):
        if not item:
            continue
        path = Path(item).expanduser()
        if not path.is_absolute():
            raise _bad("NDCG_LAB_DATA_ROOTS", item, "absolute folder paths")
        resolved = Path(os.path.realpath(path))
        if not resolved.is_dir():
            raise MetricsError(f"{item!r} is not a folder", source="NDCG_LAB_DATA_ROOTS",
                               fix="list existing folders, separated by " + repr(os.pathsep))
        roots.append(resolved)
    return tuple(dict.fromkeys(roots))


def _schemes(text: str) -> frozenset[str]:
    schemes = set()
    for item in (t.strip().lower().removesuffix("://") for t in text.split(",")):
        if not item:
            continue
        if not _SCHEME.match(item) or item == "file":
            raise _bad("NDCG_LAB_URL_SCHEMES", item, "URL schemes such as s3, gs or https (file paths "
                                                      "go in NDCG_LAB_DATA_ROOTS)")
        schemes.add(item)
    return frozenset(schemes)


def _setting(env, variable: str, default, parse, *, unlimited: tuple[str, ...] = ()):
    """``parse(variable, text)`` of a set variable; ``default`` when unset or empty; None for a
    word in ``unlimited``."""
    text = env.get(variable, "").strip()
    if not text:
        return default
    if text.lower() in unlimited:
        return None
    return parse(variable, text)


def human_bytes(n: int) -> str:
    """A byte count for people: ``1.5 GB``, ``320.0 MB``, ``12 B``."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n} B"


@overload
def _size(env: Mapping[str, str], variable: str, default: int, *, unlimited: Literal[False] = False) -> int: ...
@overload
def _size(env: Mapping[str, str], variable: str, default: int | None, *, unlimited: bool = False) -> int | None: ...
def _size(env: Mapping[str, str], variable: str, default: int | None, *, unlimited: bool = False) -> int | None:
    def parse(variable, text):
        match = _SIZE.match(text)
        unit = match.group(2).lower() if match else None
        if match is None or unit not in _UNITS or float(match.group(1)) * _UNITS[unit] < 1:
            raise _bad(variable, text, "a size such as 512MB or 2GiB" + (" (or unlimited)" if unlimited else ""))
        return int(float(match.group(1)) * _UNITS[unit])

    return _setting(env, variable, default, parse, unlimited=_UNLIMITED if unlimited else ())


@overload
def _count(env: Mapping[str, str], variable: str, default: int, *, unlimited: Literal[False] = False) -> int: ...
@overload
def _count(env: Mapping[str, str], variable: str, default: int | None, *, unlimited: bool = False) -> int | None: ...
def _count(env: Mapping[str, str], variable: str, default: int | None, *, unlimited: bool = False) -> int | None:
    def parse(variable, text):
        if not text.isdigit() or int(text) < 1:
            raise _bad(variable, text, "a whole number of at least 1" + (" (or unlimited)" if unlimited else ""))
        return int(text)

    return _setting(env, variable, default, parse, unlimited=_UNLIMITED if unlimited else ())


def _choice(env, variable: str, default: str, choices: tuple[str, ...]) -> str:
    text = (env.get(variable) or "").strip().lower()
    if not text:
        return default
    if text not in choices:
        raise _bad(variable, env[variable], " or ".join(choices))
    return text


def _public_url(text: str) -> str:
    """An http(s) address ending in ``/`` (added when missing); the default when empty."""
    text = text.strip()
    if not text:
        return DEFAULT_PUBLIC_URL
    if not re.match(r"^https?://[^\s/?#]+(/[^\s?#]*)?$", text):
        raise _bad("NDCG_LAB_PUBLIC_URL", text, "an http:// or https:// address without a query")
    return text if text.endswith("/") else text + "/"


def _duration(env, variable: str, default: float | None) -> float | None:
    def parse(variable, text):
        match = _DURATION.match(text)
        if match is None or float(match.group(1)) <= 0:
            raise _bad(variable, text, "a duration with a unit such as 7d, 12h or 30m (or never)")
        return float(match.group(1)) * _SECONDS[match.group(2).lower()]

    return _setting(env, variable, default, parse, unlimited=("never",))
