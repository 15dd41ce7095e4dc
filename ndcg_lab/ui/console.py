"""The ``ndcg-lab`` console command: ``ndcg-lab app [--mode personal|shared] [--replicas N] [streamlit
options]`` starts the dashboard, every other subcommand is the library's command line (``ndcg-lab
eval|lint|compare|negatives``, the same as ``python -m metrics``).

``--replicas N`` (shared mode) starts N processes on one ``NDCG_LAB_HOME`` behind nginx at the
address of ``--server.address``/``--server.port`` and supervises them
(:class:`ndcg_lab.deploy.replicas.Deployment`); without it the app runs as one process:

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
from metrics.io.memory import SERVER_ARENAS
from ndcg_lab.deploy import replicas as deploy
from ndcg_lab.ui import allocators
from ndcg_lab.ui.paths import APP

PROG = "ndcg-lab"


def streamlit_flags(config: settings.Settings) -> list[str]:
    """Streamlit options that carry the operator settings (maxUploadSize is in MiB)."""
    flags = ["--server.maxUploadSize", str(max(1, math.ceil(config.upload_bytes / 2**20)))]
    if config.shared:
        flags += ["--client.toolbarMode", "viewer", "--server.enableXsrfProtection", "true",
                  "--server.enableCORS", "true"]
    return flags


def _option(args: list[str], name: str) -> tuple[str | None, list[str]]:
    """``name X`` or ``name=X`` taken out of the app's arguments (the last one given wins)."""
    rest, value = [], None
    items = iter(args)
    for item in items:
        if item == name:
            value = next(items, "")
        elif item.startswith(f"{name}="):
            value = item.split("=", 1)[1]
        else:
            rest.append(item)
    return value, rest


def _mode(args: list[str]) -> tuple[str | None, list[str]]:
    """``--mode X`` or ``--mode=X`` taken out of the app's arguments."""
    return _option(args, "--mode")


def app(args: list[str]) -> int:
    mode, rest = _mode(args)
    replicas, rest = _option(rest, "--replicas")
    env = dict(os.environ)
    env.setdefault("MALLOC_ARENA_MAX", str(SERVER_ARENAS))   # before the first thread (metrics.io.memory)
    allocators.set_defaults(env)                               # no huge pages (ndcg_lab.ui.allocators)
    if mode is not None:
        env["NDCG_LAB_MODE"] = mode
    try:
        config = settings.load(env)
        if replicas is not None:
            return _replicas(replicas, config, rest, env)
    except MetricsError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    command = [sys.executable, "-m", "streamlit", "run", str(APP), *streamlit_flags(config), *rest]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, command, env)  # returns only by raising OSError


def _replicas(count: str, config: settings.Settings, rest: list[str], env: dict[str, str]) -> int:
    """Run ``count`` processes behind nginx until SIGTERM or Ctrl-C (see the module)."""
    if not count.isdigit():
        raise MetricsError(f"--replicas takes a number of processes, not {count!r}")
    if not config.shared:
        raise MetricsError("--replicas serves a class: it needs shared mode", fix="add --mode shared")
    address, port, rest = deploy.public_address(rest)
    flags = streamlit_flags(config)

    def command(local_port: int) -> list[str]:
        return [sys.executable, "-m", "streamlit", "run", str(APP), *flags, "--server.headless", "true",
                *rest, "--server.address", "127.0.0.1", "--server.port", str(local_port)]

    deployment = deploy.Deployment(home=config.home, replicas=int(count), address=address, port=port,
                                   command=command, env=env, max_body_bytes=config.upload_bytes + 2**20)
    return deployment.serve()


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
