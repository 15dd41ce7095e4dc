"""Class task: one page for every link of a task (``?task=TOKEN``): the instructor's, the class's
join link, a team's and the projector's; without a token, the form that creates a task.

Every part drawn comes from :func:`metrics.tasks.views.view` of the link's access: what that link may see.
"""
import time
from datetime import UTC, datetime, timedelta

import pandas as pd
import streamlit as st

import metrics
from metrics.report.figures import curves as figures
from metrics.report.figures.timeline import submissions_over_time
from metrics.tasks import InstructorView, TaskDefinition, TeamView, View, export_board, team_qrels
from metrics.tasks import views as task_views
from metrics.tasks.links import token_of
from metrics.tasks.store import NO_KEY, NO_KEY_FIX
from metrics.tasks.submissions import METHOD_LIMIT
from ndcg_lab.ui import course as course_ui
from ndcg_lab.ui import paths, projector, share, state
from ndcg_lab.ui import tasks as ui
from ndcg_lab.ui.charts import plotly_chart
from ndcg_lab.ui.text import md, plain_frame

SAMPLES = {"legal": state.SAMPLES / "legal", "web": state.SAMPLES / "web"}
REFRESH = 10  # seconds between two redraws of the countdown on a team page


def _when(label: str, default: datetime, key: str) -> float:
    """A date and a time (UTC) as seconds since the epoch."""
    c1, c2 = st.columns(2)
    day = c1.date_input(f"{label}: date (UTC)", default.date(), key=f"{key}_date")
    moment = c2.time_input(f"{label}: time (UTC)", default.time().replace(second=0, microsecond=0),
                           key=f"{key}_time", step=60)
    return datetime.combine(day, moment, tzinfo=UTC).timestamp()


def create_page() -> None:
    st.header("Class task")
    st.write("Create a shared task: teams upload runs, a class leaderboard ranks them, and the judgments "
             "of the hidden topics stay secret until you release them.")
    manager = ui.manager()
    key = None
    if manager.key_unset():
        st.warning(md(f"{NO_KEY[0].upper() + NO_KEY[1:]}: NDCG_LAB_INSTRUCTOR_KEY is not set. "
                      f"{NO_KEY_FIX[0].upper() + NO_KEY_FIX[1:]}."), icon=":material/key_off:")
    if manager.settings.tasks == "key":
        key = st.text_input("Instructor key", type="password", help="the key the operator set")
    source = st.radio("Topics and judgments", ["Sample: legal", "Sample: web", "Upload files"], horizontal=True)
    with st.form("create_task"):
        title = st.text_input("Title", "Class task")
        description = st.text_area("Description (shown as plain text)", "")
        if source == "Upload files":
            topics_file = st.file_uploader("Topics (any format the Data page reads)")
            qrels_file = st.file_uploader("Qrels (hidden from the teams)")
            baseline_files = st.file_uploader("Baseline runs", accept_multiple_files=True)
        measures = st.text_input("Measures (comma-separated, the first is the primary one)", "nDCG@10, AP")
        gain = st.radio("Gain", ["exp", "linear"], format_func=state.GAINS.get, horizontal=True)
        c1, c2 = st.columns(2)
        fraction = c1.number_input("Public fraction of the topics", 0.0, 1.0, 0.3, 0.05)
        seed = c2.number_input("Seed of the public draw", 0, 2**31 - 1, 0)
        now = datetime.now(UTC).replace(second=0, microsecond=0)
        closes = _when("Closes", now + timedelta(days=7), "closes")
        c1, c2, c3 = st.columns(3)
        per_day = c1.number_input("Submissions per team per day (0: no cap)", 0, 1000, 5)
        total = c2.number_input("Submissions per team in all (0: no cap)", 0, 10000, 20)
        finals = c3.number_input("Final submissions a team may choose", 1, 20, 1)
        c1, c2, c3 = st.columns(3)
        rule = c1.radio("Public board ranks a team by its", ["best", "latest"], horizontal=True)
        final_topics = c2.radio("Final standings on", ["hidden", "all"], horizontal=True)
        dev = c3.checkbox("Open the public topics' judgments to teams (a dev set)")
        anonymous = st.checkbox("Boards show anonymous labels (Team 1, Team 2, ...)")
        go = st.form_submit_button("Create the task", type="primary")
    if not go:
        return
    try:
        if source == "Upload files":
            if topics_file is None or qrels_file is None:
                raise metrics.MetricsError("upload the topics and the qrels first")
            topics, qrels, qrels_name = topics_file.getvalue(), qrels_file.getvalue(), qrels_file.name
            baselines = [(f.name.rsplit(".", 1)[0], f.getvalue()) for f in baseline_files or []]
        else:
            folder = SAMPLES[source.split(": ")[1]]
            topics, qrels, qrels_name = folder / "topics.tsv", folder / "qrels.txt", "qrels.txt"
            baseline = state.SAMPLE_BASELINES.get(folder.name)
            baselines = [(baseline, folder / f"{baseline}.run")] if baseline else []
        definition = TaskDefinition(
            title=title, description=description, measures=tuple(m.strip() for m in measures.split(",") if m.strip()),
            gain=gain, public_fraction=float(fraction), seed=int(seed), closes=closes, per_day=per_day or None,
            total=total or None, finals=int(finals), board=rule, final_topics=final_topics, dev_qrels=dev,
            anonymous=anonymous)
        links = manager.create(definition, topics=topics, qrels=qrels, baselines=baselines, key=key,
                               qrels_name=qrels_name)
    except metrics.MetricsError as exc:
        st.error(md(str(exc)), icon=":material/block:")
        return
    ui.say("success", "The task is created. Keep the instructor link: it is the only way back to this page.")
    st.query_params[ui.PARAM] = links.tokens["instructor"]
    st.rerun()


