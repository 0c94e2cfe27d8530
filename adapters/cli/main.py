"""The `paperclub` command line: import, export, search, console, demo, db, serve."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import TextIO

from sqlalchemy.exc import InterfaceError, OperationalError

from adapters import platforms
from adapters.cli import feeds as feed_cli
from adapters.cli import search as search_cli
from adapters.wsgi import HEALTH_PATH
from bot import __version__
from bot.adding.imports import AddProblem, import_reference, is_reference
from bot.adding.providers import Providers
from bot.app import ConfigError, Services, build_services, utc_now
from bot.corpus.drafts import Written
from bot.corpus.importing import ImportSummary
from bot.corpus.library import Library
from bot.corpus.readers import FORMATS
from bot.corpus.records import CorpusFormatError
from bot.memory.pages import ARCHIVE_PREFIX, CALENDAR_PREFIX
from bot.messages import counted
from bot.ops.settings import DATABASE_VARIABLES, DEFAULT_DATABASE_SOURCE, DEFAULT_HOST, database_problem, listen_host
from bot.search.query import Query, QueryError
from store import Database, resolve_database_url
from store.database import DEFAULT_URL, DatabaseUrlError, SchemaOutOfDate

DEMO_COLLECTIONS = {
    "iclr2021-openreview.md": "iclr2021",
    "iclr2023-poster-session.txt": "iclr2023-posters",
    "trending-papers.txt": "trending",
    "iclr2022-topics.txt": "iclr2022-topics",
    "iclr2022-blog-review.txt": "iclr2022-blog",
}
# Beside the seeds, a reading list as a reference manager exports it (venues, years and
# arXiv ids, no abstracts), to show a venue/year line and a paper found by its arXiv id.
DEMO_EXTRAS = {"reading-list.bib": "reading-list"}
DEMO_STEPS = (
    "search diffusion models robustness",
    "show {top}",
    "similar {top}",
    # Titles written in LaTeX ("$\epsilon$-Greedy", "$O(d/\epsilon)$"), shown as Unicode.
    "search epsilon greedy exploration",
    "show arXiv:1706.03762",
    "topics add reinforcement learning",
    "next",
)


def open_services(url: str | None = None, at: datetime | None = None) -> Services:
    """The services, with the clock fixed at `at` when the user travels in time."""
    return build_services(url, clock=(lambda: at) if at else utc_now)


# --- commands -----------------------------------------------------------------------------


def cmd_import(args: argparse.Namespace) -> int:
    services = open_services(args.database_url)
    failed = 0
    providers = None
    # The papers are tokenised for the index as they are written, on the idle cores.
    with services.search.ahead() as written:
        for path in args.paths:
            try:
                if not Path(path).exists() and is_reference(path):  # a link or id: fetched
                    providers = providers or Providers.from_env()
                    summary = import_reference(services.library, providers, path, args.collection)
                else:
                    summary = import_with_progress(
                        services.library, Path(path), args.collection, args.format, written
                    )
            except AddProblem as problem:
                failed += 1
                print(f"error: {path}: {problem}", file=sys.stderr)
                continue
            except (CorpusFormatError, OSError) as problem:
                failed += 1
                print(f"error: {_where(problem, path)}", file=sys.stderr)
                print(f"{path}: nothing imported", file=sys.stderr)
                continue
            print(format_summary(summary))
            for warning in summary.warnings:  # imported, but it looks cut: the operator decides
                print(warning, file=sys.stderr)
        search_cli.update_index(services.search)
    return 1 if failed else 0


def _where(problem: Exception, path: str) -> str:
    if isinstance(problem, CorpusFormatError):
        return str(problem)
    return f"{path}: {getattr(problem, 'strerror', None) or problem}"


def import_with_progress(
    library: Library,
    path: Path,
    collection: str | None,
    fmt: str | None,
    written: Written | None = None,
) -> ImportSummary:
    """A progress bar on a terminal for large files; plain output when piped."""
    if not sys.stderr.isatty():
        return library.import_file(path, collection, fmt, written=written)
    from rich.progress import Progress

    with Progress(transient=True) as progress:
        task = progress.add_task(f"importing {path.name}", total=None)
        return library.import_file(
            path,
            collection,
            fmt,
            progress=lambda done, total: progress.update(task, completed=done, total=total),
            written=written,
        )


def format_summary(s: ImportSummary) -> str:
    return (
        f"{s.path}: {s.format}, collection {s.collection}: "
        f"{s.added} added, {s.updated} updated, {s.unchanged} unchanged"
    )


def cmd_export(args: argparse.Namespace) -> int:
    if args.channel is None and args.format is not None:
        print("error: --format is for --channel; the whole library is written as JSON Lines", file=sys.stderr)
        return 2
    services = open_services(args.database_url)
    if args.channel is not None:
        return _export_channel(services, args)
    if args.output in (None, "-"):
        count = services.library.export(sys.stdout)
    else:
        with open(args.output, "w", encoding="utf-8") as out:
            count = services.library.export(out)
    print(f"exported {counted(count, 'paper')}", file=sys.stderr)
    return 0


def _export_channel(services: Services, args: argparse.Namespace) -> int:
    """What one channel read, with its notes: BibTeX (Zotero) or JSON Lines (backups)."""
    from bot.memory.export import write
    from bot.memory.record import Recorder
    from bot.messages import ChannelRef

    recorder = Recorder(services.db, services.library, services.votes)
    ref = ChannelRef(*args.channel)
    channel = recorder.find(ref)
    if channel is None:
        print(f"error: --channel {ref.key()}: paperclub has no such channel (a channel is named "
              "PLATFORM:WORKSPACE:CHANNEL, e.g. slack:T0123:C0456, or a console channel's name)", file=sys.stderr)
        return 1
    entries = recorder.record(channel).read()
    fmt = args.format or "jsonl"
    if args.output in (None, "-"):
        count = write(entries, ref, fmt, sys.stdout)
    else:
        with open(args.output, "w", encoding="utf-8") as out:
            count = write(entries, ref, fmt, out)
    print(f"exported {counted(count, 'paper')} read in {ref.key()} ({fmt})", file=sys.stderr)
    return 0


def _channel_key(text: str) -> tuple[str, str, str]:
    """--channel: PLATFORM:WORKSPACE:CHANNEL as the logs name channels, or a console
    channel's bare name (as `paperclub console --channel` takes it)."""
    parts = text.split(":")
    if len(parts) == 1 and parts[0]:
        return ("console", "local", parts[0])
    if len(parts) != 3 or not all(parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not PLATFORM:WORKSPACE:CHANNEL (e.g. slack:T0123:C0456) "
                                         "or a console channel's name")
    return parts[0], parts[1], parts[2]


