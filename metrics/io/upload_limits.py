"""The operator's bounds on one upload (``upload_files`` files and ``upload_bytes`` bytes,
:func:`metrics.settings.load`): which files of an upload are read, and why the others are not."""
from __future__ import annotations

from .. import settings as settings_module
from ..errors import MetricsError


def upload_refusals(files, settings: settings_module.Settings | None = None) -> list[MetricsError | None]:
    """For each file of one upload, in order: None when the operator's bounds keep it, else the
    MetricsError that says why not (``upload_files`` files and ``upload_bytes`` bytes in all, of
    :func:`metrics.settings.load`). Files are kept in order while both bounds hold; a file that
    would pass one is refused and the later ones still tried (a smaller one may fit).

    ``files``: the uploaded files, each with ``size`` (Streamlit's ``UploadedFile``) or bytes,
    or (name, bytes or size) pairs.
    """
    settings = settings_module.load() if settings is None else settings
    refusals: list[MetricsError | None] = []
    kept, total = 0, 0
    for item in files:
        size = _upload_size(item)
        if kept >= settings.upload_files:
            problem = f"more than {settings.upload_files} files in one upload"
            fix = "upload the rest in another batch (NDCG_LAB_UPLOAD_FILES sets the bound)"
        elif total + size > settings.upload_bytes:
            problem = f"the upload would exceed {settings_module.human_bytes(settings.upload_bytes)}"
            fix = ("compress the files (gzip, bz2, xz, zstd) or upload fewer or smaller ones at once "
                   "(NDCG_LAB_UPLOAD_BYTES sets the bound)")
        else:
            refusals.append(None)
            kept, total = kept + 1, total + size
            continue
        refusals.append(MetricsError(f"not read: {problem}", source=_upload_name(item), fix=fix))
    return refusals


def check_upload(files, settings: settings_module.Settings | None = None) -> None:
    """MetricsError, the first of :func:`upload_refusals`, when the bounds refuse a file of the upload."""
    refused = next((r for r in upload_refusals(files, settings) if r is not None), None)
    if refused is not None:
        raise refused


def _upload_name(item) -> str | None:
    if isinstance(item, tuple) and len(item) == 2:
        return str(item[0])
    return getattr(item, "name", None)


def _upload_size(item) -> int:
    if isinstance(item, tuple) and len(item) == 2:
        item = item[1]
    if isinstance(item, int):
        return item
    if isinstance(item, (bytes, bytearray, memoryview)):
        return len(item)
    size = getattr(item, "size", None)
    if isinstance(size, int):
        return size
    return len(item.getvalue())