def header(view: View) -> None:
    task = view.task
    st.header(md(task.title))
    if task.description:
        st.markdown(md(task.description))
    st.caption(ui.rules_caption(task))


def show_board(view: TeamView | InstructorView) -> None:
    for final, board in ((True, view.final_board), (False, view.board)):
        if board is None:
            continue
        title = "Final standings" if final else "Public leaderboard"
        if final and isinstance(view, InstructorView) and view.task.released is None:
            title += " (preview: the teams see them after the release)"
        st.subheader(title)
        st.caption(ui.board_note(board))
        st.table(ui.board_frame(board))


def join_page(access) -> None:
    view = task_views.view(access)
    header(view)
    ui.show_messages()
    st.subheader("Join as a team")
    with st.form("join"):
        name = st.text_input("Team name")
        go = st.form_submit_button("Join", type="primary")
    if go:
        try:
            link = ui.manager().join(access.link, name)
        except metrics.MetricsError as exc:
            st.error(md(str(exc)), icon=":material/block:")
            return
        ui.say("success", "Welcome! Bookmark this page: its address is your team's link, the only way back.")
        st.query_params[ui.PARAM] = link.rsplit("=", 1)[1]
        st.rerun()


def _submit(access, upload, label: str, method: str) -> None:
    if upload is None:
        ui.say("error", "Choose a run file first.")
        return
    try:
        sid = access.submit(upload.getvalue(), label or None, upload.name, method or None)
    except metrics.MetricsError as exc:
        ui.say("error", str(exc))
        return
    view = task_views.view(access)
    assert isinstance(view, TeamView)
    mine = next(s for s in view.submissions if s.id == sid)
    scores = ", ".join(f"{m} {v:.4f}" for m, v in mine.means_public.items())
    ui.say("success", f"Submission {sid} ({mine.label}) scored on the public topics: {scores}")


def countdown(access) -> None:
    """The time to the close (or the opening), redrawn every :data:`REFRESH` seconds."""
    @st.fragment(run_every=REFRESH)
    def line():
        st.caption(ui.countdown(task_views.view(access).task, time.time()))

    line()


def submit_form(access, task) -> None:
    """The submission form. A page that showed it keeps it after the close, so that a run chosen
    before the close and sent after it gets the refusal that says when the task closed (rather
    than a form that vanishes). Each press gives the uploader a new key: the same file may be
    chosen again after a refusal or an acceptance."""
    shown = f"_task_form_{access.task.id}_{access.team}"
    presses = f"_task_presses_{access.task.id}_{access.team}"
    if task.status != "open" and not st.session_state.get(shown):
        return
    st.session_state[shown] = True
    with st.form("submit_run", clear_on_submit=True):
        upload = st.file_uploader("Run file (TREC format)", key=f"run_file_{st.session_state.get(presses, 0)}")
        label = st.text_input("Label (optional)")
        method = st.text_input(f"Method (optional, one line, at most {METHOD_LIMIT} characters; other teams see it "
                               "on the final standings after the release)", max_chars=METHOD_LIMIT,
                               placeholder="e.g. BM25, then a cross-encoder reranks the top 100")
        if st.form_submit_button("Submit", type="primary"):
            st.session_state[presses] = st.session_state.get(presses, 0) + 1
            _submit(access, upload, label, method)
            if task.status != "open":
                st.session_state.pop(shown, None)
            st.rerun()