def cmd_search(args: argparse.Namespace) -> int:
    services = open_services(args.database_url)
    if args.batch:
        return run_batch(services, args.batch, args.k)
    text = " ".join(args.query)
    if not text.strip():
        print("usage: paperclub search QUERY [-k N] [--json]  (or --batch FILE|-)", file=sys.stderr)
        return 2
    return _print_search(services, text, args)


def _print_search(services: Services, text: str, args: argparse.Namespace) -> int:
    from adapters.console import render_card
    from bot.cards.cards import card

    try:
        query = Query.parse(text)
    except QueryError as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    index = services.search.current()
    hits = index.search(query, args.k)
    papers = services.library.get_many(h.paper_id for h in hits)
    cards = [card(papers[h.paper_id], services.search.tokenizer, h) for h in hits]
    if args.json:
        print(json.dumps({"query": text, "hits": [c.__dict__ for c in cards]}, ensure_ascii=False))
    elif not cards:
        print(f"No papers match `{text}`.")
    else:
        print("\n\n".join(render_card(c) for c in cards))
    return 0


def run_batch(services: Services, source: str, k: int) -> int:
    """One query a line in, one JSON line out, all against one loaded index."""
    index = services.search.current()
    stream: TextIO = sys.stdin if source == "-" else open(source, encoding="utf-8")
    searched = 0.0
    count = 0
    with stream:
        for line in stream:
            text = line.strip()
            if not text:
                continue
            started = time.perf_counter()
            try:
                hits = index.search(Query.parse(text), k)
                result = {"query": text, "hits": [_batch_hit(index, h) for h in hits]}
            except QueryError as problem:
                result = {"query": text, "error": str(problem), "hits": []}
            searched += time.perf_counter() - started
            count += 1
            print(json.dumps(result, ensure_ascii=False))
    print(f"{count} queries, {searched * 1000:.1f} ms search time", file=sys.stderr)
    return 0


