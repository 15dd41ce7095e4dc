"""Subcommands of ``python -m metrics`` beyond eval and lint; see metrics.cli."""
