"""Analyses built on the evaluation: per-rank arithmetic (explain), judgments, the teaching sandbox."""
