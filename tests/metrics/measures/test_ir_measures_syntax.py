"""Every measure string nDCG Lab prints is ir_measures syntax: ``ir_measures.parse_measure`` reads
each one whose family ir_measures has, into the same measure; the old unquoted text values are
still read."""
from __future__ import annotations

import ast

import ir_measures
import pytest

from metrics.measures import REGISTRY, Alias, expand, parse, with_gain

# Measures whose families ir_measures has, with every parameter nDCG Lab prints set away from its default.
SHARED = ["nDCG(dcg='exp-log2')@10", "nDCG(dcg=exp-log2)@10", "nDCG(judged_only=True)@10",
          "nDCG(gains={0:0,1:1,2:5})@20", "nDCG(dcg='exp-log2',judged_only=True)", "P(rel=2)@5",
          "AP(rel=2)@100", "RR(rel=3)", "R(judged_only=True)@100", "Rprec(rel=2)", "Success(rel=2)@1",
          "SetF(beta=0.5)", "SetP(relative=True)", "SetR", "SetAP(rel=2)", "NumRet(rel=1)", "NumQ", "NumRel",
          "IPrec@0.3", "Judged@10", "ERR@20", "RBP(p=0.5)", "infAP", "Bpref(rel=2)"]


@pytest.mark.parametrize("text", SHARED)
def test_printed_form_parses_in_ir_measures_as_the_same_measure(text):
    ours = parse(text)
    theirs = ir_measures.parse_measure(str(ours))
    assert ir_measures.parse_measure(str(parse(str(theirs)))) == theirs   # the same measure both ways
    if ours.cutoff is not None:
        assert theirs[theirs.AT_PARAM] == ours.cutoff


def test_text_values_print_quoted_and_read_either_way():
    assert str(parse("nDCG(dcg=exp-log2)@10")) == "nDCG(dcg='exp-log2')@10"
    assert str(parse('nDCG(dcg="exp-log2")@10')) == "nDCG(dcg='exp-log2')@10"
    assert with_gain("nDCG@10", "exp") == "nDCG(dcg='exp-log2')@10"
    assert ir_measures.parse_measure(with_gain("nDCG@10", "exp")) == ir_measures.nDCG(dcg="exp-log2") @ 10


def _ir_measures_grammar(text: str) -> bool:
    """True when ``text`` has the shape ir_measures' parser accepts: NAME, NAME(k=literal, ...), either @ literal."""
    node = ast.parse(text, mode="eval").body
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        ast.literal_eval(node.right)
        node = node.left
    if isinstance(node, ast.Call):
        assert not node.args
        for keyword in node.keywords:
            ast.literal_eval(keyword.value)
        node = node.func
    return isinstance(node, ast.Name)


def test_every_family_and_trec_eval_measure_prints_in_ir_measures_grammar():
    known = set(ir_measures.measures.registry)
    texts = {str(m) for m in expand("all_trec")}
    families = [(name, fam) for name, fam in REGISTRY.items()
                if not isinstance(fam, Alias) and not any(p.required for p in fam.params.values())]
    texts |= {str(parse(name)) for name, fam in families if fam.cutoff != "required"}
    texts |= {str(parse(f"{name}@5")) for name, fam in families if fam.cutoff == "required" and fam.cutoff_type is int}
    checked = 0
    for text in sorted(texts):
        if text[0].isdigit():   # trec_eval's 11pt_avg keeps trec_eval's name, which is no Python name
            continue
        assert _ir_measures_grammar(text), text
        if parse(text).name in known:
            ir_measures.parse_measure(text)
            checked += 1
    assert checked > 30
