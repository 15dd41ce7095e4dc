"""The class list is a secret: what one student's personal link reaches through the library (its
team view, board exports, its class-list view, its course, the messages of what it may try) holds
no other student's name, student id, email or personal token, and no team's page holds a student's
name. Turning display names on plants a leak the same search catches."""
from __future__ import annotations

import json
import re
from dataclasses import asdict

from metrics import MetricsError
from metrics.tasks import classlist, course, roster, views
from tests.metrics.tasks.conftest import LEGAL, make_task

LIST = ("student id,name,email,team\n"
        "u100,Ada Lovelace,ada@uni.edu,Red\nu200,Alan Turing,alan@uni.edu,Red\n"
        "u300,Grace Hopper,grace@uni.edu,Blue\nu400,Edsger Dijkstra,edsger@uni.edu,\n")


def crawl(tasks, link: str) -> list[str]:
    access = tasks.open(link)
    texts = [json.dumps(asdict(classlist.student_view(access)))]
    if access.role == "team":
        data = views.view(access)
        texts.append(json.dumps(asdict(data)))
        texts += [views.export_board(data, fmt) for fmt in views.FORMATS]
    texts.append(json.dumps(asdict(course.progress(access)), default=str))
    for attempt in (lambda: classlist.class_view(access), lambda: classlist.links(access),
                    lambda: course.class_progress(access), lambda: roster.form_team(access.task, 99, "x", 0.0),
                    lambda: tasks.join(link, "x")):
        try:
            texts.append(str(attempt()))
        except MetricsError as exc:
            texts.append(str(exc))
    return texts


def secrets_of_others(students, personal, me: int) -> set[str]:
    found = set()
    for s in students:
        if s.number != me:
            found |= {s.name, s.student_id, s.email or "", personal[s.number].rsplit("=", 1)[1]}
    return found - {""}


def leaks(texts: list[str], secrets: set[str]) -> list[str]:
    text = "\n".join(texts)
    return sorted(s for s in secrets if re.search(re.escape(s), text))


def setup(tasks):
    links = make_task(tasks)
    instructor = tasks.open(links.instructor)
    classlist.load(tasks.registry, instructor, LIST, team_size=3)
    personal = classlist.links(instructor)
    for number, run in ((1, "dense"), (3, "bm25_ce")):
        tasks.open(personal[number]).submit((LEGAL / f"{run}.run").read_bytes(), run, f"{run}.run")
    course.set_items(instructor, [course.Item("task", "", "")])
    return links, instructor, personal


def test_no_student_reaches_another_students_identity(tasks):
    _, instructor, personal = setup(tasks)
    students = roster.students(instructor.task)
    for s in students:
        mine = crawl(tasks, personal[s.number])
        assert s.name in "\n".join(mine)                      # the crawl reads the pages that name the student
        assert leaks(mine, secrets_of_others(students, personal, s.number)) == []


def test_no_team_or_projector_page_names_a_student(tasks):
    links, instructor, _ = setup(tasks)
    names = {s.name for s in roster.students(instructor.task)}
    for link in (links.projector, links.join):
        data = views.view(tasks.open(link))
        assert leaks([json.dumps(asdict(data))], names) == []


def test_display_names_plant_a_leak_the_crawl_catches(tasks):
    _, instructor, personal = setup(tasks)
    students = roster.students(instructor.task)
    roster.set_options(instructor.task, display_names=True)
    assert leaks(crawl(tasks, personal[1]), secrets_of_others(students, personal, 1)) == ["Alan Turing"]
