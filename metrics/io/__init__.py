"""Read and validate runs and qrels: TREC text (plain, gzip, bz2, xz, zstd), CSV/TSV with a
header, parquet, ranx-style JSON, pandas DataFrames and dicts.

Bad input raises :class:`metrics.errors.MetricsError` naming file, line, problem and fix.
Doubtful but usable input (tied scores, a rank column that disagrees with the scores, negative
grades, dropped duplicates) is reported as :class:`Finding` objects on the result instead.

Modules, lowest first: ``lines`` (line arithmetic for messages), ``sniff`` (magic bytes, formats
that are not text, UTF-8 and NUL checks), ``inflate`` (bounded decompression as it streams),
``raw_input`` (an input reopened per pass, hashed on a second thread), ``paths`` (paths, URLs,
globs), ``upload_limits`` (the operator's bounds on one upload), ``parquet``, ``keys``
(hashes, duplicates, digests), ``validate`` (Run, Qrels, findings), ``trec`` (TREC text),
``tables`` (headed text, JSON, parquet, frames, dicts; two-column tables), ``topics``,
``irds`` (ir_datasets), ``interchange`` (ranx, trectools, dicts, TREC and JSON writers),
``read`` (the entry points).
"""
from .interchange import to_dict, to_ranx, to_trec, to_trectools, write_json
from .read import read_qrels, read_run
from .tables import ALIASES, read_two_columns
from .validate import QRELS_SCHEMA, RUN_SCHEMA, Finding, Qrels, Run, finite_scores

__all__ = ["ALIASES", "Finding", "QRELS_SCHEMA", "Qrels", "RUN_SCHEMA", "Run", "finite_scores", "read_qrels",
           "read_run", "read_two_columns", "to_dict", "to_ranx", "to_trec", "to_trectools", "write_json"]
