"""Collections as members read them: the bot's own names ("added-slack-T0123",
"follow-2-arxiv-cs.LG") get display names; an operator's own names read as given."""

from __future__ import annotations

import pytest

from bot.cards.collection_names import collection_label, collection_shown
from bot.channels.channels import added_collection
from bot.follows.follows import collection_name
from bot.messages import ChannelRef


@pytest.mark.parametrize("name, label", [
    (added_collection(ChannelRef("slack", "T0123", "C1")), "added in chat"),
    (added_collection(ChannelRef("console", "local", "general")), "added in chat"),
    (collection_name(2, "arxiv", "cs.LG", ""), "followed: cs.LG (Machine Learning)"),
    (collection_name(2, "arxiv", "astro-ph.CO", ""), "followed: astro-ph.CO (Cosmology and Nongalactic Astrophysics)"),
    (collection_name(2, "arxiv", "cs.LG", "world models"), "followed: cs.LG (Machine Learning), with words"),
    (collection_name(3, "author", "A5023888391", ""), "followed: author A5023888391"),
    (collection_name(4, "citations", "", ""), "followed: citations"),
    ("iclr2021", "iclr2021"),
    ("follow-up-reading", "follow-up-reading"),
])
def test_each_internal_collection_name_reads_as_a_member_would_say_it(name, label):
    assert collection_label(name) == label


def test_shown_gives_the_name_use_takes_beside_the_label():
    assert collection_shown("added-slack-T0123") == "added in chat (`added`)"
    assert collection_shown("follow-2-arxiv-cs.LG") == "followed: cs.LG (Machine Learning) (`follow-2-arxiv-cs.LG`)"
    assert collection_shown("iclr2021") == "iclr2021"
