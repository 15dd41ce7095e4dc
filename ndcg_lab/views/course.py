"""Course: lessons, exercise sets and a class task behind one link (``?course=TOKEN``). The
instructor's token opens the class list, the course editor, the class's progress and the grades;
a student's personal token opens that student's course: what is done and what is next."""
import streamlit as st

from metrics.tasks import course
from ndcg_lab.ui import course as ui
from ndcg_lab.ui import paths
from ndcg_lab.ui import tasks as task_ui
from ndcg_lab.ui.text import md

token = st.query_params.get(course.PARAM)
if not token:
    st.header("Course")
    st.write("A course bundles lessons, exercise sets and a class task. Create a class task first (Class task "
             "page); its instructor page links to the course.")
    st.stop()
access = task_ui.access(token)
view_title = access.snapshot().definition.title
st.header(md(f"Course: {view_title}"))
task_ui.show_messages()
if access.role == "instructor":
    st.page_link(paths.view("task"), label="The class task's instructor page",
                 query_params={"task": token}, icon=":material/groups:")
    ui.class_list_section(access)
    ui.course_section(access)
    ui.grades_section(access)
elif access.student is not None:
    ui.student_course(access, token)
else:
    st.error("This link opens no course: use your personal link.", icon=":material/lock:")
