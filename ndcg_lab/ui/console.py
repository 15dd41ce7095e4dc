"""The ``ndcg-lab`` console command: ``ndcg-lab app [--mode personal|shared] [streamlit options]``
starts the dashboard, every other subcommand is the library's command line (``ndcg-lab
eval|lint|compare|negatives``, the same as ``python -m metrics``).

``ndcg-lab app`` runs the package's own entry script (:data:`ndcg_lab.ui.paths.APP`), the way
``streamlit hello`` runs the script bundled in Streamlit: Streamlit reads the settings beside that
script (``ndcg_lab/.streamlit/config.toml``) whatever the working folder, which stays the caller's.
Streamlit replaces this process (``os.execve``: same pid, so a signal sent to ``ndcg-lab app``,
SIGTERM from a supervisor or Ctrl-C, reaches the server itself and no child is orphaned).
The operator settings (:mod:`metrics.settings`) are checked before it starts, and become Streamlit flags:
the upload limit (``NDCG_LAB_UPLOAD_BYTES`` -> ``server.maxUploadSize``) always; for ``shared`` mode also no
developer toolbar for visitors and XSRF protection on. Flags given on the command line win.
"""
from __future__ import annotations

import math
import os
import sys

from metrics import settings
from metrics.cli import leave
from metrics.cli import main as cli_main
from metrics.errors import MetricsError
from ndcg_lab.ui.paths import APP

PROG = "ndcg-lab"


def streamlit_flags(config: settings.Settings) -> list[str]:
    """Streamlit options that carry the operator settings (maxUploadSize is in MiB)."""
    flags = ["--server.maxUploadSize", str(max(1, math.ceil(config.upload_bytes / 2**20)))]
    if config.shared:
        flags += ["--client.toolbarMode", "viewer", "--server.enableXsrfProtection", "true",
                  "--server.enableCORS", "true"]
    return flags


def _mode(args: list[str]) -> tuple[str | None, list[str]]:
    """``--mode X`` or ``--mode=X`` taken out of the app's arguments."""
    rest, mode = [], None
    items = iter(args)
    for item in items:
        if item == "--mode":
            mode = next(items, "")
        elif item.startswith("--mode="):
            mode = item.split("=", 1)[1]
        else:
            rest.append(item)
    return mode, rest


def app(args: list[str]) -> int:
    mode, rest = _mode(args)
    env = dict(os.environ)
    if mode is not None:
        env["NDCG_LAB_MODE"] = mode
    try:
        config = settings.load(env)
    except MetricsError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    command = [sys.executable, "-m", "streamlit", "run", str(APP), *streamlit_flags(config), *rest]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, command, env)  # returns only by raising OSError


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["app"]:
        return app(argv[1:])
    return cli_main(argv, prog=PROG)


def run() -> None:
    """The console script's entry point: :func:`main`, then :func:`metrics.cli.leave` with its code."""
    leave(main())


if __name__ == "__main__":
    run()
