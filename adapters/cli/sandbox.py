"""`paperclub sandbox`: the features that need a service outside (follows, the digest of
what they bring, the Zotero sync) tried with no account and no internet.

It starts paperclub's own fakes of arXiv, OpenAlex, Zotero and Slack on 127.0.0.1, the
ones the tests use (adapters/fakes, shipped in the wheel): a few sample papers submitted yesterday, a Zotero
group whose collection holds a few sample items (its key is the operator's here, so
`zotero link` needs no `zotero key`); opens a sandbox database (the demo corpus imported
once); and runs a console whose extra word `tick` runs the scheduler's minute at once:
the follows' fetches, the Zotero sync and every post that is due. The banner prints the
variables that point a real `paperclub serve` at the same fakes (the fake Slack lets it
start as on a workspace: its posts land in the fake, seen by no one).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TextIO

from adapters.fakes.arxiv import ArxivPaper, FakeArxiv
from adapters.fakes.openalex import FakeAuthor, FakeOpenAlex, FakeWork, demo_works
from adapters.fakes.slack_api import BOT_TOKEN, SIGNING_SECRET, FakeSlack
from adapters.fakes.zotero import (
    SAMPLE_COLLECTION,
    SAMPLE_GROUP,
    SAMPLE_KEY,
    FakeZotero,
    sample_zotero,
)

TICK = "tick"
CHANNEL = "sandbox"
# Sample papers, plainly samples: what a follow of cs.LG or cs.CL brings in the sandbox.
SAMPLES = (
    ("cs.LG", "Sandbox: Sparse Mixtures of Experts Route Long Contexts Cheaply",
     ("We route each token of a long context to two of sixty-four experts and keep quality at a quarter of the "
      "compute of a dense transformer.")),
    ("cs.LG", "Sandbox: Diffusion Models Are Robust to Label Noise When Guided Lightly",
     "Classifier-free guidance at low scales makes diffusion models robust to noisy labels on CIFAR-10."),
    ("cs.LG", "Sandbox: A Benchmark of Tabular Deep Learning Under Distribution Shift",
     "Gradient-boosted trees still lead on tabular data under covariate shift; we release the benchmark."),
    ("cs.CL", "Sandbox: Retrieval Augmented Generation With Citations Members Can Check",
     "Each generated sentence cites the retrieved passage it rests on, and readers verify claims faster."),
    ("cs.CL", "Sandbox: Small Language Models Summarise Reading-Group Discussions",
     "A 1B-parameter model turns a thread of notes into a summary members rate as useful."),
)
AUTHOR = FakeAuthor("A5000000001", "Ada Lovelace", "Analytical Engine Institute", 42)
EXAMPLES = ("follow arxiv cs.LG", 'follow author "Ada Lovelace"', TICK, "following", "fresh 7d", "next",
            "digest preview", f"zotero link {SAMPLE_GROUP} {SAMPLE_COLLECTION[1]}", TICK, "zotero")


@dataclass
class Fakes:
    arxiv: FakeArxiv
    openalex: FakeOpenAlex
    zotero: FakeZotero
    slack: FakeSlack

    def env(self) -> dict[str, str]:
        """The variables that point paperclub at these fakes."""
        return {"PAPERCLUB_ARXIV_API_URL": self.arxiv.url, "PAPERCLUB_OPENALEX_API_URL": self.openalex.base,
                **self.zotero_env(), "SLACK_API_URL": self.slack.api_url, "SLACK_BOT_TOKEN": BOT_TOKEN,
                "SLACK_SIGNING_SECRET": SIGNING_SECRET}

    def zotero_env(self) -> dict[str, str]:
        return {"PAPERCLUB_ZOTERO_API_URL": self.zotero.url, "PAPERCLUB_ZOTERO_API_KEY": SAMPLE_KEY}


@contextmanager
def running_fakes(now: datetime) -> Iterator[Fakes]:
    """arXiv and OpenAlex on 127.0.0.1, with the sample papers submitted the day before `now`;
    Zotero with its sample library; Slack."""
    yesterday = now - timedelta(days=1)
    papers = [ArxivPaper(f"{yesterday:%y%m}.{90001 + n:05d}", title, abstract, yesterday + timedelta(minutes=n),
                         [category]) for n, (category, title, abstract) in enumerate(SAMPLES)]
    works = [FakeWork(f"W90000{n}", title, abstract, f"{yesterday:%Y-%m-%d}", [AUTHOR])
             for n, (_category, title, abstract) in enumerate(SAMPLES[:2])]
    with ExitStack() as stack:
        arxiv = stack.enter_context(FakeArxiv(papers))
        openalex = stack.enter_context(FakeOpenAlex([*works, *demo_works()], [AUTHOR]))  # `paperclub enrich` too
        zotero = stack.enter_context(sample_zotero())
        slack = stack.enter_context(FakeSlack())
        yield Fakes(arxiv, openalex, zotero, slack)


def cmd_sandbox(args: argparse.Namespace) -> int:
    from adapters.cli.commands import import_demo

    now = datetime.now(timezone.utc)
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    url = args.database_url or f"sqlite:///{(folder / 'sandbox.db').resolve()}"
    with running_fakes(now) as fakes:
        services = _services(url, fakes)
        if services.library.count() == 0:
            import_demo(services, quiet=True)
        _banner(services.db.describe(), fakes, sys.stdout)
        run(services, sys.stdin, sys.stdout, prompt=sys.stdin.isatty())
        services.db.dispose()
    return 0


def _services(url: str, fakes: Fakes):
    from bot.app import build_services
    from bot.corpus.fetch import Fetcher, FetchPolicy, HostLimiter
    from bot.follows.clients import FollowClients, FollowUrls

    # The fakes answer at once: no 3 s between requests, as there is no one to be polite to.
    fetcher = Fetcher(FetchPolicy(), limiter=HostLimiter(0.0))
    clients = FollowClients(FollowUrls(fakes.arxiv.url, fakes.openalex.base), fetcher, fetcher)
    # Zotero's settings are read from the environment: the fake's address, its key as the operator's.
    return build_services(url, given=[clients], env={**os.environ, **fakes.zotero_env()})


def run(services, lines: Iterable[str], out: TextIO, prompt: bool = False) -> None:
    """The console, with `tick`: the scheduler's minute (follows fetched, Zotero synced, due posts) now."""
    from adapters.cli.commands import counts_said
    from adapters.console import PROMPT, QUIT_WORDS, ConsoleDelivery, ConsoleSession, render_text

    session = ConsoleSession(services.core, channel=CHANNEL, user="you", manager=True)
    if prompt:
        out.write(PROMPT)
        out.flush()
    for line in _prompted(lines, out, PROMPT if prompt else ""):
        text = line.strip()
        if text.lower() in QUIT_WORDS:
            break
        if text.lower() == TICK:
            report = services.core.tick(services.core.clock(), ConsoleDelivery(out), ["console"])
            done = ", ".join(counts_said(report))
            out.write(f"tick: {done or 'nothing was due'}\n")
        elif text and not text.startswith("#"):
            out.write(render_text(session.answer(text)) + "\n")
        out.flush()


def _prompted(lines: Iterable[str], out: TextIO, prompt: str) -> Iterator[str]:
    for line in lines:
        yield line
        if prompt:
            out.write(prompt)
            out.flush()


def _banner(where: str, fakes: Fakes, out: TextIO) -> None:
    settings = "\n".join(f"  {name}={value}" for name, value in fakes.env().items())
    out.write(
        f"paperclub sandbox: {where}, with fake arXiv and OpenAlex (sample papers from yesterday), Zotero "
        f"(group {SAMPLE_GROUP}, collection {SAMPLE_COLLECTION[1]}, sample items) and Slack on 127.0.0.1.\n"
        f"Type commands as in chat; `{TICK}` runs the scheduler's minute now (follows fetched, Zotero synced, "
        "due posts).\n"
        f"Try: {' · '.join(EXAMPLES)}\n"
        f"Point a `paperclub serve` at the same fakes while this runs:\n{settings}\n\n"
    )
    out.flush()