def team_page(access) -> None:
    view = task_views.view(access)
    assert isinstance(view, TeamView)
    header(view)
    countdown(access)
    ui.show_messages()
    task, allowance = view.task, view.allowance
    left = f", {allowance.left} left" if allowance.left is not None and task.status == "open" else ""
    st.caption(f"Team **{md(view.team.name or '')}**"
               + (f" (shown as {md(view.team.shown_as or '')})" if task.anonymous else "")
               + f" · submissions: {allowance.used} used{left}")
    submit_form(access, task)
    mine = view.submissions
    measures = task.measures
    if mine:
        st.subheader("Your submissions (public topics)")
        st.table(ui.submissions_frame(mine, measures))
        if task.status == "open" and task.finals:
            finals_picker(access, mine, task.finals)
        sid = st.selectbox("Per-query scores of", [s.id for s in mine], index=len(mine) - 1,
                           format_func=lambda i: f"#{i} {next(s.label for s in mine if s.id == i)}")
        shown = next(s for s in mine if s.id == sid)
        topics = "every topic" if view.can_copy else "the public topics"
        with st.expander(f"Per-query scores on {topics}", expanded=False):
            st.table(ui.per_query_frame(shown, measures))
        if shown.lint:
            with st.expander("Lint", expanded=False):
                for line in ui.findings_text(shown.lint):
                    st.write(line)
    show_board(view)
    c1, c2 = st.columns(2)
    c1.download_button("Download the board (CSV)", export_board(view, "csv"), file_name="board.csv",
                       mime="text/csv", on_click="ignore")
    judgments = team_qrels(access)
    if judgments is not None:
        c2.download_button("Download the judgments you may see", judgments, file_name="qrels.txt",
                           mime="text/plain", on_click="ignore")
    if view.can_copy:
        if st.button("Copy my runs and the released qrels into my workspace"):
            try:
                name = access.copy_to(state.workspace())
                state.open_collection(name)
                ui.say("success", f"Added the collection {name} to your workspace and opened it: "
                                  "every page (Leaderboard, Query explorer, ...) works on it now.")
            except metrics.MetricsError as exc:
                ui.say("error", str(exc))
            st.rerun()
    with st.expander("Topics"):
        st.table(plain_frame(pd.DataFrame(view.topics).set_index("qid")))


def finals_picker(access, mine, finals: int) -> None:
    """The final submission(s): one choice (a single-choice list, "none" meaning the latest), or
    up to ``finals`` of them."""
    chosen = [s.id for s in mine if s.final]
    labels = {s.id: f"#{s.id} {s.label}" for s in mine}
    if finals == 1:
        options = [None, *labels]
        pick = st.selectbox("Final submission (none: your latest)", options,
                            index=options.index(chosen[0]) if chosen and chosen[0] in options else 0,
                            format_func=lambda i: "none: your latest" if i is None else labels[i])
        picked = [] if pick is None else [pick]
    else:
        picked = st.multiselect(f"Final submissions (at most {finals}; none: your latest)", list(labels),
                                default=chosen, max_selections=finals, format_func=labels.get)
    if picked != chosen and st.button("Save the finals"):
        try:
            access.choose_finals(picked)
        except metrics.MetricsError as exc:
            ui.say("error", str(exc))
        st.rerun()


def projector_page(access) -> None:
    projector.task_board(access)


