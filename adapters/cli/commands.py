"""What each `paperclub` subcommand does. adapters.cli.main parses the line and imports
this module only for a command that runs (`--version` and `--help` load none of it);
each command imports what it uses, and opens the database before loading the features,
so a database that cannot be opened costs one line and a fraction of a second."""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from adapters.cli import search as search_cli
from adapters.cli.searching import open_search
from store import Database, resolve_database_url

if TYPE_CHECKING:
    from bot.app import Services
    from bot.corpus.drafts import Written
    from bot.corpus.importing import ImportSummary
    from bot.corpus.library import Library
    from bot.corpus.listing import ListingFacts
    from bot.feature import TickReport

DEMO_COLLECTIONS = {
    "iclr2021-openreview.md": "iclr2021",
    "iclr2023-poster-session.txt": "iclr2023-posters",
    "trending-papers.txt": "trending",
    "iclr2022-topics.txt": "iclr2022-topics",
    "iclr2022-blog-review.txt": "iclr2022-blog",
}
# What the demo's listings do not say per paper, given as an operator would on
# `paperclub import FILE --venue "ICLR 2021" --year 2021` (we know where they come from).
DEMO_VENUES = {
    "iclr2021-openreview.md": ("ICLR 2021", 2021),
    "iclr2023-poster-session.txt": ("ICLR 2023", 2023),
    "iclr2022-topics.txt": ("ICLR 2022", 2022),
    "iclr2022-blog-review.txt": ("ICLR 2022", 2022),
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
    from bot.app import open_services

    return open_services(url, at)



def cmd_import(args: argparse.Namespace) -> int:
    from bot.corpus.listing import ListingFacts, ListingProblem

    try:  # before the database is opened: a mistyped year imports nothing
        listing = ListingFacts.checked(args.venue, args.year)
    except ListingProblem as problem:
        print(f"error: {problem}; nothing imported", file=sys.stderr)
        return 2
    # The library and its index alone: an import needs no feature (nor their settings).
    # A day's segment needs no numba; a whole library's build does (and imports it).
    library, search = open_search(args.database_url, short_lived=True, meaning=False)
    from bot.corpus.feeds import FeedError
    from bot.corpus.records import CorpusFormatError

    failed = 0
    providers: list = []  # made once, for the first link or id
    sources: list = []  # the features' feed sources, made once, for the first name that is neither
    # The papers are tokenised for the index as they are written, on the idle cores.
    with search.ahead() as written:
        for path in args.paths:
            try:
                if not Path(path).exists() and _is_reference(path):  # a link or id: fetched
                    summary = _import_reference(library, path, args.collection, providers)
                elif not Path(path).exists() and (source := _feed_source(path, args, sources)) is not None:
                    summary = source.run(library, path.strip(), args.collection)  # zotero:GROUP/COLLECTION
                else:
                    summary = import_with_progress(
                        library, Path(path), args.collection, args.format, written, listing
                    )
            except _NotFetched as problem:
                failed += 1
                print(f"error: {path}: {problem}", file=sys.stderr)
                continue
            except FeedError as problem:  # it names the reference
                failed += 1
                print(f"error: {problem}", file=sys.stderr)
                continue
            except (CorpusFormatError, OSError) as problem:
                failed += 1
                print(f"error: {_where(problem, path)}", file=sys.stderr)
                print(f"{path}: nothing imported", file=sys.stderr)
                continue
            print(format_summary(summary))
            for warning in summary.warnings:  # imported, but it looks cut: the operator decides
                print(warning, file=sys.stderr)
        search_cli.update_index(search)
    return 1 if failed else 0


class _NotFetched(Exception):
    """A link or id that could not be imported: its one-line reason."""


def _is_reference(path: str) -> bool:
    # The chat's adding feature (providers, pages, settings) loads only for a name
    # that is no file: a third of a second that importing a file does not need.
    from bot.adding.imports import is_reference

    return is_reference(path)


def _feed_source(path: str, args: argparse.Namespace, sources: list):
    """The feature's feed source whose references look like `path` (zotero:GROUP), or None.
    The features are built for it only here: a file or a paper's id needs none."""
    if not sources:
        from bot.app import open_services

        sources.extend(open_services(args.database_url).feed_sources)
    wanted = path.strip().lower()
    return next((source for source in sources if wanted.startswith(source.prefix)), None)


def _import_reference(
    library: Library, path: str, collection: str | None, providers: list
) -> ImportSummary:
    from bot.adding.imports import AddProblem, import_reference
    from bot.adding.providers import Providers

    if not providers:
        providers.append(Providers.from_env())
    try:
        return import_reference(library, providers[0], path, collection)
    except AddProblem as problem:
        raise _NotFetched(str(problem)) from None


def _where(problem: Exception, path: str) -> str:
    from bot.corpus.records import CorpusFormatError

    if isinstance(problem, CorpusFormatError):  # it names its file and line
        return str(problem)
    return f"{path}: {getattr(problem, 'strerror', None) or problem}"


def import_with_progress(
    library: Library,
    path: Path,
    collection: str | None,
    fmt: str | None,
    written: Written | None = None,
    listing: ListingFacts | None = None,
) -> ImportSummary:
    """A progress bar on a terminal for large files; plain output when piped."""
    if not sys.stderr.isatty():
        return library.import_file(path, collection, fmt, written=written, listing=listing)
    from rich.progress import Progress

    with Progress(transient=True) as progress:
        task = progress.add_task(f"importing {path.name}", total=None)
        return library.import_file(
            path,
            collection,
            fmt,
            progress=lambda done, total: progress.update(task, completed=done, total=total),
            written=written,
            listing=listing,
        )


def format_summary(s: ImportSummary) -> str:
    vectors = f", {s.vectors} vectors stored" if s.vectors else ""
    return (
        f"{s.path}: {s.format}, collection {s.collection}: "
        f"{s.added} added, {s.updated} updated, {s.unchanged} unchanged{vectors}"
    )


def cmd_tick(args: argparse.Namespace) -> int:
    """Post every due pick once and return; console channels print theirs here."""
    from adapters.console import ConsoleDelivery

    services = open_services(args.database_url, args.at)
    report = services.core.tick(services.core.clock(), ConsoleDelivery(sys.stdout, args.json), ["console"])
    rest = counts_said(report, leave_out=("posted", "empty", "failed", "skipped", "polls_closed"))
    print(
        f"tick at {services.core.clock():%Y-%m-%dT%H:%M:%SZ}: {report['posted']} posted, "
        f"{report['empty']} with nothing left, {report['failed']} failed, {report['skipped']} skipped, "
        f"{report['polls_closed']} polls closed" + "".join(f", {part}" for part in rest),
        file=sys.stderr,
    )
    return 1 if report['failed'] else 0


def counts_said(report: TickReport, leave_out: tuple[str, ...] = ()) -> list[str]:
    """Every count a tick kept that is not 0, by its name ("1 digests", "2 follows fetched",
    "1 zotero written"): what each feature's minute and provider work did, none left out
    (`paperclub tick`'s summary and the sandbox's `tick`)."""
    return [f"{value} {name.replace('_', ' ')}" for name, value in report.flat().items()
            if value and name not in leave_out]


def cmd_serve(args: argparse.Namespace) -> int:
    """Run the chat adapters named (none: every one configured) and the scheduler."""
    from adapters.config_check import startup_settings
    from adapters.platforms import secret_variables
    from adapters.runtime import serve
    from bot.ops.logs import configure

    platforms = list(dict.fromkeys(args.platforms))
    if args.scheduler_only and platforms:
        print("error: --scheduler-only runs no chat app: name no platform with it", file=sys.stderr)
        return 2
    # Every unusable setting, one line each, before anything is opened or logged.
    core = startup_settings(os.environ, platforms).core
    configure(core.log_level, core.log_format, secrets=secret_variables())
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
    import_demo(services)
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


def import_demo(services: Services, quiet: bool = False) -> None:
    """The bundled corpus, each file into its collection with its venue and year
    (DEMO_VENUES); a line each unless `quiet`."""
    corpus = resources.files("bot") / "demo_corpus"
    extras = resources.files("bot") / "demo_extras"
    files = [(corpus / n, c) for n, c in DEMO_COLLECTIONS.items()]
    files += [(extras / n, c) for n, c in DEMO_EXTRAS.items()]
    for resource, collection in files:
        with resources.as_file(resource) as path:
            summary = services.library.import_file(path, collection, listing=demo_listing(resource.name))
        if not quiet:
            print("  " + format_summary(summary).replace(str(path), resource.name))


def demo_listing(name: str) -> ListingFacts | None:
    """The venue and year `paperclub demo` gives a bundled file (DEMO_VENUES), if any."""
    from bot.corpus.listing import ListingFacts

    venue, year = DEMO_VENUES.get(name, (None, None))
    return ListingFacts(venue, year) if venue else None


def cmd_db(args: argparse.Namespace) -> int:
    db = Database(args.database_url or resolve_database_url())
    if args.action == "upgrade":
        before, after = db.upgrade()
        print(f"{db.describe()}: schema {before or 'empty'} -> {after}")
    else:
        print(f"{db.describe()}: schema {db.current_revision() or 'empty'} (code needs {db.head_revision()})")
    return 0
