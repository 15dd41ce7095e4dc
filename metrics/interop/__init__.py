"""nDCG Lab inside the peers' own APIs: :mod:`.ir_measures_provider` makes the engine an
ir_measures provider (``ndcglab``), so ``ir_measures.calc_aggregate``, ``iter_calc`` and
PyTerrier's ``pt.Experiment`` run on it. Nothing here is imported with :mod:`metrics`: the peers
are optional packages.
"""
