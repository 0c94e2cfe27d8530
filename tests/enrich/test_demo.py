"""Issue 46's line, as a test on both databases: after `paperclub demo`'s import and the
enrichment against the fake OpenAlex (which knows the demo's papers, beside decoys of their
titles by other people), at least 95% of the papers it knows have a link, a year and a
venue; the library's BibTeX has @inproceedings entries with years and the arXiv preprints
@misc with eprint; no card names a collection; a second run asks nothing."""

from __future__ import annotations

import io
import re
from datetime import datetime, timezone

from adapters.cli.commands import import_demo
from adapters.console import ConsoleSession, render_text
from adapters.fakes.openalex import FakeOpenAlex, demo_works
from bot.app import build_services
from bot.cards.cards import paper_link
from bot.corpus.records import title_key
from bot.enrich.openalex import TitleSearch
from bot.memory.export import write
from bot.memory.record import entry_of
from tests.enrich.conftest import quick_fetcher

NOW = datetime(2026, 11, 26, 7, 0, tzinfo=timezone.utc)


def test_the_demo_library_gets_real_metadata_from_the_fake_openalex(db, database_url):
    with FakeOpenAlex(demo_works()) as fake:
        services = build_services(database_url, given=[TitleSearch(fake.base, quick_fetcher())], env={})
        try:
            import_demo(services, quiet=True)
            enricher = services.feature("enrich").enricher
            outcome = enricher.run(NOW, 5_000, seconds=600)
            requests = len(fake.requests)
            assert enricher.run(NOW, 5_000, seconds=600).requests == 0  # nobody is asked twice
            _check(services, fake, outcome, requests)
        finally:
            services.db.dispose()


def _check(services, fake, outcome, requests):
    papers = list(services.library.iter_papers())
    known = {title_key(w.title) for w in fake.works if not w.id.startswith("W42")}  # W42...: decoys
    ours = [p for p in papers if p.title_key in known]
    assert len(ours) >= 1_000
    complete = [p for p in ours if paper_link(p) and p.year and p.venue]
    assert len(complete) >= 0.95 * len(ours), f"{len(complete)} of {len(ours)}"
    # 25 titles a request: ten times fewer requests than papers, whatever the decoys.
    assert requests == outcome.requests <= len(ours) / 20 and outcome.matched >= 0.95 * len(ours)
    # No paper took a decoy's identity.
    decoys = {w.doi for w in fake.works if w.id.startswith("W42")}
    assert decoys and not decoys & {p.ids().get("doi") for p in papers}
    # What the demo's own listings said stays: the ICLR 2021 papers' venue is theirs.
    assert sum(p.venue == "ICLR 2021" for p in papers) == 860

    out = io.StringIO()
    write((entry_of(p) for p in papers), None, "bibtex", out)
    entries = re.split(r"\n(?=@)", out.getvalue())
    conference = [e for e in entries if e.startswith("@inproceedings{")]
    assert len(conference) >= 1_000 and all(re.search(r"\n\s*year = \{20\d\d\}", e) for e in conference)
    preprints = [e for e in entries if e.startswith("@misc{") and "eprint = {" in e]
    assert len(preprints) >= 50 and all("year = {" in e for e in preprints)

    internal = [name for name, _count in services.library.collections() if re.search(r"[\d:-]", name)]
    assert "filled:openalex" in internal and "iclr2021" in internal
    session = ConsoleSession(services.core, channel="demo", user="ann")
    top = session.answer("search diffusion models").cards[0].paper_id
    for line in ("search diffusion models", f"show {top}", f"similar {top}", "search in:trending language",
                 "show arXiv:1706.03762", "search epsilon greedy exploration"):
        reply = session.answer(line)
        assert reply.cards, line
        shown = render_text(reply)
        assert not [name for name in internal if name in shown], (line, shown)
    show = session.answer(f"show {top}").cards[0]
    assert show.url and show.url.startswith("https://openreview.net/pdf?id=") and "cited by" in show.venue
