"""Parsed runs and qrels (:class:`Run`, :class:`Qrels`), their validation and findings.

Every reader (TREC text, headed tables, JSON, parquet, frames, dicts) ends in :func:`finish`:
scores finite, duplicates refused or dropped, ranks filled in canonical order where a source
has none, and the doubtful but usable facts (ties, a rank column that disagrees with the
scores, negative grades) reported as :class:`Finding` objects.

Every check of :func:`finish` names its row through the same :class:`Origin` (the line map, the
quoted text, the keys of in-memory rows).
"""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import re
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import MetricsError
from ..ordering import canonical_order, offsets_of, positions, run_heads, take
from .keys import exact_duplicates
from .lines import line_ends, line_text

RUN_SCHEMA = pa.schema([("qid", pa.string()), ("docno", pa.string()), ("score", pa.float64()),
                        ("rank", pa.int64()), ("tag", pa.string())])


QRELS_SCHEMA = pa.schema([("qid", pa.string()), ("docno", pa.string()), ("rel", pa.int64())])


RUN_FORMAT = "qid Q0 docno rank score tag"


@dataclass
class Finding:
    """A warning as data: what is doubtful about an input, how often, examples.

    ``value`` carries a number where the finding is a measurement (Judged@k).
    """

    kind: str
    message: str
    count: int = 0
    examples: list[str] = field(default_factory=list)
    value: float | None = None


class LineMap:
    """Original 1-based line of each row: ``offset + row`` or an explicit array."""

    def __init__(self, lines: np.ndarray | None = None, offset: int = 1):
        self.lines = lines
        self.offset = offset

    def __call__(self, rows) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.int64)
        if self.lines is None:
            return rows + self.offset
        return self.lines[rows]

    def take(self, rows: np.ndarray) -> LineMap:
        return LineMap(self(rows), 0)


@dataclass
class _Parsed:
    """Fields and helpers shared by Run and Qrels."""

    table: pa.Table
    name: str
    source: str
    digest: str
    findings: list[Finding] = field(default_factory=list)
    _lines: LineMap | None = field(default=None, repr=False, compare=False)

    @property
    def df(self):
        """The table as a pandas DataFrame."""
        return self.table.to_pandas()

    def __len__(self) -> int:
        return self.table.num_rows

    def line_of(self, rows) -> np.ndarray | None:
        """Original 1-based line numbers of table rows, or None for in-memory input."""
        return None if self._lines is None else self._lines(rows)


@dataclass
class Run(_Parsed):
    """A parsed run: ``table`` has columns qid, docno, score, rank, tag in file order.

    ``digest`` is the sha256 of the bytes given (or of a canonical serialisation
    for in-memory input): a cache key for the content.
    """


@dataclass
class Qrels(_Parsed):
    """Parsed judgments: ``table`` has columns qid, docno, rel (int64; negative = judged non-relevant)."""


@dataclass
class Kind:
    """What a run or a qrels file looks like, for parsing and for messages."""

    what: str            # "run" / "qrels"
    fields: tuple        # TREC columns
    required: int        # minimum number of fields on a line
    exact: bool          # qrels lines must have exactly `required` fields
    value: str           # "score" / "rel"
    other: str           # the other kind, for "this looks like ..." hints
    other_fields: tuple


RUN = Kind("run", ("qid", "Q0", "docno", "rank", "score", "tag"), 6, False, "score",
            "qrels", ("qid", "iter", "docno", "rel"))


QRELS = Kind("qrels", ("qid", "iter", "docno", "rel"), 4, True, "rel",
              "run", ("qid", "Q0", "docno", "rank", "score", "tag"))


QUOTE_LINES = contextvars.ContextVar("quote_lines", default=True)
"""Whether errors quote the offending line. Off while reading a file on the server (a path a
visitor typed), so that a message never shows its content."""


@contextlib.contextmanager
def quoting(quote: bool):
    """Errors raised inside quote their line (``True``) or only name it (``False``)."""
    token = QUOTE_LINES.set(bool(quote))
    try:
        yield
    finally:
        QUOTE_LINES.reset(token)


