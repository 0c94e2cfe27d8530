"""`paperclub export`, the memory feature's subcommand: papers for reference managers
(BibTeX, RIS, CSL-JSON) and the papers as JSON Lines (read back by `paperclub import`; a
backup of the whole group is `paperclub backup`), from the whole library, one collection,
or what one channel read.

    paperclub export -o papers.jsonl
    paperclub export --collection reading-list --format ris -o reading-list.ris
    paperclub export --channel slack:T0123:C0456 --format csljson -o group.json
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, TextIO

from bot.messages import counted

if TYPE_CHECKING:
    from bot.corpus.library import Library
    from bot.memory.record import Entry
    from bot.messages import ChannelRef

# bot.memory.export.FORMATS, spelled here so `paperclub --help` imports no exporter
# (tests/memory/test_citation_exports.py checks the two agree).
FORMATS = ("bibtex", "ris", "csljson", "jsonl")

FORMAT_HELP = ("bibtex, ris or csljson (for Zotero, Mendeley, EndNote, Pandoc), or jsonl (the schema "
               "`paperclub import` reads back, papers only; the default)")


def cmd_export(args: argparse.Namespace) -> int:
    # Here, not above: `paperclub --help` loads no database layer.
    from bot.corpus.library import Library
    from store import open_database

    library = Library(open_database(args.database_url))
    fmt = args.format or "jsonl"
    if args.channel is not None:
        return _export_channel(library, args, fmt)
    if args.collection is not None:
        return _export_collection(library, args, fmt)
    if fmt == "jsonl":  # streamed, a chunk of papers at a time: a library may be large
        with _output(args.output) as out:
            count = library.export(out)
    else:
        from bot.memory.record import entry_of

        count = _write((entry_of(p) for p in library.iter_papers()), None, fmt, args.output)
    _done(count, f"({fmt})")
    return 0


def _export_collection(library: Library, args: argparse.Namespace, fmt: str) -> int:
    from bot.memory.record import entry_of

    known = dict(library.collections())
    if args.collection not in known:
        names = ", ".join(known) or "none yet: `paperclub import` makes them"
        print(f"error: --collection {args.collection}: there is no such collection (collections: {names})",
              file=sys.stderr)
        return 1
    papers = library.papers_in(args.collection)
    count = _write((entry_of(p) for p in papers), None, fmt, args.output)
    _done(count, f"in collection {args.collection} ({fmt})")
    return 0


def _export_channel(library: Library, args: argparse.Namespace, fmt: str) -> int:
    """What one channel read, with its notes."""
    from bot.memory.record import Recorder
    from bot.messages import ChannelRef
    from bot.services.votes import Votes

    recorder = Recorder(library.db, library, Votes(library.db))
    ref = ChannelRef(*args.channel)
    channel = recorder.find(ref)
    if channel is None:
        print(f"error: --channel {ref.key()}: paperclub has no such channel (a channel is named "
              "PLATFORM:WORKSPACE:CHANNEL, e.g. slack:T0123:C0456, or a console channel's name)", file=sys.stderr)
        return 1
    count = _write(recorder.record(channel).read(), ref, fmt, args.output)
    _done(count, f"read in {ref.key()} ({fmt})")
    return 0


def _write(entries: Iterable[Entry], channel: ChannelRef | None, fmt: str, output: str | None) -> int:
    from bot.memory.export import write

    with _output(output) as out:
        return write(entries, channel, fmt, out)


def _output(output: str | None) -> AbstractContextManager[TextIO]:
    if output in (None, "-"):
        return nullcontext(sys.stdout)
    return open(output, "w", encoding="utf-8")


def _done(count: int, what: str) -> None:
    """One line on stderr, also when nothing was exported (the file is then empty)."""
    print(f"exported {counted(count, 'paper')} {what}".rstrip(), file=sys.stderr)


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


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("export", help="write papers for a reference manager (BibTeX, RIS, CSL-JSON) or as JSON "
                                      "Lines: every paper, one collection, or what one channel read")
    p.add_argument("-o", "--output", help="file to write (default: stdout)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--channel", type=_channel_key, metavar="CHANNEL",
                       help="only what this channel read, with its notes: PLATFORM:WORKSPACE:CHANNEL "
                            "(e.g. slack:T0123:C0456) or a console channel's name")
    which.add_argument("--collection", metavar="NAME", help="only the papers of this collection")
    p.add_argument("--format", choices=list(FORMATS), help=FORMAT_HELP)
    p.set_defaults(func=cmd_export)
