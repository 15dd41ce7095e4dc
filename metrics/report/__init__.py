"""Presentation of results: exports (CSV, JSON, LaTeX), text (p-values, markers, stamps, sizes) and figures."""
