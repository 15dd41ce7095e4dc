"""Class tasks: hidden judgments, team submissions with caps, and a class leaderboard.

Modules, lowest first; a module imports only from those before it (import-linter checks the
order, pyproject.toml): ``definition`` (a task's rules, times, the public split), ``links``
(tokens and the roles they open), ``opened`` (task files kept open between transactions),
``snapshot`` (a task as one read saw it, cached per file generation), ``task`` (one DuckDB file
per task: its locks, transactions and reads), ``submissions`` (receiving, checking and scoring
a run; the cap in one transaction), ``instructor`` (the instructor's changes, the archive, a
team's copy), ``access`` (a link's role, checked before every action), ``visible`` (what a
link may see, as frozen dataclasses), ``views`` (what each link may see, computed: the boards
with significance, the stamped exports), ``store`` (the tasks under
``$NDCG_LAB_HOME/tasks`` and the registry of link tokens kept as hashes; the facade).
"""
from .access import TaskAccess
from .definition import TaskDefinition, iso, parse_time
from .links import Links, TaskNotFound, token_of
from .store import Tasks
from .submissions import SubmissionRefused, lists_digest
from .views import board, export_board, team_qrels, view
from .visible import InstructorView, JoinView, ProjectorView, TeamView, View

__all__ = ["InstructorView", "JoinView", "Links", "ProjectorView", "SubmissionRefused", "TaskAccess", "TaskDefinition",
           "TaskNotFound", "Tasks", "TeamView", "View", "board", "export_board", "iso", "lists_digest", "parse_time",
           "team_qrels", "token_of", "view"]
