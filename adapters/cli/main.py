"""The `paperclub` command line: import, export, search, status, console, demo, db, backup, restore, serve.

This module only parses: each subcommand names its function as "module:function"
(`Lazy`), imported when that subcommand runs, so `paperclub --version` and `--help` load
neither SQLAlchemy nor the search engine, and each command only what it uses."""

from __future__ import annotations

import argparse
import atexit
import gc
import os
import signal
import sys
from collections.abc import Sequence
from datetime import datetime, timezone

from adapters import platforms
from adapters.cli import feeds as feed_cli
from adapters.cli import follows as follows_cli
from adapters.cli import search as search_cli
from adapters.cli.lazy import Lazy
from adapters.wsgi import HEALTH_PATH
from bot import __version__
from bot.app import FEATURES, plugins
from bot.corpus.formats import FORMAT_NAMES
from bot.ops.defaults import DATABASE_VARIABLES, DEFAULT_DATABASE_SOURCE, DEFAULT_HOST, listen_host

# --- the parser -----------------------------------------------------------------------------


# `paperclub --help` lists the subcommands in these groups, in this order: what an operator
# runs first, the benchmarks last. A subcommand in none of them is listed under OTHERS
# (tests/cli/test_help.py wants every one placed).
COMMAND_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("try it", ("demo", "sandbox", "console")),
    ("run the bot", ("serve", "tick", "config", "status", "slack", "discord")),
    ("the library", ("import", "export", "search", "embed", "enrich", "feed")),
    ("the database", ("db", "backup", "restore")),
    ("benchmarks and developer tools", ("bench", "bench-relevance", "bench-ingest", "tick-bench", "eval")),
)
OTHERS = "other commands"


class GroupedHelp(argparse.ArgumentParser):
    """The top-level parser: its --help lists the subcommands by COMMAND_GROUPS, each group a
    section as argparse draws one, then the options."""

    def format_help(self) -> str:
        formatter = self._get_formatter()
        formatter.add_usage(self.usage, self._actions, self._mutually_exclusive_groups)
        formatter.add_text(self.description)
        for title, listed in command_sections(self):
            formatter.start_section(title)
            formatter.add_arguments(listed)
            formatter.end_section()
        for group in self._action_groups:  # the options; the subcommands' own section is the groups above
            shown = [a for a in group._group_actions if not isinstance(a, argparse._SubParsersAction)]
            if shown:
                formatter.start_section(group.title)
                formatter.add_arguments(shown)
                formatter.end_section()
        formatter.add_text(self.epilog)
        return formatter.format_help()


def command_sections(parser: argparse.ArgumentParser) -> list[tuple[str, list[argparse.Action]]]:
    """(title, the subcommands' lines) of each group that has any, OTHERS last."""
    lines = {line.dest: line for action in parser._actions if isinstance(action, argparse._SubParsersAction)
             for line in action._choices_actions}
    sections = [(title, [lines[name] for name in names if name in lines]) for title, names in COMMAND_GROUPS]
    placed = {name for _title, names in COMMAND_GROUPS for name in names}
    sections.append((OTHERS, [line for name, line in lines.items() if name not in placed]))
    return [(title, listed) for title, listed in sections if listed]


