"""axe-core in Chromium: the WCAG 2.1 A and AA rules run on the page a test has open.

axe-core comes bundled with axe-playwright-python (PyPI, requirements-dev.txt): nothing is fetched
from the network. :func:`serious` returns the violations that must not exist (impact serious or
critical), each with the nodes it failed on; :func:`report` writes them one line per rule and node,
for an assertion message a reader can act on.
"""
from __future__ import annotations

from dataclasses import dataclass

WCAG_TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa")
"""The rule sets run: WCAG 2.0 and 2.1, levels A and AA (what course material must meet)."""
BLOCKING = ("serious", "critical")
"""Impacts that fail a test; axe's "minor" and "moderate" are reported by axe itself, not here."""


@dataclass(frozen=True)
class Violation:
    """One axe rule that failed: its id, impact, help text and the nodes (CSS target + summary)."""

    rule: str
    impact: str
    help: str
    nodes: tuple[tuple[str, str], ...]


def run(page, *, tags: tuple[str, ...] = WCAG_TAGS) -> list[Violation]:
    """Every violation of the rules tagged ``tags`` on ``page`` as it is now (any impact)."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, options={"runOnly": {"type": "tag", "values": list(tags)},
                                       "resultTypes": ["violations"]})
    found = []
    for item in results.response["violations"]:
        nodes = tuple((" ".join(map(str, node.get("target", []))), (node.get("failureSummary") or "").strip())
                      for node in item["nodes"])
        found.append(Violation(item["id"], item.get("impact") or "", item["help"], nodes))
    return found


def serious(page) -> list[Violation]:
    """The WCAG 2.1 A/AA violations of impact serious or critical on ``page`` now."""
    return [v for v in run(page) if v.impact in BLOCKING]


def report(where: str, violations: list[Violation]) -> str:
    """``where``: rule (impact) help, then each failing node with axe's reason, one per line."""
    lines = [f"{where}: {len(violations)} serious/critical axe violation(s)"]
    for v in violations:
        lines.append(f"  {v.rule} ({v.impact}): {v.help}")
        for target, summary in v.nodes:
            lines.append(f"    {target}  -- {' '.join(summary.split())[:300]}")
    return "\n".join(lines)
