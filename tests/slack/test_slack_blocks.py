"""Block Kit rendering: the card's parts, and Slack's limits whatever the content."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.slack.blocks import (
    ACTIONS_PER_BLOCK,
    BUTTON_TEXT_CHARS,
    FALLBACK_CHARS,
    MAX_BLOCKS,
    MESSAGE_CHARS,
    SECTION_CHARS,
    bold_words,
    card_blocks,
    message,
    text_chars,
)
from bot.messages import Action, PaperCard, Reply

CARD = PaperCard(
    paper_id=42,
    title="Robust <Diffusion> & Friends",
    url="https://openreview.net/forum?id=abc&x=1",
    authors=["A", "B", "C", "D", "E", "F"],
    authors_display="A, B, C, D, E +1 more",
    venue="iclr2023 · Oral · Outstanding Paper",
    matched_terms=["robustness", "diffusion"],
    snippet="… the robustness of Diffusion models (diffusion, that is). Robustness matters …",
    score=12.345,
    reason="Matches this channel's topics: diffusion.",
    tags=["generative"],
)


def test_a_card_links_its_title_names_its_authors_venue_and_bolds_the_matched_words():
    section, context = card_blocks(CARD)
    text = section["text"]["text"]
    assert (
        text.splitlines()[0]
        == "*<https://openreview.net/forum?id=abc&x=1|Robust &lt;Diffusion&gt; &amp; Friends>*"
    )
    assert text.splitlines()[1] == "A, B, C, D, E +1 more"
    assert (
        "the *robustness* of *Diffusion* models (*diffusion*, that is). *Robustness* matters"
        in text
    )
    assert text.splitlines()[-1] == "*Why:* Matches this channel's topics: diffusion."
    facts = [e["text"] for e in context["elements"]]
    assert facts == [
        "ID 42",
        "iclr2023 · Oral · Outstanding Paper",
        "matched: *robustness*, *diffusion*",
        "tags: generative",
    ]


def test_a_title_match_says_so_and_no_card_shows_a_bm25_score():
    lifted = PaperCard(paper_id=3, title="Graph Coarsening with Neural Networks", score=6.321, title_match=True)
    assert card_blocks(lifted)[1]["elements"][-1]["text"] == "title match"
    assert "score" not in json.dumps(card_blocks(CARD)) and "12.35" not in json.dumps(card_blocks(CARD))


def test_a_full_card_lists_its_sources_and_reads_latex_in_member_notes():
    shown = PaperCard(paper_id=3, title="T", snippet="S", discussion=[r"@U1, 2026-01-05: 8$\times$ faster"],
                      sources=["march: papers.bib:5 (bibtex)", "arxiv: feed<1>.atom:36 (arxiv)"])
    *_, notes, sources = card_blocks(shown)
    assert notes["text"]["text"] == "> _member note:_ @U1, 2026-01-05: 8× faster"
    assert sources["elements"][0]["text"] == (
        "Sources: march: papers.bib:5 (bibtex); arxiv: feed&lt;1&gt;.atom:36 (arxiv)"
    )
    assert "Sources" not in str(card_blocks(shown, short=True))  # `show ID` has them


def test_a_url_slack_cannot_parse_whole_is_not_made_a_link():
    odd = PaperCard(paper_id=1, title="T", url="https://x.org/a|b>c")
    assert card_blocks(odd)[0]["text"]["text"].startswith("*T*")


def test_buttons_carry_the_command_and_unique_action_ids():
    actions = [
        Action("Want to discuss", "vote 7 up", "primary"),
        Action("Not for us", "vote 7 down", "danger"),
        Action("I read it", "vote 7 read"),
    ]
    blocks = message(Reply(text="Paper of the day", cards=[CARD], actions=actions, post_id=7))[
        "blocks"
    ]
    buttons = blocks[-1]["elements"]
    assert [(b["action_id"], b["value"], b.get("style")) for b in buttons] == [
        ("paperclub_action_0", "vote 7 up", "primary"),
        ("paperclub_action_1", "vote 7 down", "danger"),
        ("paperclub_action_2", "vote 7 read", None),
    ]


def test_bold_words_are_never_cut_by_clipping():
    clipped = bold_words("robustness " * 500, ["robustness"], 100)
    assert len(clipped) <= 100 and clipped.endswith("…")
    assert all(word in ("*robustness*", "…") for word in clipped.split())


texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=4000)
cards = st.builds(
    PaperCard,
    paper_id=st.integers(1, 10**9),
    title=texts,
    url=st.one_of(st.none(), st.text(max_size=700).map(lambda s: "https://" + s)),
    authors_display=texts,
    venue=texts,
    matched_terms=st.lists(st.text(min_size=1, max_size=40), max_size=30),
    snippet=texts,
    score=st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False)),
    reason=texts,
    tags=st.lists(st.text(max_size=100), max_size=20),
    notes=st.lists(texts, max_size=6),
    discussion=st.lists(texts, max_size=6),
    title_match=st.booleans(),
    sources=st.lists(st.text(max_size=600), max_size=12),
)
actions = st.builds(
    Action,
    label=st.text(max_size=200),
    value=st.text(max_size=2100),
    style=st.sampled_from(["default", "primary", "danger"]),
)


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(max_size=40_000),
    cards=st.lists(cards, max_size=30),
    actions=st.lists(actions, max_size=60),
)
def test_any_reply_renders_within_block_kit_limits(text, cards, actions):
    rendered = message(Reply(text=text, cards=cards, actions=actions))
    blocks = rendered["blocks"]
    assert rendered["text"] and len(blocks) <= MAX_BLOCKS
    assert len(rendered["text"]) <= FALLBACK_CHARS and _all_text(blocks) <= MESSAGE_CHARS < 12_000
    for block in blocks:
        if block["type"] == "section":
            assert 0 < len(block["text"]["text"]) <= SECTION_CHARS
        if block["type"] == "context":
            assert 0 < len(block["elements"]) <= 10 and all(
                len(e["text"]) <= SECTION_CHARS for e in block["elements"]
            )
    buttons = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert all(len(b["elements"]) <= ACTIONS_PER_BLOCK for b in blocks if b["type"] == "actions")
    assert len({b["action_id"] for b in buttons}) == len(buttons)
    assert all(
        len(b["value"]) <= 2000 and 0 < len(b["text"]["text"]) <= BUTTON_TEXT_CHARS for b in buttons
    )
    assert len(buttons) == sum(
        len(a.value) <= 2000 for a in actions
    )  # only impossible buttons are left out


def _all_text(blocks: list[dict]) -> int:
    """Every text a block carries, counted apart from the renderer's own count."""
    total = 0
    for block in blocks:
        if "text" in block:
            total += len(block["text"]["text"])
        for element in block.get("elements", []):
            total += len(element["text"]["text"] if isinstance(element["text"], dict) else element["text"])
    return total