@dataclass
class Origin:
    """Where rows came from: names for messages, and the text to quote lines from."""

    source: str
    lines: LineMap | None = None     # None: rows of an in-memory table
    text: bytes | None = None         # decompressed original bytes
    trec: bool = False                # TREC columns (for hints naming column positions)
    trim: bool = False                # CSV/TSV text with blanks: trim them around values
    keys: tuple | None = None         # (qid, docno) arrays, to name rows of in-memory tables

    def error(self, row: int | None, problem: str, fix: str | None = None) -> MetricsError:
        if row is None:
            return MetricsError(problem, source=self.source, fix=fix)
        if self.lines is None:
            where = f"row {row + 1}"
            if self.keys is not None:
                where += f" (query {self.keys[0][row].as_py()!r}, document {self.keys[1][row].as_py()!r})"
            return MetricsError(f"{where}: {problem}", source=self.source, fix=fix)
        line = int(self.lines([row])[0])
        return self.line_error(line, problem, fix)

    def line_error(self, line: int, problem: str, fix: str | None = None) -> MetricsError:
        quoted = line_text(self.text, line) if self.text is not None and QUOTE_LINES.get() else None
        if quoted is not None:
            problem = f"{problem}: {quoted}"
        return MetricsError(problem, source=self.source, line=line, fix=fix)

    def line_numbers(self, rows) -> list[str]:
        if self.lines is None:
            return [f"row {int(r) + 1}" for r in rows]
        return [f"line {int(x)}" for x in self.lines(rows)]


def plural(count: int, noun: str) -> str:
    """``plural(1, "query")`` -> "1 query", ``plural(2, "query")`` -> "2 queries"."""
    if count == 1:
        return f"1 {noun}"
    return f"{count} {noun[:-1] + 'ies' if noun.endswith('y') else noun + 's'}"


def article(what: str) -> str:
    return "a run" if what == "run" else "qrels"


def _first_failing(col, typ) -> int:
    """Row of the first value that does not cast to ``typ`` (bisection, O(n) casting)."""
    lo, hi = 0, len(col)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            pc.cast(col.slice(lo, mid - lo), typ)
            lo = mid
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            hi = mid
    return lo


