"""The sidebar's selection in the address (ndcg_lab.ui.selection.ADDRESS), in AppTest: a link's collection,
systems, baseline and gain are shown; names the workspace lacks are ignored; the address follows
the sidebar; a linked baseline never writes the workspace and gives way when the stored one changes."""
from __future__ import annotations

from metrics import store
from tests.conftest import assert_ok, baseline_box, systems_box


def test_a_link_selects_what_it_names_and_ignores_what_the_workspace_lacks(open_app):
    at = open_app(query_params={"collection": "legal", "systems": ["dense", "nope", "bm25"], "baseline": "dense",
                                "gain": "linear"})
    assert systems_box(at).value == ["dense", "bm25"]
    assert baseline_box(at).value == "dense"
    assert at.sidebar.radio(key="gain").value == "linear"
    assert store.Workspace(store.default_path()).baseline("legal") == "bm25"      # the workspace is not written
    assert at.query_params["systems"] == ["dense", "bm25"] and at.query_params["gain"] in ("linear", ["linear"])

    with store.Workspace(store.default_path()) as ws:                         # another tab sets the baseline
        ws.set_baseline("legal", "bm25_qe")
    at.run()
    assert_ok(at)
    assert baseline_box(at).value == "bm25_qe"
    assert at.query_params["baseline"] in ("bm25_qe", ["bm25_qe"])


def test_unknown_values_fall_back_to_the_defaults(open_app):
    at = open_app(query_params={"collection": "nowhere", "gain": "cubic", "baseline": "nope"})
    assert at.sidebar.radio(key="gain").value == "exp"
    assert baseline_box(at).value == "bm25"
    assert at.query_params["collection"] in ("legal", ["legal"])


def test_the_systems_box_carries_the_selection_in_every_run(open_app):
    """The Systems box is drawn with the selection as its default in every run, not only as a value
    sent with the run that set it: a browser that missed that run (a rerun came first, as on a
    loaded machine) shows the selection, not an empty box whose next click sends no systems back
    as the user's choice (the browser tests saw the Leaderboard emptied after "Add")."""
    def drawn(at) -> list[str]:
        box = systems_box(at)
        return [box.options[i] for i in box.proto.default]

    at = open_app(query_params={"collection": "legal", "systems": ["dense", "bm25"]})
    assert drawn(at) == ["dense", "bm25"] == systems_box(at).value
    at.sidebar.radio(key="gain").set_value("linear").run()     # a later run that sets nothing
    assert drawn(at) == ["dense", "bm25"]
    systems_box(at).unselect("dense").run()                    # the user's own change
    assert_ok(at)
    assert drawn(at) == ["bm25"] == systems_box(at).value


def test_the_baseline_box_carries_the_shown_baseline_in_every_run(open_app):
    """As the Systems box: the baseline shown is the box's default in every run, so a browser that
    missed the run that changed it (another tab set the stored baseline) shows it, and never sends
    its old value back with its next click as the user's choice, which the box would store."""
    def drawn(at) -> str:
        box = baseline_box(at)
        return box.options[box.proto.default]

    at = open_app(query_params={"collection": "legal", "baseline": "dense"})
    assert drawn(at) == "dense" == baseline_box(at).value                          # the address's
    at.sidebar.radio(key="gain").set_value("linear").run()                          # a run that sets nothing
    assert drawn(at) == "dense"
    with store.Workspace(store.default_path()) as ws:                               # another tab
        ws.set_baseline("legal", "bm25_qe")
    at.run()
    assert drawn(at) == "bm25_qe" == baseline_box(at).value
    baseline_box(at).set_value("bm25_ce").run()                                     # the user's own change
    assert_ok(at)
    assert drawn(at) == "bm25_ce" == baseline_box(at).value
    assert store.Workspace(store.default_path()).baseline("legal") == "bm25_ce"
