"""``task``: run a class task from the command line, on ``$NDCG_LAB_HOME`` (also while the app runs).

    task create --title T --topics F --qrels F [--baseline RUN]... --measure M [--measure M]...
                [--public 0.3 --seed N | --public-topics FILE] [--opens ISO] --closes ISO
                [--per-day N] [--total N] [--finals N]     prints instructor:, join:, projector: URLs
    task join JOIN_LINK --team NAME                         prints team: URL
    task submit TEAM_LINK RUN [--label L] [--method M]      prints the public scores; a refusal exits 2
    task close INSTRUCTOR_LINK | task release INSTRUCTOR_LINK [--qrels]
    task standings LINK --format csv|tsv|json|latex         the board that link may see

Links are ``$NDCG_LAB_PUBLIC_URL/task?task=TOKEN``; a bare token works too.
"""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import MetricsError
from ..tasks import TaskDefinition, Tasks, TeamView, parse_time
from ..tasks import views as task_views
from ..tasks.views import FORMATS


def register(sub) -> None:
    t = sub.add_parser("task", help="create, join, submit to and release a class task")
    verbs = t.add_subparsers(dest="verb", required=True)

    c = verbs.add_parser("create", help="create a task; prints its instructor, join and projector links")
    c.add_argument("--title", required=True)
    c.add_argument("--description", default="")
    c.add_argument("--topics", required=True, help="topics file (any format the Data page reads)")
    c.add_argument("--qrels", required=True, help="the hidden judgments")
    c.add_argument("--baseline", action="append", default=[], help="a baseline run (repeatable)")
    c.add_argument("--measure", action="append", dest="measures", default=[],
                   help="measure (repeatable; the first is the primary one), e.g. nDCG@10")
    c.add_argument("--gain", choices=("exp", "linear"), default=None, help="gain of nDCG-like measures")
    split = c.add_mutually_exclusive_group()
    split.add_argument("--public", type=float, default=None, help="fraction of the judged topics made public")
    split.add_argument("--public-topics", default=None, help="file of public topic ids, one a line")
    c.add_argument("--seed", type=int, default=0, help="seed of the public draw (default 0)")
    c.add_argument("--opens", default=None, help="opening time, ISO 8601 (no zone: UTC); default now")
    c.add_argument("--closes", required=True, help="closing time, ISO 8601 (no zone: UTC)")
    c.add_argument("--per-day", type=int, default=None, help="submissions per team per UTC day")
    c.add_argument("--total", type=int, default=None, help="submissions per team in all")
    c.add_argument("--finals", type=int, default=1, help="final submissions a team may choose (default 1)")
    c.add_argument("--board", choices=("best", "latest"), default="best", help="public board by best or latest")
    c.add_argument("--final-topics", choices=("hidden", "all"), default="hidden")
    c.add_argument("--dev-qrels", action="store_true", help="open the public topics' judgments to teams")
    c.add_argument("--anonymous", action="store_true", help="boards show Team 1, Team 2, ... not names")
    c.add_argument("--key", default=None, help="the instructor key (default $NDCG_LAB_INSTRUCTOR_KEY)")
    c.set_defaults(handler=cmd_create)

    j = verbs.add_parser("join", help="join a task as a team; prints the team's link")
    j.add_argument("link")
    j.add_argument("--team", required=True)
    j.set_defaults(handler=cmd_join)

    s = verbs.add_parser("submit", help="submit a run with a team link")
    s.add_argument("link")
    s.add_argument("run")
    s.add_argument("--label", default=None)
    s.add_argument("--method", default=None, help="one line saying what the run is (shown after the release)")
    s.set_defaults(handler=cmd_submit)

    for name, helptext in (("close", "close the task now"), ("release", "release the final standings")):
        r = verbs.add_parser(name, help=helptext)
        r.add_argument("link")
        if name == "release":
            r.add_argument("--qrels", action="store_true", help="release the qrels too")
        r.set_defaults(handler=cmd_close if name == "close" else cmd_release)

    b = verbs.add_parser("standings", help="print the board that a link may see")
    b.add_argument("link")
    b.add_argument("--format", choices=FORMATS, default="csv")
    b.set_defaults(handler=cmd_standings)


def cmd_create(args) -> int:
    public_topics = None
    if args.public_topics:
        try:
            text = Path(args.public_topics).read_text(encoding="utf-8")
        except OSError as exc:
            raise MetricsError(f"cannot read the public topics ({exc.strerror or exc})",
                               source=args.public_topics, fix="check the path") from None
        public_topics = tuple(line.split()[0] for line in text.splitlines() if line.strip())
    definition = TaskDefinition(
        title=args.title, description=args.description, measures=tuple(args.measures or ["nDCG@10"]),
        gain=args.gain, public_fraction=0.3 if args.public is None else args.public, seed=args.seed,
        public_topics=public_topics, opens=None if args.opens is None else parse_time(args.opens, what="opening"),
        closes=parse_time(args.closes, what="closing time"), per_day=args.per_day, total=args.total,
        finals=args.finals, board=args.board, final_topics=args.final_topics, dev_qrels=args.dev_qrels,
        anonymous=args.anonymous)
    baselines = [(Path(b).stem, Path(b)) for b in args.baseline]
    links = Tasks().create(definition, topics=args.topics, qrels=Path(args.qrels), baselines=baselines,
                           key=args.key or os.environ.get("NDCG_LAB_INSTRUCTOR_KEY"),
                           qrels_name=Path(args.qrels).name)
    print(f"instructor: {links.instructor}")
    print(f"join: {links.join}")
    print(f"projector: {links.projector}")
    return 0


def cmd_join(args) -> int:
    print(f"team: {Tasks().join(args.link, args.team)}")
    return 0


def cmd_submit(args) -> int:
    tasks = Tasks()
    access = tasks.open(args.link)
    path = Path(args.run)
    sid = access.submit(path, args.label, path.name, args.method)
    view = task_views.view(access)
    assert isinstance(view, TeamView)  # submit() above refused any other link
    mine = next(s for s in view.submissions if s.id == sid)
    n = view.task.n_public
    print(f"submission {sid} ({mine.label}) received {mine.received}; public scores over {n} topics:")
    for measure, value in mine.means_public.items():
        print(f"{measure}\t{value:.4f}")
    left = view.allowance.left
    if left is not None:
        print(f"submissions left: {left}")
    return 0


def cmd_close(args) -> int:
    Tasks().open(args.link).close()
    print("closed")
    return 0


def cmd_release(args) -> int:
    Tasks().open(args.link).release(qrels=args.qrels)
    print("released" + (" with the qrels" if args.qrels else ""))
    return 0


def cmd_standings(args) -> int:
    print(task_views.export_board(task_views.view(Tasks().open(args.link)), args.format), end="")
    return 0
