"""Class tasks: hidden judgments, team submissions with caps, and a class leaderboard.

Modules, lowest first: ``definition`` (a task's rules, times, the public split), ``links``
(tokens and the roles they open), ``snapshot`` (a task as one read saw it, cached per file
generation), ``submissions`` (receiving, checking and scoring a run; the cap in one
transaction), ``instructor`` (the instructor's changes, the archive, a team's copy),
``access`` (a link's role, checked before every action), ``store`` (one DuckDB file per task
under ``$NDCG_LAB_HOME/tasks``, the registry of link tokens kept as hashes; the facade),
``views`` (what each link may see, the boards with significance, the stamped exports).
"""
from .definition import TaskDefinition, iso, parse_time
from .store import Links, SubmissionRefused, TaskAccess, TaskNotFound, Tasks, lists_digest, token_of
from .views import board, export_board, team_qrels, view

__all__ = ["Links", "SubmissionRefused", "TaskAccess", "TaskDefinition", "TaskNotFound", "Tasks", "board",
           "export_board", "iso", "lists_digest", "parse_time", "team_qrels", "token_of", "view"]