def build_parser(features: Sequence[str] = FEATURES) -> argparse.ArgumentParser:
    """The parser, with the subcommands of `features` (bot/app.py's FEATURES) among the others."""
    parser = GroupedHelp(
        prog="paperclub",
        description="A chat bot for research reading groups: search papers, a paper of the day, votes.",
    )
    parser.add_argument("--version", action="version", version=f"paperclub {__version__}")
    parser.add_argument(
        "--database-url",
        help="SQLAlchemy URL (default: $PAPERCLUB_DATABASE_URL, $DATABASE_URL, sqlite:///paperclub.db)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("import", help="import corpus files (format detected from content), or papers by link or "
                                      "id (arXiv, DOI, OpenReview, a page with citation_* tags)")
    p.add_argument("paths", nargs="+", metavar="PATH|LINK|ID",
                   help="a corpus file (JSON Lines, BibTeX, arXiv Atom, OpenReview or listing text: see the corpus "
                        "formats page), or a paper to fetch: an arXiv id or link (2106.01345), a DOI or doi.org link, "
                        "an OpenReview forum link, a paper's page, or a Zotero group's collection "
                        "(zotero:GROUP/COLLECTION; key from $PAPERCLUB_ZOTERO_API_KEY)")
    p.add_argument("--collection", help="collection name (default: the file name without extension)")
    p.add_argument("--format", choices=sorted(FORMAT_NAMES), help="skip detection and read as this format")
    p.add_argument("--venue", help='the venue of a listing\'s papers that do not give theirs ("ICLR 2021")')
    p.add_argument("--year", help="the year of a listing's papers that do not give theirs (2021)")
    p.set_defaults(func=Lazy("adapters.cli.commands:cmd_import"))

    for plugin in plugins(features):  # the features' own subcommands (`export`: the group's memory)
        if plugin.cli is not None:
            plugin.cli(sub)

    p = sub.add_parser("search", help="search the corpus (BM25, and meaning once papers have vectors)")
    p.add_argument("query", nargs="*",
                   help="words and filters: author:NAME track:oral in:COLLECTION tag:WORD year:2021")
    p.add_argument("-k", type=_positive, default=10, help="number of results (default 10)")
    p.add_argument("--json", action="store_true", help="print the hits as JSON")
    p.add_argument("--batch", metavar="FILE", help="one query a line from FILE (or - for stdin), JSON lines out")
    p.add_argument("--lexical", action="store_true", help="by words alone, with BM25's exact scores")
    p.add_argument("--sources", action="store_true",
                   help="under each hit, the collections and files (FILE:LINE) it was imported from")
    p.set_defaults(func=Lazy("adapters.cli.searching:cmd_search"))

    p = sub.add_parser("embed", help="give every paper its vector, for ranking by meaning too (resumable)")
    p.add_argument("--status", action="store_true", help="only say how many papers have a vector")
    p.add_argument("--seconds", type=_positive_seconds, help="stop after about this long (the next run goes on)")
    p.set_defaults(func=Lazy("adapters.cli.embedding:cmd_embed"))

    p = sub.add_parser("status", help="the library at a glance: papers, search index, embeddings, channels and follows")
    p.set_defaults(func=Lazy("adapters.cli.status:cmd_status"))

    p = sub.add_parser("console", help="chat with the bot on stdin/stdout")
    p.add_argument("--channel", default="general", help="console channel id (default: general)")
    p.add_argument("--user", default="console", help="member id (default: console)")
    p.add_argument("--manager", action="store_true", help="act as a channel manager")
    p.add_argument("--json", action="store_true", help="print each reply as JSON")
    p.add_argument("--at", type=parse_instant, help="run the session at this instant (ISO-8601), to travel in time")
    p.set_defaults(func=Lazy("adapters.cli.commands:cmd_console"))

    p = sub.add_parser("tick", help="run the scheduler's minute once (papers of the day, digests, polls, follows, "
                                    "Zotero syncs), then exit; a summary of every count on stderr")
    p.add_argument("--at", type=parse_instant, help="pretend it is this instant (ISO-8601)")
    p.add_argument("--json", action="store_true", help="print console posts as JSON")
    p.set_defaults(func=Lazy("adapters.cli.commands:cmd_tick"))

    p = sub.add_parser("tick-bench", help="time one tick with many channels due at once (use a scratch database)")
    p.add_argument("--channels", type=_positive, default=10_000, help="channels due in the same minute (10000)")
    p.set_defaults(func=Lazy("adapters.cli.commands:cmd_tick_bench"))

    chat = platforms.chat_platforms()
    p = sub.add_parser(
        "serve",
        help=f"run the {platforms.any_of([c.title for c in chat])} apps and the scheduler (a tick every minute)",
        description=SERVE_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # No `choices` here: argparse checks an empty list against them and refuses it.
    p.add_argument("platforms", nargs="*", type=_platform, metavar="PLATFORM",
                   help=f"{platforms.any_of([c.name for c in chat])} (default: every platform configured; "
                        "none configured: the scheduler alone, for console channels)")
    p.add_argument("--host", type=_host, metavar="ADDRESS",
                   help=f"the address to listen on for HTTP (default: $PAPERCLUB_HOST, else {DEFAULT_HOST}, every "
                        "interface; 127.0.0.1: this machine only, behind a proxy)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--no-scheduler", action="store_true",
                      help="no scheduler here (Slack web processes that scale out; one worker schedules)")
    mode.add_argument("--scheduler-only", action="store_true",
                      help="the scheduler alone, no chat app (a worker for Slack-only deployments)")
    p.set_defaults(func=Lazy("adapters.cli.commands:cmd_serve"))

    p = sub.add_parser("config", help="configuration from the environment")
    config = p.add_subparsers(dest="config_command", required=True, metavar="ACTION")
    q = config.add_parser("check", help="print every setting (secrets masked) and what is wrong",
                          description="Print every setting paperclub reads from the environment (secrets "
                          "masked) and every problem, one line each; exit 1 if there is any. The database "
                          "is opened to check that it answers and that its schema is current.")
    q.add_argument("--offline", action="store_true", help="do not open the database")
    q.set_defaults(func=Lazy("adapters.cli.commands:cmd_config"))

    for platform in platforms.PLATFORMS:  # `paperclub slack manifest`, `paperclub discord sync`, ...
        if platform.commands is not None:
            p = sub.add_parser(platform.name, help=platform.help)
            actions = p.add_subparsers(dest=f"{platform.name}_command", required=True, metavar="ACTION")
            platform.commands(actions)
            if platform.name in PLATFORM_BENCHES:
                PLATFORM_BENCHES[platform.name](actions)

    p = sub.add_parser("demo", help="import the bundled corpus and show search, a card and similar papers",
                       description="Import the bundled corpus (ICLR listings, trending papers, a reading list) into "
                       "the database and run a few commands on a console channel: a search, a paper's card, "
                       "similar papers, a paper found by its arXiv id, and a paper of the day. Running it again "
                       "changes nothing it imported. Then try `paperclub console`.")
    p.set_defaults(func=Lazy("adapters.cli.commands:cmd_demo"))

    p = sub.add_parser("sandbox", help="try follows, the digest and the Zotero sync against fakes of arXiv, "
                                       "OpenAlex, Zotero and Slack on 127.0.0.1",
                       description="Start paperclub's fakes of arXiv, OpenAlex, Zotero and Slack on 127.0.0.1 with "
                       "sample data (papers, a Zotero group with a sample collection), open a sandbox database (the "
                       "demo corpus imported once) and chat as on `paperclub console`; `tick` runs the scheduler's "
                       "minute at once (follows fetched, Zotero synced, due posts). Prints the variables that point "
                       "a `paperclub serve` at the same fakes.")
    p.add_argument("--dir", default="paperclub-sandbox",
                   help="where the sandbox database goes (default: ./paperclub-sandbox; --database-url wins)")
    p.set_defaults(func=Lazy("adapters.cli.sandbox:cmd_sandbox"))

    p = sub.add_parser("db", help="database schema: upgrade it, or show its revision",
                       description="The database schema (Alembic migrations). A SQLite file is upgraded by every "
                       "command on first use; PostgreSQL is upgraded with `paperclub db upgrade`, as a release "
                       "step before new code serves.")
    p.add_argument("action", choices=["upgrade", "current"],
                   help="upgrade: apply the migrations not yet applied; current: show the schema's revision and "
                        "the one this code needs")
    p.set_defaults(func=Lazy("adapters.cli.commands:cmd_db"))
    p = sub.add_parser("backup", help="write the whole database to FILE (SQLite: a SQLite file, safe while serve "
                                      "runs; PostgreSQL: a pg_dump archive)")
    p.add_argument("file", metavar="FILE", help="the backup to write (replaced if it exists)")
    p.set_defaults(func=Lazy("adapters.cli.backups:cmd_backup"))
    p = sub.add_parser("restore", help="replace the database with a backup FILE, bring it to the current schema "
                                       "and drop the search index (rebuilt on next start)")
    p.add_argument("file", metavar="FILE", help="a file `paperclub backup` wrote")
    p.add_argument("--force", action="store_true",
                   help="replace a database that holds data (without it, restore only fills an empty one)")
    p.set_defaults(func=Lazy("adapters.cli.backups:cmd_restore"))
    search_cli.add_commands(sub)  # bench, eval
    feed_cli.add_commands(sub)  # feed add|list|remove|refresh
    follows_cli.add_commands(sub)  # bench-ingest
    describe(parser)
    return parser


def describe(parser: argparse.ArgumentParser) -> None:
    """A subcommand's own --help opens with what it does: its line in the parent's list,
    when it has no longer description (so a new subcommand needs only its help=)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            listed = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                if not sub.description and listed.get(name):
                    text = listed[name]
                    sub.description = text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")
                describe(sub)


def _add_slack_bench(actions: argparse._SubParsersAction) -> None:
    q = actions.add_parser("bench", help="p50/p99 of signed /paper search requests against a local serve "
                           "process and a stand-in Slack API (seed corpus, scratch database)")
    q.add_argument("--requests", type=int, default=1000, help="signed searches to time (default 1000)")
    q.add_argument("--concurrency", type=int, default=4, help="clients at once (default 4)")
    q.set_defaults(func=Lazy("adapters.cli.commands:cmd_slack_bench"))


# The platforms with a benchmark (`paperclub slack bench`): listed here, not in the
# registry, because the benchmarks live in adapters.bench, which imports the platform
# adapters and so must not be imported by them.
PLATFORM_BENCHES = {"slack": _add_slack_bench}


def _paths() -> str:
    """/healthz and every feature's pages, a line each."""
    routes = [route for plugin in plugins() for route in plugin.routes]
    return "\n".join([f"  {HEALTH_PATH:<22}health as JSON: 200 when healthy, 503 when not",
                      *(f"  {route.shown:<22}{route.about}" for route in routes)])


SERVE_DESCRIPTION = f"""\
Run the chat apps and the scheduler until SIGTERM or Ctrl-C. The scheduler posts to
every platform whose credentials are set, whichever apps this process runs.

HTTP: on port $PORT (Slack over HTTP: default 3000; otherwise only when PORT is set),
listening on --host or $PAPERCLUB_HOST (default {DEFAULT_HOST}, every interface).
{_paths()}
  and the Slack app's own requests when Slack runs over HTTP.
The archive and calendar links (`archive`, `session calendar`) start with
$PAPERCLUB_PUBLIC_URL. See `paperclub config check` for every setting."""


def parse_instant(text: str) -> datetime:
    """--at: ISO-8601; a time without a zone is taken as UTC."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not ISO-8601, e.g. 2026-11-23T09:00:00+01:00") from None
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)



def _host(value: str) -> str:
    try:
        return listen_host(value)
    except ValueError as problem:
        raise argparse.ArgumentTypeError(str(problem)) from None


def _platform(value: str) -> str:
    names = [p.name for p in platforms.chat_platforms()]
    if value not in names:
        raise argparse.ArgumentTypeError(f"{value!r} is not a platform: {platforms.either(names)}")
    return value


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def _positive_seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds") from None
    if not seconds > 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return seconds


INTERRUPTED = 128 + signal.SIGINT  # 130, as shells report a Ctrl-C
# The benchmarks (adapters.bench) are left out of the wheel: the bench commands are there, what
# they run is only in a source checkout. The sandbox's fakes (adapters.fakes) are shipped.
BENCH_PACKAGE = "adapters.bench"
NO_BENCH = ("the benchmarks need a source checkout (an installed wheel leaves them "
            "out): in a clone of paperclub, pip install -e '.[bench]'")


def run() -> None:
    """The `paperclub` script: main(), then out without the interpreter's teardown.

    Teardown frees every module and object one by one: with SQLAlchemy's mappers, numpy
    and the features loaded it took 0.2-0.4 s (docs/performance.md). A finished command has
    nothing left to save: Python has joined its threads and runs every other exit handler
    (logging's flush, worker pools' shutdown) before this one, registered first and so
    run last. What it did need from teardown is done here: what nothing refers to any more
    is collected (a SQLite connection folds its write-ahead log into the file as it
    closes; a file flushes), and the databases still open are closed. A command that
    ended by an exception keeps the usual teardown."""
    atexit.register(_leave_now)
    code = main()
    _finished.append(code)
    sys.exit(code)


_finished: list[int] = []  # main()'s exit status, once it has returned one


def _leave_now() -> None:
    if not _finished:
        return
    gc.collect()  # ~40 ms: what was dropped but sits in reference cycles (SQLAlchemy's pools)
    database = sys.modules.get("store.database")  # loaded only by a command that opened one
    if database is not None:
        database.close_databases()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a reader gone, or a stream closed: as teardown would
        pass
    os._exit(_finished[0])


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; a failure the operator can fix is one line on stderr and exit 1."""
    args = build_parser().parse_args(argv)
    args.given_database_url = args.database_url  # as typed: what an error names
    if args.database_url:  # rewritten like the variables (postgres:// -> psycopg)
        from store.database import resolve_database_url

        args.database_url = resolve_database_url({"PAPERCLUB_DATABASE_URL": args.database_url})
    made = _search_services()
    try:
        code = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
        return code
    except KeyboardInterrupt:
        return INTERRUPTED
    except BrokenPipeError:
        return stdout_gone()
    except Exception as problem:  # noqa: BLE001 - failed() answers what the operator can fix and raises the rest
        return failed(problem, args)
    finally:
        finish_merges(made)


def _search_services() -> int:
    """How many search services the process has made before this command (a test runs
    many commands in one process; their own services are left alone)."""
    service = sys.modules.get("bot.search.builtin.service")
    return service.services_made() if service is not None else 0


def finish_merges(made: int) -> None:
    """A merge of the search index's segments that the command started (any command that
    wrote or searched papers: tick, add, import, search...) finishes before the process
    exits, and none starts after: cut by the interpreter's shutdown, it would be lost.
    Only when search was loaded at all: a command that never touched it stays light."""
    service = sys.modules.get("bot.search.builtin.service")
    if service is not None:
        service.finish_merges(after=made)


def failed(problem: Exception, args: argparse.Namespace) -> int:
    """A failure the operator can fix is one line on stderr and exit 1 (or 2: no benchmarks
    in this install); anything else is a bug and raised. The error classes are imported
    here, when something failed: the commands that raise them have loaded them already."""
    from sqlalchemy.exc import InterfaceError, OperationalError

    from bot.ops.settings import ConfigError, database_problem
    from store.database import DatabaseUrlError, SchemaOutOfDate

    if isinstance(problem, (SchemaOutOfDate, ConfigError)):
        return fail(str(problem))
    # A database that cannot be opened: a URL no engine can be made from, or a server or
    # file that does not answer. One line names where the URL came from.
    if isinstance(problem, (DatabaseUrlError, OperationalError, InterfaceError)):
        url, source = database_source(args)
        return fail(database_problem(url, source, problem))
    if isinstance(problem, ModuleNotFoundError) and _no_bench(problem):
        print(f"error: {NO_BENCH}", file=sys.stderr)
        return 2
    raise problem


def _no_bench(missing: ModuleNotFoundError) -> bool:
    name = missing.name or ""
    return name == BENCH_PACKAGE or name.startswith(BENCH_PACKAGE + ".")


def database_source(args: argparse.Namespace) -> tuple[str, str]:
    """The database URL this command uses, as given, and where it came from: what an
    error names, so the operator knows what to change."""
    if args.given_database_url:
        return args.given_database_url, "--database-url"
    for name in DATABASE_VARIABLES:
        if os.environ.get(name):
            return os.environ[name], name
    from store.database import DEFAULT_URL

    return DEFAULT_URL, DEFAULT_DATABASE_SOURCE


def fail(message: str) -> int:
    for line in message.splitlines():  # ConfigError lists one problem a line
        print(f"error: {line}", file=sys.stderr)
    return 1


def stdout_gone() -> int:
    """The reader of stdout went away (`paperclub export | head -1`). As the Python docs
    advise: point stdout at /dev/null so the interpreter's final flush does not fail
    again with a traceback, and exit 1."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