def _batch_hit(index, hit) -> dict:
    return {"id": hit.paper_id, "title": index.title(hit.paper_id), "score": hit.score}


def parse_instant(text: str) -> datetime:
    """--at: ISO-8601; a time without a zone is taken as UTC."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not ISO-8601, e.g. 2026-11-23T09:00:00+01:00") from None
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)


def cmd_tick(args: argparse.Namespace) -> int:
    """Post every due pick once and return; console channels print theirs here."""
    from adapters.console import ConsoleDelivery

    services = open_services(args.database_url, args.at)
    report = services.core.tick(services.core.clock(), ConsoleDelivery(sys.stdout, args.json), ["console"])
    print(
        f"tick at {services.core.clock():%Y-%m-%dT%H:%M:%SZ}: {report['posted']} posted, "
        f"{report['empty']} with nothing left, {report['failed']} failed, {report['skipped']} skipped, "
        f"{report['polls_closed']} polls closed",
        file=sys.stderr,
    )
    return 1 if report['failed'] else 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Run the chat adapters named (none: every one configured) and the scheduler."""
    from adapters.config_check import startup_settings
    from adapters.runtime import serve
    from bot.ops.logs import configure

    platforms = list(dict.fromkeys(args.platforms))
    if args.scheduler_only and platforms:
        print("error: --scheduler-only runs no chat app: name no platform with it", file=sys.stderr)
        return 2
    # Every unusable setting, one line each, before anything is opened or logged.
    core = startup_settings(os.environ, platforms).core
    configure(core.log_level, core.log_format)
    services = open_services(args.database_url)
    return serve(services, platforms, scheduler=not args.no_scheduler, apps=not args.scheduler_only,
                 host=args.host)


def cmd_config(args: argparse.Namespace) -> int:
    from adapters.config_check import check

    text, code = check(os.environ, connect=not args.offline)
    print(text)
    return code


def cmd_slack_bench(args: argparse.Namespace) -> int:
    from adapters.bench.slack import main as slack_bench

    return slack_bench(["--requests", str(args.requests), "--concurrency", str(args.concurrency)])


def cmd_tick_bench(args: argparse.Namespace) -> int:
    from adapters.bench.tick import run_tick_bench

    url = args.database_url or resolve_database_url()
    print(run_tick_bench(url, args.channels).line())
    return 0