def instructor_page(access) -> None:
    view = task_views.view(access)
    assert isinstance(view, InstructorView)
    header(view)
    ui.show_messages()
    task, links = view.task, view.links
    st.subheader("Links")
    for role, text in (("Instructor (keep it to yourself)", links.instructor),
                       ("Join (give it to the class)", links.join),
                       ("Projector (read-only board)", links.projector)):
        st.caption(role)
        st.code(text, language=None)
    for title, role in (("the join link", "join"), ("the projector", "projector")):
        share.handout(title, "task", {ui.PARAM: token_of(getattr(links, role))}, here="task")
    st.page_link(paths.view("course"), label="Class list, course and grades", query_params={"course": access.token},
                 icon=":material/menu_book:")
    st.subheader("Controls")
    c1, c2, c3 = st.columns(3)
    if c1.button("Close now", disabled=task.status not in ("open", "not open yet")):
        ui.act(access.close, "The task is closed.")
    release_qrels = c2.checkbox("Release the qrels too")
    if c2.button("Release the final standings", disabled=task.status not in ("closed", "released")):
        ui.act(lambda: access.release(qrels=release_qrels), "Released.")
    with c3.popover("Extend or reopen"):
        when = _when("Closes", datetime.now(UTC) + timedelta(days=1), "extend")
        if st.button("Set the close"):
            ui.act(lambda: access.set_close(when), "The close is moved.")
    c1, c2 = st.columns(2)
    dev = c1.toggle("Public topics' judgments open to teams (dev set)", task.dev_qrels)
    anonymous = c2.toggle("Anonymous labels on the boards", task.anonymous)
    if dev != task.dev_qrels or anonymous != task.anonymous:
        ui.act(lambda: access.set_options(dev_qrels=dev, anonymous=anonymous), "Options saved.")

    show_board(view)
    c1, c2, c3 = st.columns(3)
    c1.download_button("Final standings (CSV)", export_board(view, "csv"), file_name="standings.csv",
                       mime="text/csv", on_click="ignore")
    c2.download_button("Final standings (LaTeX)", export_board(view, "latex"), file_name="standings.tex",
                       mime="text/x-tex", on_click="ignore")
    c3.download_button("Every submission (zip with manifest)", access.archive, file_name="submissions.zip",
                       mime="application/zip", on_click="ignore")

    subs = view.submissions
    st.subheader(f"Submissions ({len(subs)})")
    if subs:
        st.table(ui.instructor_frame(subs, task.primary))
        with st.expander("Lint of a submission"):
            sid = st.selectbox("Submission", [s.id for s in subs], key="lint_of")
            for line in ui.findings_text(next(s for s in subs if s.id == sid).lint):
                st.write(line)
        with st.expander("Remove a submission"):
            live = [s.id for s in subs if not s.removed and s.team is not None]
            sid = st.selectbox("Submission to remove", live, key="remove_which")
            reason = st.text_input("Reason (kept in the audit list)", key="remove_reason")
            if st.button("Remove", disabled=not live):
                ui.act(lambda: access.remove_submission(sid, reason), f"Submission {sid} removed.")
    if view.duplicates:
        st.warning("Identical runs from different teams:")
        st.table(plain_frame(pd.DataFrame(view.duplicates)))
    if view.timeline:
        st.subheader(f"Public {task.primary} over time")
        frame = pd.DataFrame(view.timeline)
        plotly_chart(submissions_over_time(frame, task.primary), width="stretch", config=figures.FIGURE_CONFIG,
                     key="task_timeline")
        st.caption(f"Each point is a submission: its {md(task.primary)} on the public topics, at the time it was "
                   "received (UTC); a team's points are joined in time order.")
    if view.spread:
        st.subheader(f"The class per topic ({task.primary}, each team's latest)")
        st.table(plain_frame(pd.DataFrame(view.spread).set_index("qid").round(4)))
    if view.wins:
        st.subheader("Wins over the baseline, per topic (each team's latest)")
        st.table(plain_frame(pd.DataFrame(view.wins).set_index("team")))
    st.subheader("Judgments")
    st.table(plain_frame(pd.DataFrame(view.qrels_versions).set_index("version")))
    with st.form("replace_qrels", clear_on_submit=True):
        upload = st.file_uploader("Corrected qrels (every submission is rescored; old versions are kept)")
        note = st.text_input("What changed")
        if st.form_submit_button("Replace and rescore") and upload is not None:
            ui.act(lambda: access.replace_qrels(upload.getvalue(), upload.name, note), "Rescored on the new qrels.")
    with st.expander("Teams and audit"):
        if view.teams:
            st.table(plain_frame(pd.DataFrame(view.teams).set_index("id")))
        st.table(plain_frame(pd.DataFrame(view.audit)))
    with st.expander("Delete the task"):
        if st.checkbox("Yes, delete the task, its submissions and every link") and st.button("Delete"):
            ui.manager().delete(access)
            st.query_params.clear()
            st.rerun()


token = st.query_params.get(ui.PARAM)
if not token:
    create_page()
    st.stop()
link = ui.access(token)
{"instructor": instructor_page, "join": join_page, "team": team_page, "projector": projector_page,
 "student": course_ui.team_form}[link.role](link)
