"""nDCG Lab as an ir_measures provider named ``ndcglab``.

Importing this module registers the provider in ``ir_measures.providers.registry``::

    import ir_measures
    from metrics.interop import ir_measures_provider as ndcglab

    ndcglab.PROVIDER.calc_aggregate([ir_measures.nDCG @ 10, ir_measures.AP], qrels, run)
    ndcglab.make_default()          # ir_measures.calc_aggregate, iter_calc and pt.Experiment use it first

Each run is one call of :func:`metrics.evaluate` for all its measures (never one per query),
and its per-query values come back as ir_measures ``Metric`` rows. The measures it supports are
those whose meaning in ir_measures is the meaning nDCG Lab gives the same string (see
:data:`SUPPORTED`): values equal trec_eval 10 with scores in double precision, so they equal the
pytrec_eval provider's wherever that one is exact (scores exact in float32; IPrec's recall
cut-offs are trec_eval 9.0.8's in pytrec_eval), and they are gdeval's unrounded values for
``nDCG(dcg='exp-log2')@k`` and ``ERR@k``, which ir_measures otherwise rounds to 5 decimals.
A measure it does not support falls through to the next provider of the pipeline.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

import ir_measures
from ir_measures import Metric, providers
from ir_measures import measures as im
from ir_measures.providers.base import NOT_PROVIDED, Any, Choices
from ir_measures.util import QrelsConverter, RunConverter

from .. import engines, io
from ..measures import Measure, parse

__all__ = ["NAME", "PROVIDER", "SUPPORTED", "NdcgLabProvider", "as_default", "make_default", "remove_default",
           "to_measure"]

NAME = "ndcglab"

SUPPORTED = [
    im._P(cutoff=Any(required=True), rel=Any(), judged_only=Any()),
    im._RR(cutoff=Any(), rel=Any(), judged_only=Any()),
    im._Rprec(rel=Any(), judged_only=Any()),
    im._AP(cutoff=Any(), rel=Any(), judged_only=Any()),
    im._nDCG(cutoff=Any(), dcg=Choices("log2", "exp-log2"), gains=Any(), judged_only=Any()),
    im._R(cutoff=Any(required=True), rel=Any(), judged_only=Any()),
    im._Success(cutoff=Any(required=True), rel=Any(), judged_only=Any()),
    im._Bpref(rel=Any()),
    im._infAP(rel=Any()),
    im._IPrec(recall=Any(required=True), rel=Any(), judged_only=Any()),
    im._SetAP(rel=Any(), judged_only=Any()),
    im._SetF(rel=Any(), beta=Any(), judged_only=Any()),
    im._SetP(rel=Any(), relative=Any(), judged_only=Any()),
    im._SetR(rel=Any()),
    im._NumRet(rel=Any()),
    im._NumRel(rel=Any()),
    im._NumQ(),
    im._Judged(cutoff=Any(required=True)),
    im._ERR(cutoff=Any()),
    # binary RBP only: ir_measures leaves graded RBP (no rel) to its providers' own rescaling
    im._RBP(cutoff=Any(), p=Any(), rel=Any(required=True)),
]
"""The ir_measures measures this provider computes, with the parameter values it accepts."""


def to_measure(measure) -> Measure:
    """nDCG Lab's measure for an ir_measures one: the same family, parameters and cutoff.

    Built from the measure's explicit parameters (not its printed form), so that a custom gain
    map keeps every entry; ir_measures' ``NumRet(rel=1)`` is nDCG Lab's ``NumRelRet(rel=1)``.
    """
    at = measure.AT_PARAM
    params = {k: v for k, v in measure.params.items() if k != at and v is not NOT_PROVIDED}
    text = measure.NAME
    if params:
        text += "(" + ",".join(f"{k}={v!r}" for k, v in sorted(params.items())) + ")"
    cutoff = measure.params.get(at, NOT_PROVIDED)
    if cutoff is not NOT_PROVIDED:
        text += f"@{cutoff!r}"
    return parse(text)


def _qrels_frame(qrels):
    frame = QrelsConverter(qrels).as_pd_dataframe()
    return frame[["query_id", "doc_id", "relevance"]].rename(
        columns={"query_id": "qid", "doc_id": "docno", "relevance": "rel"})


def _run_frame(run):
    frame = RunConverter(run).as_pd_dataframe()
    return frame[["query_id", "doc_id", "score"]].rename(columns={"query_id": "qid", "doc_id": "docno"})


class NdcgLabEvaluator(providers.Evaluator):
    """The qrels parsed once; each run evaluated by one :func:`metrics.evaluate` call."""

    def __init__(self, measures, qrels: io.Qrels):
        measures = list(measures)
        super().__init__(measures, set(map(str, qrels.table.column("qid").to_pylist())))
        self.qrels = qrels
        self.ours: dict[str, list] = {}   # nDCG Lab's measure string -> the ir_measures measures it answers
        for measure in measures:
            self.ours.setdefault(str(to_measure(measure)), []).append(measure)

    def _iter_calc(self, run) -> Iterator[Metric]:
        frame = _run_frame(run)
        if frame.empty:
            return   # ir_measures' Evaluator gives every qrels query each measure's default
        tidy = engines.evaluate(self.qrels, {"run": frame}, list(self.ours), engine="local")
        for qid, text, value in zip(tidy["qid"].to_numpy(), tidy["measure"].to_numpy(), tidy["value"].to_numpy()):
            for measure in self.ours[text]:
                yield Metric(query_id=str(qid), measure=measure, value=float(value))


class NdcgLabProvider(providers.Provider):
    """nDCG Lab's engine: exact to trec_eval 10, scores in double precision, one pass per run."""

    NAME = NAME
    SUPPORTED_MEASURES = SUPPORTED

    def _evaluator(self, measures, qrels) -> NdcgLabEvaluator:
        return NdcgLabEvaluator(measures, io.read_qrels(_qrels_frame(qrels), name="qrels"))


PROVIDER = providers.register(NdcgLabProvider())


def make_default() -> None:
    """Put ``ndcglab`` first in ``ir_measures.DefaultPipeline``, so that ``ir_measures.calc_aggregate``,
    ``iter_calc``, ``calc`` and PyTerrier's ``pt.Experiment`` use it for every measure it supports
    (the other providers keep the rest)."""
    pipeline = ir_measures.DefaultPipeline.providers
    if PROVIDER not in pipeline:
        pipeline.insert(0, PROVIDER)


def remove_default() -> None:
    """Take ``ndcglab`` out of ``ir_measures.DefaultPipeline`` again."""
    pipeline = ir_measures.DefaultPipeline.providers
    while PROVIDER in pipeline:
        pipeline.remove(PROVIDER)


@contextlib.contextmanager
def as_default():
    """``ndcglab`` first in ``ir_measures.DefaultPipeline`` inside a ``with`` block only."""
    was = PROVIDER in ir_measures.DefaultPipeline.providers
    make_default()
    try:
        yield PROVIDER
    finally:
        if not was:
            remove_default()
