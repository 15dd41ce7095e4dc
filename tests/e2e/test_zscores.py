"""Standardised scores in a real browser: picking z-scores on the Leaderboard shows the reference
line (the collection's four runs) and the z-score means recomputed here by hand."""
from __future__ import annotations

from playwright.sync_api import expect

import metrics
from tests.e2e.helpers import LEGAL, TIMEOUT, main, no_exception, read_leaderboard

MEASURE = "nDCG(dcg='exp-log2')@10"


def test_picking_z_scores_shows_the_reference_and_the_z_scores(module_app_server, page, open_app, wait_for_app):
    runs = {path.stem: path for path in sorted(LEGAL.glob("*.run"))}
    frame = metrics.evaluate(LEGAL / "qrels.txt", dict(runs), [MEASURE])
    grouped = frame.groupby("qid")["value"]                    # sample deviation (ddof=1), as metrics.standardise
    mean, sd = grouped.transform("mean"), grouped.transform(lambda v: v.std(ddof=1))
    tied = grouped.transform(lambda v: v.max() - v.min() < 1e-12)
    z = frame.assign(value=((frame["value"] - mean) / sd).where(~tied, 0.0)).groupby("system")["value"].mean()

    open_app(page, module_app_server)
    raw = read_leaderboard(page)
    main(page).get_by_role("radiogroup").filter(has_text="z-scores").get_by_text("standardised (z-scores)").click()
    wait_for_app(page)
    reference = main(page).get_by_text("z-scores against the 4 runs of legal")
    expect(reference).to_be_visible(timeout=TIMEOUT)
    assert all(name in reference.inner_text() for name in runs)
    shown = read_leaderboard(page)
    assert shown != raw
    for system in runs:
        assert abs(float(shown[system][MEASURE]) - z[system]) < 6e-5, (system, shown[system][MEASURE], z[system])
    assert "scores=z" in page.url
    no_exception(page)