def cmd_console(args: argparse.Namespace) -> int:
    from adapters.console import ConsoleSession

    services = open_services(args.database_url, args.at)
    session = ConsoleSession(services.core, channel=args.channel, user=args.user, manager=args.manager)
    prompt = sys.stdin.isatty() and not args.json
    try:
        session.run(sys.stdin, sys.stdout, as_json=args.json, prompt=prompt)
    except KeyboardInterrupt:
        if prompt:  # after "paperclub> ^C", the shell's prompt starts on a line of its own
            print()
        raise  # main() exits 130
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from adapters.console import ConsoleSession, render_text

    services = open_services(args.database_url)
    print(f"paperclub demo: importing the bundled corpus into {services.db.describe()}\n")
    corpus = resources.files("bot") / "demo_corpus"
    extras = resources.files("bot") / "demo_extras"
    files = [(corpus / n, c) for n, c in DEMO_COLLECTIONS.items()]
    files += [(extras / n, c) for n, c in DEMO_EXTRAS.items()]
    for resource, collection in files:
        with resources.as_file(resource) as path:
            summary = services.library.import_file(path, collection)
        print("  " + format_summary(summary).replace(str(path), resource.name))
    session = ConsoleSession(services.core, channel="demo", user="demo", manager=True)
    top = None
    for step in DEMO_STEPS:
        command = step.format(top=top)
        print(f"\n/paper {command}\n")
        reply = session.answer(command)
        print(render_text(reply))
        if top is None and reply.cards:
            top = reply.cards[0].paper_id
    print("\nTry it yourself: paperclub console   (type `help`)")
    return 0


def cmd_db(args: argparse.Namespace) -> int:
    db = Database(args.database_url or resolve_database_url())
    if args.action == "upgrade":
        before, after = db.upgrade()
        print(f"{db.describe()}: schema {before or 'empty'} -> {after}")
    else:
        print(f"{db.describe()}: schema {db.current_revision() or 'empty'} (code needs {db.head_revision()})")
    return 0


