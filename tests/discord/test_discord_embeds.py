"""A card's embed: the venue line, "title match" beside the score, the sources on `show`,
member notes with their LaTeX read, all inside Discord's 6,000 characters a message."""

from __future__ import annotations

from adapters.discord.embeds import EMBEDS_TOTAL_MAX, card_embed, embeds
from bot.messages import PaperCard

SHOWN = PaperCard(
    paper_id=3,
    title="Toward Causal Representation Learning",
    url="https://arxiv.org/abs/2102.11107v1",
    venue="2021 · march",
    snippet="S",
    score=6.321,
    title_match=True,
    discussion=[r"@123456789012345678, 2026-01-05: an $\epsilon$-greedy baseline"],
    sources=["march: papers.bib:23 (bibtex)", "arxiv: feed.atom:36 (arxiv)"],
)


def test_the_embed_shows_venue_sources_and_title_match_and_no_bm25_score():
    embed = card_embed(SHOWN)
    fields = {f.name: f.value for f in embed.fields}
    assert fields["Venue"] == "2021 · march"
    assert fields["Sources"] == "march: papers.bib:23 (bibtex)\narxiv: feed.atom:36 (arxiv)"
    assert fields["Discussion"] == "<@123456789012345678>, 2026-01-05: an ε-greedy baseline"
    assert embed.footer == "title match"  # a raw score means nothing to a member
    assert card_embed(PaperCard(paper_id=4, title="T", score=6.5)).footer == ""


def test_ten_cards_with_huge_sources_fit_one_message_and_sources_give_way_first():
    huge = PaperCard(**{**SHOWN.__dict__, "sources": ["c: " + "f" * 300 + ".bib:1 (bibtex)"] * 50,
                        "snippet": "abstract " * 40})
    shown = embeds([huge] * 10)
    assert sum(len(e) for e in shown) <= EMBEDS_TOTAL_MAX
    for embed in shown:  # the sources were cut; the abstract and the score line were not
        sources = {f.name: f.value for f in embed.fields}.get("Sources", "")
        assert len(sources) < 1024 and embed.description == huge.snippet
        assert embed.footer.text == "title match"
