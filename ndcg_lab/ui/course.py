"""Streamlit glue of the course page and of a personal link's first visit: the class list, the
course editor, the class's progress and grades for the instructor; a student's course and the
form that makes or joins a team.

What is drawn comes from :mod:`metrics.tasks.classlist` and :mod:`metrics.tasks.course`: a
student's page shows only that student's own name (teammates' only with display names on).
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

import metrics
from metrics.analysis import lessons
from metrics.tasks import TaskAccess, classlist, course, grades, roster
from ndcg_lab.ui import exercise, paths
from ndcg_lab.ui import tasks as task_ui
from ndcg_lab.ui.text import md, plain_frame

SAMPLE = "student id,name,email,team\ns001,Ada Lovelace,ada@example.edu,Red\n"


def course_link(token: str) -> str:
    """The course page's address for a token (an instructor's or a student's personal one)."""
    return f"{task_ui.manager().settings.public_url}{course.PAGE}?{course.PARAM}={token}"


# -- a personal link without a team ----------------------------------------------------


def team_form(access: TaskAccess) -> None:
    """A listed student without a team: make one or join one (up to the size the instructor set)."""
    me = classlist.student_view(access)
    st.header("Class task: your team")
    task_ui.show_messages()
    st.write(md(f"Welcome, {me.name}. Make a team, or join one by typing its exact name."))
    if me.team_size:
        st.caption(f"A team holds at most {me.team_size} students.")
    with st.form("form_team"):
        name = st.text_input("Team name")
        go = st.form_submit_button("Make or join the team", type="primary")
    if go:
        task_ui.act(lambda: roster.form_team(access.task, int(access.student or 0), name, access.task.clock()),
             "You are in the team. This page is now your team's page.")


# -- the instructor --------------------------------------------------------------------


def class_list_section(access: TaskAccess) -> None:
    registry = task_ui.manager().registry
    st.subheader("Class list")
    data = classlist.class_view(access)
    with st.expander("Add students (CSV: student id, name, optional email and team)", expanded=not data.students):
        upload = st.file_uploader("Class list file (.csv)", type=["csv", "txt"], key="class_file")
        pasted = st.text_area("Or paste it", placeholder=SAMPLE, key="class_paste")
        size = st.number_input("Largest team students may form (0: no bound)", 0, 50, 5, key="team_size")
        if st.button("Load the class list", type="primary"):
            text = upload.getvalue() if upload is not None else pasted
            source = upload.name if upload is not None else "the pasted list"
            task_ui.act(lambda: classlist.load(registry, access, text, source, int(size) or None),
                 "The class list is loaded: each student has a personal link below.")
    if not data.students:
        st.caption("Without a class list, teams join with the join link.")
        return
    st.caption(f"{len(data.students)} students in {len(data.teams)} teams. Personal links are secrets: send "
               "each student their own. Without display names, no student's name appears on another's page.")
    st.table(plain_frame(classlist.class_frame(data).set_index("student id")))
    personal = pd.DataFrame([{"student id": s.student_id, "name": s.name, "email": s.email or "",
                              "task link": s.link, "course link": course_link(s.link.rsplit("=", 1)[1])}
                             for s in data.students])
    st.download_button("Personal links (CSV, for a mail merge)", course.class_csv(personal),
                       file_name="personal-links.csv", mime="text/csv", on_click="ignore")
    if data.teams:
        st.table(plain_frame(pd.DataFrame(data.teams).drop(columns="team").set_index("name")))
    who = {s.number: f"{s.student_id} {s.name}" for s in data.students}
    c1, c2 = st.columns(2)
    number = c1.selectbox("Student", list(who), format_func=lambda n: who[n], key="student_pick")
    if c2.button("Re-issue the link (the old one stops working)"):
        task_ui.act(lambda: classlist.reissue(registry, access, number), "A new link is issued; the old one is dead.")
    if c2.button("Remove from the class list"):
        task_ui.act(lambda: classlist.remove(registry, access, number), "The student is removed; the link is dead.")
    shown = st.toggle("Display names: teammates see each other's names", data.options.display_names)
    if shown != data.options.display_names:
        task_ui.act(lambda: roster.set_options(access.task, display_names=shown), "Saved.")
    with st.expander("Activity"):
        st.table(plain_frame(pd.DataFrame(list(data.activity), columns=["time (UTC)", "student id", "action",
                                                                         "detail"])))