def cast_scores(col, origin: Origin):
    try:
        scores = pc.cast(col, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        row = _first_failing(col, pa.float64())
        raise origin.error(row, f"score {col[row].as_py()!r} is not a number",
                        "the score (5th column of a TREC run) must be a number such as 12.5 or -3e-2; "
                        f"check the column order ({RUN_FORMAT})" if origin.trec
                        else "scores must be numbers such as 12.5 or -3e-2") from None
    return scores


def cast_ranks(col, origin: Origin):
    """Ranks should be integers; trec_eval ignores them, so we only insist on numbers."""
    try:
        return pc.cast(col, pa.int64())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        pass
    try:
        as_float = pc.cast(col, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        row = _first_failing(col, pa.float64())
        raise origin.error(row, f"rank {col[row].as_py()!r} is not a number",
                        f"the rank (4th column) must be a whole number such as 1; check the column order ({RUN_FORMAT})"
                        if origin.trec else "ranks must be whole numbers such as 1") from None
    values = as_float.to_numpy(zero_copy_only=False) if isinstance(as_float, pa.Array) \
        else as_float.to_numpy()
    bad = ~np.isfinite(values) | (values != np.round(values))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise origin.error(row, f"rank {col[row].as_py()!r} is not a whole number",
                        "ranks must be whole numbers such as 1 (trec_eval ignores them, but they must still be "
                        "numbers)")
    return pa.chunked_array([pa.array(_whole_int64(values, col, "rank", origin))])


_INT64_BOUND = 2.0 ** 63


def _whole_int64(values: np.ndarray, col, role: str, origin: Origin) -> np.ndarray:
    """Whole float ``values`` as int64, or an error naming the first that does not fit
    (``astype`` would wrap it to -9223372036854775808 without a word)."""
    outside = (values >= _INT64_BOUND) | (values < -_INT64_BOUND)
    if outside.any():
        row = int(np.flatnonzero(outside)[0])
        raise origin.error(row, f"{role} {col[row].as_py()!r} is too large: it does not fit in a 64-bit integer",
                        f"give {role}s between -9223372036854775808 and 9223372036854775807")
    return values.astype(np.int64)


def cast_grades(col, origin: Origin):
    fix = ("grades must be whole numbers (0, 1, 2, ...; negative means judged non-relevant); "
           "map labels such as 'high' or 1.5 to integers")
    try:
        return pc.cast(col, pa.int64())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        pass
    limit = len(col)
    try:
        as_float = pc.cast(col, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        limit = _first_failing(col, pa.float64())
        as_float = pc.cast(col.slice(0, limit), pa.float64())
    values = np.asarray(as_float.to_numpy() if hasattr(as_float, "to_numpy") else as_float, dtype=np.float64)
    bad = ~np.isfinite(values) | (values != np.round(values))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise origin.error(row, f"grade {col[row].as_py()!r} is not a whole number", fix)
    if limit < len(col):
        raise origin.error(limit, f"grade {col[limit].as_py()!r} is not a number", fix)
    return pa.chunked_array([pa.array(_whole_int64(values, col, "grade", origin))])


def _present(col, role: str, origin: Origin):
    """``col`` with a dictionary decoded, or an error naming the first row without a value."""
    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    if col.null_count:
        row = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
        raise origin.error(row, f"{role} is missing", f"every row needs a {role}")
    return col


def string_column(col, role: str, origin: Origin):
    col = _present(col, role, origin)
    typ = col.type
    if pa.types.is_floating(typ):
        values = col.to_numpy()
        if np.all(np.isfinite(values) & (values == np.round(values))):
            col = pc.cast(col, pa.int64())
    try:
        col = col.cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        raise origin.error(None, f"the {role} column ({typ}) cannot be read as text",
                        f"give {role} as strings or integers") from None
    if origin.trim:   # CSV/TSV text: blanks around a value are layout, not data
        col = pc.utf8_trim_whitespace(col)
    if role != "tag" and len(col):
        empty = pc.equal(pc.binary_length(col), 0)
        if pc.any(empty).as_py():
            row = int(np.flatnonzero(empty.to_numpy(zero_copy_only=False))[0])
            raise origin.error(row, f"the {role} is empty", f"every row needs a {role}")
    return col


def numeric_column(col, role: str, origin: Origin, cast):
    col = _present(col, role, origin)
    typ = col.type
    if pa.types.is_boolean(typ):
        col = pc.cast(col, pa.int64())
    elif pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_string_view(typ):
        col = pc.utf8_trim_whitespace(col.cast(pa.string()))
    elif not (pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_decimal(typ)):
        raise origin.error(None, f"the {role} column has type {typ}, not numbers", f"give {role} as numbers")
    if pa.types.is_integer(col.type) or pa.types.is_boolean(col.type):
        try:
            return pc.cast(col, pa.float64() if role == "score" else pa.int64())
        except pa.ArrowInvalid:   # uint64 above 2**63 - 1
            return cast(pc.cast(col, pa.float64()), origin)
    return cast(col, origin)


def finish(table: pa.Table, kind: Kind, name: str, origin: Origin, digest, on_duplicate: str,
            rank_given: bool):
    """Validate parsed columns; build the Run/Qrels with its findings (``digest()`` gives the digest)."""
    n = table.num_rows
    if n == 0:
        raise MetricsError(f"no {'documents' if kind is RUN else 'judgments'} in the {kind.what}",
                           source=origin.source,
                           fix=f"give lines like: {' '.join(kind.fields)}")
    qid, docno = table["qid"], table["docno"]   # chunked: no copy on the fast path
    if origin.lines is None:
        origin = dataclasses.replace(origin, keys=(qid, docno))
    qcode, queries = encode(qid)
    findings: list[Finding] = []
    if kind is RUN:
        score = finite_scores(table, origin)
        # one chunk on the numpy array just made: readers of the table (rank) use it without a copy
        if score.dtype == np.float64:
            table = table.set_column(table.schema.get_field_index("score"), "score", pa.chunked_array([score]))
        keep = _run_duplicates(qid, docno, qcode, kind, origin, on_duplicate, findings)
        if keep is not None:
            table, qcode, score = table.filter(pa.array(keep)), qcode[keep], score[keep]
            qid, docno = table["qid"], table["docno"]
            origin = dataclasses.replace(origin, keys=(qid, docno) if origin.lines is None else None,
                                      lines=None if origin.lines is None else origin.lines.take(np.flatnonzero(keep)))
        if rank_given:
            rank = table["rank"].to_numpy()
        else:
            rank = _canonical_ranks(qcode, score, docno)
        if "tag" not in table.column_names:
            table = table.append_column("tag", pa.chunked_array([pa.repeat(name, len(rank)).cast(pa.string())]))
        table = pa.table({"qid": table["qid"], "docno": table["docno"], "score": table["score"],
                          "rank": pa.chunked_array([pa.array(rank, pa.int64())]) if not rank_given
                          else table["rank"], "tag": table["tag"]}).cast(RUN_SCHEMA)
        findings += _order_findings(qcode, score, rank if rank_given else None, queries)
        return Run(table, name, origin.source, digest(), findings, origin.lines)
    keep = _qrels_duplicates(qid, docno, qcode, table["rel"], origin, findings)
    if keep is not None:
        table = table.filter(pa.array(keep))
        qid, docno = table["qid"], table["docno"]
        origin = dataclasses.replace(origin, keys=(qid, docno) if origin.lines is None else None,
                                  lines=None if origin.lines is None else origin.lines.take(np.flatnonzero(keep)))
    # a byte a judgment, chunk by chunk, not a copy of the grades (the peak of a large read); numpy,
    # not pyarrow.compute, whose first call imports pandas (tests/metrics/test_imports.py)
    rel = table["rel"]
    negative = np.concatenate([c.to_numpy(zero_copy_only=False) < 0 for c in rel.chunks]) \
        if rel.num_chunks else np.zeros(0, dtype=bool)
    count = int(np.count_nonzero(negative))
    if count:
        findings.append(Finding(
            "negative_grades",
            f"{plural(count, 'judgment')} {'has' if count == 1 else 'have'} a negative grade; "
            "they count as judged non-relevant (as in trec_eval)",
            count, [f"query {qid[int(r)].as_py()} document {docno[int(r)].as_py()} (grade {rel[int(r)].as_py()})"
                    for r in np.flatnonzero(negative)[:5]]))
    table = pa.table({"qid": table["qid"], "docno": table["docno"], "rel": table["rel"]}).cast(QRELS_SCHEMA)
    return Qrels(table, name, origin.source, digest(), findings, origin.lines)


def finite_scores(score, origin: Origin) -> np.ndarray:
    """Scores (a table with a score column, or the column) as numpy, or an error naming the
    first NaN or infinite score's line."""
    if isinstance(score, pa.Table):
        score = score["score"]
    score = score.to_numpy() if isinstance(score, (pa.ChunkedArray, pa.Array)) else np.asarray(score)
    finite = np.isfinite(score)
    if not finite.all():
        row = int(np.flatnonzero(~finite)[0])
        overflow = _overflowing_number(origin, row) if np.isinf(score[row]) else None
        if overflow is not None:
            raise origin.error(row, f"score {overflow} overflows double precision (beyond \u00b11.8e308)",
                            "scale the scores down (for example take their logarithm) so that they fit")
        raise origin.error(row, f"score {float(score[row])} is not a finite number",
                        "replace NaN and infinite scores with numbers (or drop those documents)")
    return score


_NUMBER = re.compile(rb"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _overflowing_number(origin: Origin, row: int) -> str | None:
    """The number on ``row``'s line that is too large for a double (``1e309``), if the text is known."""
    if origin.text is None or origin.lines is None:
        return None
    line = int(origin.lines([row])[0])
    ends = line_ends(origin.text)
    start = 0 if line == 1 else int(ends[line - 2]) + 1
    end = int(ends[line - 1]) if line - 1 < len(ends) else len(origin.text)
    for token in re.split(rb"[\s,;]+", origin.text[start:end]):
        if _NUMBER.fullmatch(token) and np.isinf(float(token)):
            return token.decode("ascii")
    return None


def encode(values) -> tuple[np.ndarray, pa.Array]:
    """Integer code of every value (first-appearance order) and the distinct values.

    Runs and qrels come in blocks of one query, so only the first row of each block of equal
    values is encoded (a value first appears at the head of a block), then repeated.
    """
    n = len(values)
    if n < 2 or values.null_count:
        encoded = pc.dictionary_encode(values)
        if isinstance(encoded, pa.ChunkedArray):
            chunks = encoded.chunks
            codes = np.concatenate([c.indices.to_numpy() for c in chunks]) if chunks else np.zeros(0, np.int32)
            return codes, chunks[-1].dictionary if chunks else pa.array([], values.type)
        return encoded.indices.to_numpy(), encoded.dictionary
    heads, lengths = run_heads(values)
    encoded = pc.dictionary_encode(take(values, heads))
    return np.repeat(encoded.indices.to_numpy(), lengths), encoded.dictionary


def _run_duplicates(qid, docno, qcode, kind, origin: Origin, on_duplicate, findings) -> np.ndarray | None:
    found = exact_duplicates(qid, docno, qcode)
    if found is None:
        return None
    rows, firsts = found
    r, f = int(rows[0]), int(firsts[0])
    where = origin.line_numbers([f, r])
    if on_duplicate == "error":
        raise origin.error(r, f"document {docno[r].as_py()!r} appears twice for query {qid[r].as_py()!r} "
                           f"({where[0]} and {where[1]})",
                        "trec_eval refuses duplicate documents too; remove one, or pass "
                        "on_duplicate='first' to keep the first")
    keep = np.ones(len(qcode), dtype=bool)
    keep[rows] = False
    examples = [f"query {qid[int(a)].as_py()} document {docno[int(a)].as_py()} ({w1} and {w2})"
                for a, w1, w2 in zip(rows[:5], origin.line_numbers(firsts[:5]), origin.line_numbers(rows[:5]))]
    queries = len(np.unique(qcode[rows]))
    findings.append(Finding(
        "duplicates",
        f"{plural(len(rows), 'duplicate document')} in {plural(queries, 'query')} dropped (the first of each kept)",
        len(rows), examples))
    return keep


def _qrels_duplicates(qid, docno, qcode, rel, origin: Origin, findings) -> np.ndarray | None:
    found = exact_duplicates(qid, docno, qcode)
    if found is None:
        return None
    rows, firsts = found
    grades = rel.to_numpy()   # only when there are duplicates, once their keys are freed
    at_rows, at_firsts = grades[rows], grades[firsts]
    del grades
    conflict = at_rows != at_firsts
    if conflict.any():
        i = int(np.flatnonzero(conflict)[0])
        r, f = int(rows[i]), int(firsts[i])
        where = origin.line_numbers([f, r])
        raise origin.error(r, f"query {qid[r].as_py()!r} judges document {docno[r].as_py()!r} twice with different "
                           f"grades ({at_firsts[i]} on {where[0]}, {at_rows[i]} on {where[1]})",
                        "keep one judgment per document and query")
    keep = np.ones(len(qcode), dtype=bool)
    keep[rows] = False
    examples = [f"query {qid[int(a)].as_py()} document {docno[int(a)].as_py()} ({w1} and {w2})"
                for a, w1, w2 in zip(rows[:5], origin.line_numbers(firsts[:5]), origin.line_numbers(rows[:5]))]
    findings.append(Finding(
        "duplicate_judgments",
        f"{plural(len(rows), 'repeated judgment')} (same query, document and grade) collapsed into one",
        len(rows), examples))
    return keep


def _canonical_ranks(qcode: np.ndarray, score: np.ndarray, docno: pa.Array) -> np.ndarray:
    """1-based rank of every row in canonical order (score descending, docno descending), for
    sources without a rank column."""
    order = canonical_order(qcode, score, docno)
    if order is None:
        order = np.arange(len(qcode))
    offsets = offsets_of(np.bincount(qcode, minlength=int(qcode.max(initial=-1)) + 1))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = positions(offsets) + 1
    return rank


def _order_findings(qcode: np.ndarray, score: np.ndarray, rank: np.ndarray | None,
                    queries: pa.Array) -> list[Finding]:
    """Rank column against score order, and tied scores, per query (vectorised)."""
    n = len(qcode)
    findings: list[Finding] = []
    if n < 2:
        return findings
    by_score = None  # (query codes, scores) in an order where scores never rise within a query
    if rank is not None:
        boundary = qcode[1:] != qcode[:-1]
        in_rank_order = int(boundary.sum()) + 1 == len(queries) and bool(np.all(boundary | (rank[1:] > rank[:-1])))
        order = None if in_rank_order else np.lexsort((rank, qcode))
        q = qcode if order is None else qcode[order]
        s = score if order is None else score[order]
        rising = (q[1:] == q[:-1]) & (s[1:] > s[:-1])
        if rising.any():
            bad = np.unique(q[1:][rising])
            findings.append(Finding(
                "rank_order",
                f"in {plural(len(bad), 'query')} the rank column disagrees with the scores; scores decide the "
                "order (trec_eval ignores the rank column)",
                len(bad), [f"query {x}" for x in queries.take(pa.array(bad[:5])).to_pylist()]))
        else:
            by_score = (q, s)
    if by_score is None:
        order = np.lexsort((-score, qcode))
        by_score = (qcode[order], score[order])
    q, s = by_score
    tie = (q[1:] == q[:-1]) & (s[1:] == s[:-1])
    if tie.any():
        tied = np.zeros(n, dtype=bool)
        tied[1:] |= tie
        tied[:-1] |= tie
        per_query = np.bincount(q[tied], minlength=len(queries))
        tied_queries = np.flatnonzero(per_query)
        count = int(tied.sum())
        top = tied_queries[np.argsort(-per_query[tied_queries], kind="stable")[:5]]
        findings.append(Finding(
            "ties",
            f"{plural(count, 'document')} in {plural(len(tied_queries), 'query')} share their score with another "
            "document of the same query; ties are broken by docno descending (trec_eval's rule)",
            count, [f"query {x}: {int(per_query[c])} tied documents"
                    for c, x in zip(top, queries.take(pa.array(top)).to_pylist())]))
    return findings


