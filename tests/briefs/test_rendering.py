"""A brief as Slack (Block Kit) and Discord (embeds) show it: within their limits, the
model's text escaped like any paper text, no live mention or link."""

from __future__ import annotations

from adapters.discord.embeds import outgoing
from adapters.slack.blocks import MAX_BLOCKS, MESSAGE_CHARS, SECTION_CHARS, message, text_chars
from bot.briefs.commands import _reply
from bot.briefs.prompt import BriefText
from bot.briefs.untrusted import made_safe
from bot.messages import PaperCard, Reply
from bot.services.replies import vote_actions
from store.models import Paper
from tests.briefs.scene import INJECTION
from tests.fake_discord_api import message_errors
from tests.slack.harness import section_texts


def slack_within_limits(payload: dict) -> None:
    blocks = payload["blocks"]
    assert len(blocks) <= MAX_BLOCKS and text_chars(blocks) <= MESSAGE_CHARS < 12_000
    assert all(len(b["text"]["text"]) <= SECTION_CHARS and b["text"]["verbatim"] for b in blocks
               if b["type"] == "section")
    assert len(payload["text"]) <= 3000


def discord_body(reply) -> dict:
    (one,) = outgoing(reply)  # one message
    return {"content": one.content, "embeds": [e.to_dict() for e in one.embeds]}


def test_a_brief_on_slack_is_a_block_per_part_within_limits(scene):
    payload = message(scene.brief("Robust"))
    slack_within_limits(payload)
    texts = section_texts(payload["blocks"])
    for title in ("*TL;DR*", "*Key contribution*", "*Why it may matter here*", "*Questions for the discussion*"):
        assert title in texts
    assert "1. [en] What does" in texts


def test_an_injected_brief_on_slack_pings_no_one(scene):
    payload = message(scene.brief("Injection"))
    slack_within_limits(payload)
    texts = section_texts(payload["blocks"])
    assert "<!channel>" not in texts and "<@U123>" not in texts and "<https" not in texts
    assert "&lt;\u200b!channel&gt;" in texts and "@\u200beveryone" in texts


def test_a_brief_on_discord_is_an_embed_per_part_within_limits(scene):
    body = discord_body(scene.brief("Robust"))
    assert message_errors(body) == {}
    assert [e["title"] for e in body["embeds"]] == ["TL;DR", "Key contribution", "Why it may matter here",
                                                   "Questions for the discussion"]


def test_an_injected_brief_on_discord_mentions_no_one(scene):
    body = discord_body(scene.brief("Injection"))
    assert message_errors(body) == {}
    shown = "\n".join(e["description"] for e in body["embeds"])
    assert "@everyone" not in shown and "<@U123>" not in shown and "https://" not in shown


def test_the_longest_brief_fits_both_platforms():
    """Every part at its cap, and a long "why" (a channel with many topics): still one
    message each, within the limits."""
    long = "<b>&amp; " + INJECTION + " " + " ".join(["word"] * 2000)
    brief = made_safe(BriefText(long, long, (long, long, long)))
    paper = Paper(id=7, title="T" * 600, abstract="a")
    reply = _reply(paper, brief, [long[:3000]] * 20)
    payload = message(reply)
    slack_within_limits(payload)
    assert "&lt;b&gt;&amp;amp;" in section_texts(payload["blocks"])
    body = discord_body(reply)
    assert message_errors(body) == {}


# --- a post's TL;DR (`briefs on`) ------------------------------------------------------------


def post_with_tldr(tldr: str, snippet: str = "An abstract. " * 200, title: str = "Robust Diffusion") -> Reply:
    from bot.briefs.commands import TLDR

    card = PaperCard(7, title, url="https://example.org/7", authors_display="Ada Lovelace, Alan Turing",
                     venue="ICLR 2024 " * 30, snippet=snippet, reason="Matches this channel's topics: protein. " * 20,
                     about=[TLDR + made_safe(BriefText(tldr, "c", ("q", "q", "q"))).tldr])
    return Reply(text="Paper of the day, Thursday 26 November 2026", cards=[card],
                 actions=vote_actions(3, 7), post_id=3)


def test_a_posts_tldr_sits_above_the_abstract_within_slacks_limits():
    payload = message(post_with_tldr("We make diffusion robust. " * 60))
    slack_within_limits(payload)
    (card,) = [b["text"]["text"] for b in payload["blocks"] if b["type"] == "section" and "Why" in b["text"]["text"]]
    assert card.index("TL;DR (language model): We make") < card.index("An abstract.")
    assert "*Why:* Matches" in card  # the rest of the card stays


def test_a_posts_tldr_sits_above_the_abstract_within_discords_limits():
    body = discord_body(post_with_tldr("We make diffusion robust. " * 60, title="T" * 600))
    assert message_errors(body) == {}
    (embed,) = body["embeds"]
    assert embed["description"].startswith("TL;DR (language model): We make")
    assert "An abstract." in embed["description"]


def test_an_injected_tldr_on_a_post_pings_no_one_anywhere():
    reply = post_with_tldr(INJECTION)
    texts = section_texts(message(reply)["blocks"])
    assert "<!channel>" not in texts and "<@U123>" not in texts and "<https://evil" not in texts
    assert "&lt;\u200b!channel&gt;" in texts and "@\u200beveryone" in texts
    shown = discord_body(reply)["embeds"][0]["description"]
    assert "@everyone" not in shown and "<@U123>" not in shown and "https://" not in shown