def course_section(access: TaskAccess) -> None:
    st.subheader("Course")
    catalogue = course.lesson_catalogue()
    current = course.items(access.task)
    st.caption("Pick the lessons in the order students should read them, exercise sets (links made on the "
               "Learn page) and the class task. Students open the course with their own course link.")
    with st.form("course_items"):
        chosen = st.multiselect("Lessons, in order", list(catalogue), format_func=lambda i: catalogue[i].title,
                                default=[i.ref for i in current if i.kind == "lesson"])
        sets = st.text_area("Exercise set links (one a line)",
                            "\n".join(i.ref for i in current if i.kind == "exercises"))
        with_task = st.checkbox("The class task", value=not current or any(i.kind == "task" for i in current))
        go = st.form_submit_button("Save the course", type="primary")
    if go:
        items = [course.Item("lesson", i, "") for i in chosen]
        items += [course.Item("exercises", line.strip(), f"Exercises {n}")
                  for n, line in enumerate(filter(str.strip, sets.splitlines()), start=1)]
        items += [course.Item("task", "", "")] if with_task else []
        task_ui.act(lambda: course.set_items(access, items), "The course is saved.")
    if current:
        st.write("Steps: " + " → ".join(md(f"{n}. {i.title}") for n, i in enumerate(current, start=1)))
        progress = course.class_progress(access)
        st.subheader("The class's progress")
        st.table(plain_frame(progress.set_index("student id")))
        st.download_button("Progress (CSV)", course.class_csv(progress), file_name="course-progress.csv",
                           mime="text/csv", on_click="ignore")


def _numbers(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.replace(";", ",").split(",") if x.strip())
    except ValueError:
        raise metrics.MetricsError(f"{text!r} is not a list of numbers", fix="type numbers such as 100, 90, 80") \
            from None


def _pairs(text: str) -> tuple[tuple[float, float], ...]:
    pairs = []
    for part in filter(str.strip, text.replace(";", ",").split(",")):
        score, _, points = part.partition(":")
        try:
            pairs.append((float(score), float(points)))
        except ValueError:
            raise metrics.MetricsError(f"{part.strip()!r} is not score: points", fix="type pairs such as 0.5: 100") \
                from None
    return tuple(pairs)


def grades_section(access: TaskAccess) -> None:
    st.subheader("Grades for the gradebook")
    st.caption("Each student takes the grade of their team on the final standings (a preview before the release).")
    kind = st.radio("Rule", grades.RULES, horizontal=True, key="grade_rule",
                    format_func={"rank": "by rank", "thresholds": "by score thresholds",
                                 "participation": "participation (submitted at least once)"}.get)
    c1, c2, c3 = st.columns(3)
    item = c1.text_input("Grade item / assignment name", "Class task", key="grade_item")
    full = c2.number_input("Points possible", 0.0, 1000.0, 100.0, key="grade_full")
    others = c3.number_input("Points otherwise", 0.0, 1000.0, 0.0, key="grade_others")
    points = st.text_input("Points of rank 1, 2, ... (comma-separated)", "100, 90, 80, 70, 60, 50",
                           key="grade_points") if kind == "rank" else ""
    cuts = st.text_input("Thresholds: score at least: points", "0.5: 100, 0.4: 80, 0.3: 60",
                         key="grade_cuts") if kind == "thresholds" else ""
    try:
        rule = grades.Rule(kind, points=_numbers(points), thresholds=_pairs(cuts), full=full, others=others,
                           max_points=full)
        found = grades.grade(access, rule)
    except metrics.MetricsError as exc:
        st.error(md(str(exc)))
        return
    if not found:
        return
    table = pd.DataFrame(found).drop(columns=["email"])
    table["score"] = [f"{v:.4f}" if v is not None and v == v else "—" for v in table["score"]]
    table["rank"] = [str(int(r)) if r == r and r is not None else "—" for r in table["rank"]]
    table["points"] = [f"{v:g}" for v in table["points"]]
    st.table(plain_frame(table.set_index("student_id")))
    c1, c2 = st.columns(2)
    c1.download_button("Moodle (CSV)", grades.moodle_csv(found, item), file_name="grades-moodle.csv",
                       mime="text/csv", on_click="ignore")
    c2.download_button("Canvas (CSV)", grades.canvas_csv(found, item, full), file_name="grades-canvas.csv",
                       mime="text/csv", on_click="ignore")


