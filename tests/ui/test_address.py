"""The sidebar's selection in the address (ui.selection.ADDRESS), in AppTest: a link's collection,
systems, baseline and gain are shown; names the workspace lacks are ignored; the address follows
the sidebar; a linked baseline never writes the workspace and gives way when the stored one changes."""
from __future__ import annotations

from metrics import store
from tests.conftest import assert_ok, systems_box


def test_a_link_selects_what_it_names_and_ignores_what_the_workspace_lacks(open_app):
    at = open_app(query_params={"collection": "legal", "systems": ["dense", "nope", "bm25"], "baseline": "dense",
                                "gain": "linear"})
    assert systems_box(at).value == ["dense", "bm25"]
    assert at.sidebar.selectbox(key="baseline::legal").value == "dense"
    assert at.sidebar.radio(key="gain").value == "linear"
    assert store.Workspace(store.default_path()).baseline("legal") == "bm25"      # the workspace is not written
    assert at.query_params["systems"] == ["dense", "bm25"] and at.query_params["gain"] in ("linear", ["linear"])

    with store.Workspace(store.default_path()) as ws:                         # another tab sets the baseline
        ws.set_baseline("legal", "bm25_qe")
    at.run()
    assert_ok(at)
    assert at.sidebar.selectbox(key="baseline::legal").value == "bm25_qe"
    assert at.query_params["baseline"] in ("bm25_qe", ["bm25_qe"])


def test_unknown_values_fall_back_to_the_defaults(open_app):
    at = open_app(query_params={"collection": "nowhere", "gain": "cubic", "baseline": "nope"})
    assert at.sidebar.radio(key="gain").value == "exp"
    assert at.sidebar.selectbox(key="baseline::legal").value == "bm25"
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