def _mrkdwn_objects(blocks: list[dict]) -> list[dict]:
    objects = [b["text"] for b in blocks if "text" in b]
    objects += [e for b in blocks for e in b.get("elements", []) if e.get("type") == "mrkdwn"]
    return [o for o in objects if o["type"] == "mrkdwn"]


HUGE = PaperCard(
    paper_id=7,
    title="Attention " * 40,
    url="https://openreview.net/forum?id=huge",
    authors_display="Ann Author, " * 40,
    venue="iclr2023 · Oral",
    matched_terms=["attention"],
    snippet="@here " + "attention is all you need, @channel says " * 200,
    reason="Matches this channel's topics: attention.",
    notes=["@here read this " * 40] * 3,
    discussion=["@everyone a long member note " * 20] * 3,
    sources=["a-collection: a/long/path/to/its/file.bib:12345 (bibtex)"] * 40,
    score=1.0,
    title_match=True,
)


def test_a_message_of_huge_cards_stays_under_slacks_whole_message_limit_and_says_what_it_left_out():
    cards = [PaperCard(**{**HUGE.__dict__, "paper_id": n}) for n in range(1, 11)]
    actions = [Action("Want to discuss", "vote 1 up", "primary")]
    blocks = message(Reply(text="Top 10 papers for `attention`:", cards=cards, actions=actions))["blocks"]
    assert text_chars(blocks) == _all_text(blocks) <= MESSAGE_CHARS
    assert blocks[-1]["type"] == "actions"  # the buttons are never what gets dropped
    texts = [section["text"]["text"] for section in blocks if section["type"] == "section"]
    assert "@here *attention*" in texts[1]  # the first card whole, snippet and all
    shown = [t for t in texts if t.startswith("*<https://openreview.net")]
    short = [t for t in shown if "_Abstract and notes: `show" in t]
    assert short and "@channel" not in " ".join(short)  # later cards lose their snippets first
    more = blocks[-2]["elements"][0]["text"]
    assert more == f"…and {10 - len(shown)} more papers (too many for one Slack message)"


def test_a_huge_text_reply_is_cut_and_says_so():
    rendered = message(Reply(text=("a line of the command list\n" * 5000)))
    assert _all_text(rendered["blocks"]) <= MESSAGE_CHARS
    assert rendered["blocks"][-1]["text"]["text"] == "… (the rest is too long for one message)"
    assert len(rendered["text"]) <= FALLBACK_CHARS


def test_every_mrkdwn_text_is_verbatim_so_a_plain_at_here_never_pings():
    blocks = message(Reply(text="Paper @here", cards=[HUGE], actions=[Action("Up", "vote 7 up")]))["blocks"]
    objects = _mrkdwn_objects(blocks)
    assert objects and all(o["verbatim"] is True for o in objects)
    assert "@here" in blocks[0]["text"]["text"] and "@here" in blocks[1]["text"]["text"]