# --- parser -------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
                        "an OpenReview forum link, or a paper's page")
    p.add_argument("--collection", help="collection name (default: the file name without extension)")
    p.add_argument("--format", choices=sorted(FORMATS), help="skip detection and read as this format")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("export", help="write every paper as JSON Lines, or what one channel read")
    p.add_argument("-o", "--output", help="file to write (default: stdout)")
    p.add_argument("--channel", type=_channel_key, metavar="CHANNEL",
                   help="only what this channel read, with its notes: PLATFORM:WORKSPACE:CHANNEL "
                        "(e.g. slack:T0123:C0456) or a console channel's name")
    p.add_argument("--format", choices=["bibtex", "jsonl"], help="with --channel: bibtex (Zotero) or jsonl "
                   "(the schema `paperclub import` reads; default)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("search", help="search the corpus (BM25)")
    p.add_argument("query", nargs="*", help='words and filters: author:NAME track:oral in:COLLECTION tag:WORD')
    p.add_argument("-k", type=_positive, default=10, help="number of results (default 10)")
    p.add_argument("--json", action="store_true", help="print the hits as JSON")
    p.add_argument("--batch", metavar="FILE", help="one query a line from FILE (or - for stdin), JSON lines out")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("console", help="chat with the bot on stdin/stdout")
    p.add_argument("--channel", default="general", help="console channel id (default: general)")
    p.add_argument("--user", default="console", help="member id (default: console)")
    p.add_argument("--manager", action="store_true", help="act as a channel manager")
    p.add_argument("--json", action="store_true", help="print each reply as JSON")
    p.add_argument("--at", type=parse_instant, help="run the session at this instant (ISO-8601), to travel in time")
    p.set_defaults(func=cmd_console)

    p = sub.add_parser("tick", help="post every due paper of the day once, then exit")
    p.add_argument("--at", type=parse_instant, help="pretend it is this instant (ISO-8601)")
    p.add_argument("--json", action="store_true", help="print console posts as JSON")
    p.set_defaults(func=cmd_tick)

    p = sub.add_parser("tick-bench", help="time one tick with many channels due at once (use a scratch database)")
    p.add_argument("--channels", type=_positive, default=10_000, help="channels due in the same minute (10000)")
    p.set_defaults(func=cmd_tick_bench)

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
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("config", help="configuration from the environment")
    config = p.add_subparsers(dest="config_command", required=True, metavar="ACTION")
    q = config.add_parser("check", help="print every setting (secrets masked) and what is wrong",
                          description="Print every setting paperclub reads from the environment (secrets "
                          "masked) and every problem, one line each; exit 1 if there is any. The database "
                          "is opened to check that it answers and that its schema is current.")
    q.add_argument("--offline", action="store_true", help="do not open the database")
    q.set_defaults(func=cmd_config)

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
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("db", help="database schema: upgrade it, or show its revision",
                       description="The database schema (Alembic migrations). A SQLite file is upgraded by every "
                       "command on first use; PostgreSQL is upgraded with `paperclub db upgrade`, as a release "
                       "step before new code serves.")
    p.add_argument("action", choices=["upgrade", "current"],
                   help="upgrade: apply the migrations not yet applied; current: show the schema's revision and "
                        "the one this code needs")
    p.set_defaults(func=cmd_db)
    search_cli.add_commands(sub)  # bench, eval
    feed_cli.add_commands(sub)  # feed add|list|remove|refresh
    __import__("adapters.cli.follows", fromlist=["add_commands"]).add_commands(sub)  # bench-ingest
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
    q.set_defaults(func=cmd_slack_bench)


# The platforms with a benchmark (`paperclub slack bench`): listed here, not in the
# registry, because the benchmarks live in adapters.bench, which imports the platform
# adapters and so must not be imported by them.
PLATFORM_BENCHES = {"slack": _add_slack_bench}


SERVE_DESCRIPTION = f"""\
Run the chat apps and the scheduler until SIGTERM or Ctrl-C. The scheduler posts to
every platform whose credentials are set, whichever apps this process runs.

HTTP: on port $PORT (Slack over HTTP: default 3000; otherwise only when PORT is set),
listening on --host or $PAPERCLUB_HOST (default {DEFAULT_HOST}, every interface).
  {HEALTH_PATH:<22}health as JSON: 200 when healthy, 503 when not
  {ARCHIVE_PREFIX + "TOKEN[.bib]":<22}a channel's archive page (or its BibTeX)
  {CALENDAR_PREFIX + "TOKEN.ics":<22}a channel's meetings as a calendar feed
  and the Slack app's own requests when Slack runs over HTTP.
The archive and calendar links (`archive`, `session calendar`) start with
$PAPERCLUB_PUBLIC_URL. See `paperclub config check` for every setting."""


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


# What a database that cannot be opened raises: a URL no engine can be made from, or a
# server or file that does not answer. One line names where the URL came from.
DATABASE_ERRORS = (DatabaseUrlError, OperationalError, InterfaceError)
INTERRUPTED = 128 + signal.SIGINT  # 130, as shells report a Ctrl-C
# The benchmarks (adapters.bench) are left out of the wheel: the bench commands are there,
# what they run is only in a source checkout.
BENCH_PACKAGE = "adapters.bench"
NO_BENCH = ("the benchmarks need a source checkout (an installed wheel leaves them out): "
            "in a clone of paperclub, pip install -e '.[bench]'")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; a failure the operator can fix is one line on stderr and exit 1."""
    args = build_parser().parse_args(argv)
    url, source = database_source(args)
    if args.database_url:  # rewritten like the variables (postgres:// -> psycopg)
        args.database_url = resolve_database_url({"PAPERCLUB_DATABASE_URL": args.database_url})
    try:
        code = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
        return code
    except (SchemaOutOfDate, ConfigError) as problem:
        return fail(str(problem))
    except DATABASE_ERRORS as problem:
        return fail(database_problem(url, source, problem))
    except KeyboardInterrupt:
        return INTERRUPTED
    except BrokenPipeError:
        return stdout_gone()
    except ModuleNotFoundError as missing:
        if missing.name != BENCH_PACKAGE and not (missing.name or "").startswith(BENCH_PACKAGE + "."):
            raise
        print(f"error: {NO_BENCH}", file=sys.stderr)
        return 2


def database_source(args: argparse.Namespace) -> tuple[str, str]:
    """The database URL this command uses, as given, and where it came from: what an
    error names, so the operator knows what to change."""
    if args.database_url:
        return args.database_url, "--database-url"
    for name in DATABASE_VARIABLES:
        if os.environ.get(name):
            return os.environ[name], name
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
