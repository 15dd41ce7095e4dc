"""Where inputs are: local paths, fsspec URLs, globs and folders of part files (as Spark or Dask
write them); the files they expand to, checked against the server's data roots when a visitor
named them; a file's first bytes through its filesystem; the system name a file or a glob gives."""
from __future__ import annotations

import glob as globlib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from .. import settings as settings_module
from ..errors import MetricsError

if TYPE_CHECKING:
    import pyarrow.fs as pafs


_COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".zstd")


_GLOB_CHARS = re.compile(r"[*?\[]")


def stem(file_name: str) -> str:
    """``bm25.run.gz`` -> ``bm25``: drop a compression suffix, then one more suffix."""
    base = file_name
    for suffix in _COMPRESSION_SUFFIXES:
        if base.lower().endswith(suffix) and len(base) > len(suffix):
            base = base[: -len(suffix)]
            break
    stem = Path(base).stem
    return stem or base


def is_url(path: str) -> bool:
    return "://" in path and not path.startswith("file://")


def filesystem(path: str) -> tuple[pafs.FileSystem, str]:
    """A pyarrow filesystem and the path on it: local paths directly, URLs through fsspec.

    pyarrow.fs is imported here, not with the module: it brings the S3, GCS, Azure and HDFS
    bindings and ssl (about 23 ms), which a command on local files never needs."""
    import pyarrow.fs as pafs

    path = str(path)
    if path.startswith("file://"):
        path = path[len("file://"):]
    if not is_url(path):
        return pafs.LocalFileSystem(), os.path.abspath(os.path.expanduser(path))
    try:
        import fsspec
    except ImportError:  # pragma: no cover - fsspec comes with dask
        raise MetricsError(f"cannot open {path!r}: fsspec is not installed", fix="pip install fsspec") from None
    try:
        fs, inner = fsspec.core.url_to_fs(path)
    except (ImportError, ValueError) as exc:
        raise MetricsError(f"cannot open {path!r}: {exc}",
                           fix="install the fsspec driver for this protocol (s3fs, gcsfs, adlfs, ...)") from None
    return pafs.PyFileSystem(pafs.FSSpecHandler(fs)), inner


def join_path(base: str, *names: str) -> str:
    return "/".join([base.rstrip("/"), *names])


def display_name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def expand(src, *, allowed: settings_module.Settings | None = None) -> list[str]:
    """Input files of one run: a path or fsspec URL, a glob of them, or a list/tuple of those; sorted per glob.

    ``allowed``: None when the caller is the local user (the CLI, a Python program): every path
    its account can read is fine. Settings when the paths come from a visitor of the app: each
    pattern and every file it expands to must pass :func:`metrics.settings.check_server_source`
    (under a data root once symlinks are resolved, or a listed URL scheme); the resolved
    paths are returned.
    """
    if isinstance(src, (str, Path)):
        items = [str(src)]
    elif isinstance(src, (list, tuple)) and src and all(isinstance(x, (str, Path)) for x in src):
        items = [str(x) for x in src]
    else:
        raise MetricsError(f"cannot read run files from a {type(src).__name__}",
                           fix="give a path, a glob such as 'runs/part-*.txt', or a list of paths")
    if allowed is not None:
        items = [settings_module.check_server_source(item, allowed) for item in items]
    files: list[str] = []
    for item in items:
        if _GLOB_CHARS.search(item) and not (not is_url(item) and os.path.exists(os.path.expanduser(item))):
            if is_url(item):
                import fsspec
                fs, inner = fsspec.core.url_to_fs(item)
                found = sorted(fs.unstrip_protocol(p) for p in fs.glob(inner))
            else:
                found = sorted(globlib.glob(os.path.expanduser(item)))
            found = [f for f in found if not os.path.isdir(f)] if not is_url(item) else found
            if not found:
                raise MetricsError(f"no file matches {item!r}" if allowed is None else "no file matches the pattern",
                                   source=display_name(item),
                                   fix="check the pattern (a glob such as runs/part-*.txt)")
            files += found
        elif _is_directory(item):
            files += _directory_files(item)
        else:
            files.append(item if is_url(item) else os.path.abspath(os.path.expanduser(item)))
    if allowed is not None:
        files = [settings_module.check_server_source(f, allowed) for f in files]
    return files


def _is_directory(item: str) -> bool:
    if not is_url(item):
        return os.path.isdir(os.path.expanduser(item))
    fs, inner = filesystem(item)
    return fs.get_file_info(inner).type == _file_type().Directory


def _directory_files(item: str) -> list[str]:
    """The data files of a folder (as Spark or Dask write them), without _SUCCESS, .crc and other hidden files."""
    fs, inner = filesystem(item)
    import pyarrow.fs as pafs

    infos = fs.get_file_info(pafs.FileSelector(inner, recursive=True))
    found = sorted(i.path for i in infos if i.type == pafs.FileType.File
                   and not any(p.startswith(("_", ".")) for p in i.path[len(inner):].split("/") if p))
    if not found:
        raise MetricsError(f"the folder {item!r} holds no run files", source=display_name(item),
                           fix="give the folder of the run's files, or a glob such as folder/part-*")
    if is_url(item):
        prefix = item.split("://", 1)[0] + "://"
        return [prefix + p.lstrip("/") if not p.startswith(prefix) else p for p in found]
    return found


def is_shards(value) -> bool:
    """A run given as files to combine: a glob, a URL, or a list/tuple of paths (as one run)."""
    if isinstance(value, (str, Path)):
        text = str(value)
        local = os.path.expanduser(text)
        return is_url(text) or os.path.isdir(local) or (bool(_GLOB_CHARS.search(text)) and not os.path.exists(local))
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(x, (str, Path)) for x in value)


def shard_name(value) -> str:
    """System name of a run given as files: the file's stem, or the glob's without its wildcards
    (``runs/bm25-*.txt`` -> ``bm25``; ``runs/bm25/*.txt`` -> ``bm25``)."""
    first = str(value[0]) if isinstance(value, (list, tuple)) else str(value)
    base = display_name(first)
    if not _GLOB_CHARS.search(base) and not isinstance(value, (list, tuple)):
        return stem(base) or "run"
    base = re.sub(r"\[[^\]]*\]", "", base)
    base = re.sub(r"[-_.]*[*?]+", "", base)
    found = stem(base).strip("-_.") if base and not base.startswith(".") else ""
    if not found or isinstance(value, (list, tuple)) and len(value) > 1 and not _GLOB_CHARS.search(first):
        parent = display_name(first.rstrip("/").rsplit("/", 1)[0]) if "/" in first else ""
        found = found or parent
    return found or "run"


def _file_type():
    """pyarrow.fs.FileType, imported when a filesystem is in use (see :func:`filesystem`)."""
    import pyarrow.fs as pafs

    return pafs.FileType


def peek(fs: pafs.FileSystem, path: str, source: str) -> tuple[bytes, int]:
    try:
        info = fs.get_file_info(path)
    except (OSError, pa.ArrowException) as exc:
        raise MetricsError(f"cannot read {source!r}: {exc}", source=source, fix="check the path") from None
    if info.type == _file_type().NotFound:
        raise MetricsError(f"no such file: {path!r}", source=source, fix="check the path")
    if info.type == _file_type().Directory:
        raise MetricsError(f"{path!r} is a folder, not a file", source=source,
                           fix="give the run files inside it (a glob such as folder/*.txt)")
    with fs.open_input_file(path) as f:
        return f.read(65536), int(info.size)