# -- a student -------------------------------------------------------------------------


def student_course(access: TaskAccess, token: str) -> None:
    me = classlist.student_view(access)
    st.caption(md(f"{me.name}" + (f" · team {me.team}" if me.team else " · no team yet")
                  + (f" · with {', '.join(me.teammates)}" if me.teammates else "")))
    mine = course.progress(access)
    if not mine.items:
        st.info("Your instructor has not set up the course yet.")
        return
    done = sum(p.complete for p in mine.items)
    st.progress(done / len(mine.items), text=f"{done} of {len(mine.items)} steps done")
    for p in mine.items:
        state = "done" if p.complete else "next" if p.pos == mine.next else "to do"
        icon = {"done": ":material/check_circle:", "next": ":material/arrow_forward:",
                "to do": ":material/radio_button_unchecked:"}[state]
        with st.expander(f"{icon} {p.pos + 1}. {md(p.item.title)} ({state})", expanded=state == "next"):
            _step(access, token, p)


def _step(access: TaskAccess, token: str, p: course.ItemProgress) -> None:
    item = p.item
    if item.kind == "lesson":
        st.page_link(paths.view("learn"), label="Open the lesson", query_params={"lesson": item.ref},
                     icon=":material/school:")
        if not p.complete and st.button("I have read it", key=f"read_{p.pos}"):
            task_ui.act(lambda: course.mark_read(access, p.pos), "Marked as read.")
    elif item.kind == "task":
        st.page_link(paths.view("task"), label="Open the class task", query_params={"task": token},
                     icon=":material/groups:")
        st.caption("Done once your team has submitted a run.")
    else:
        st.caption(f"{p.done} of {p.parts} right")
        for i, ex in enumerate(course.exercises_of(item)):
            st.markdown(md(f"**{i + 1}.** {ex.question}"))
            key = f"ex_{p.pos}_{i}"
            if ex.kind == "choice":
                labels = [md(text) for text in lessons.option_labels(ex)]
                picked = st.radio("Your answer", labels, index=None, key=key)
                response: object = None if picked is None else labels.index(picked)
            elif ex.kind == "number":
                response = st.text_input("Your answer (a number)", key=key)
            else:                               # reorder, higher: the lists and widgets of the Learn page
                exercise.show_inputs(ex, key)
                response = exercise.response_widgets(ex, key)
            if st.button("Check", key=f"check_{p.pos}_{i}"):
                _answer(access, p.pos, i, response)


def _answer(access: TaskAccess, pos: int, index: int, response: object) -> None:
    """Check a response (a value, or the reader :func:`ndcg_lab.ui.exercise.response_widgets` gives)."""
    try:
        response = response() if callable(response) else response
    except metrics.MetricsError as exc:
        task_ui.say("error", str(exc))
        st.rerun()
    if response is None or response == "":
        task_ui.say("error", "Give an answer first.")
        st.rerun()
    try:
        result = course.answer(access, pos, index, response)
    except metrics.MetricsError as exc:
        task_ui.say("error", str(exc))
        st.rerun()
    task_ui.say("success" if result.correct else "warning",
                "Right: kept in your progress." if result.correct else
                "Not yet: " + (result.mistake or "try again") + ".")
    st.rerun()
