"""Secret links: random tokens, kept only as digests, found in constant time, replaced on reset."""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone

from sqlalchemy import select

from bot.channels.channels import Channels
from bot.messages import ChannelRef
from bot.services.links import ChannelLinks
from bot.services.models import ChannelLink

NOW = datetime(2026, 11, 23, 9, tzinfo=timezone.utc)


def test_a_token_opens_its_own_kind_of_link_only_and_only_its_digest_is_stored(db):
    channel = Channels(db).get(ChannelRef("console", "local", "reading")).id
    links = ChannelLinks(db)
    archive, calendar = links.issue(channel, "archive", "U1", NOW), links.issue(channel, "calendar", "U1", NOW)
    assert len(archive) >= 43 and archive != calendar  # 32 random bytes, url-safe base64
    assert links.channel_of("archive", archive) == channel
    assert links.channel_of("calendar", calendar) == channel
    assert links.channel_of("calendar", archive) is None  # an archive token is no calendar token
    with db.session() as session:
        stored = set(session.scalars(select(ChannelLink.token_hash)))
    assert stored == {hashlib.sha256(t.encode()).hexdigest() for t in (archive, calendar)}
    assert archive not in str(stored)


def test_asking_again_replaces_only_your_own_link_and_revoke_ends_all_of_a_kind(db):
    channel = Channels(db).get(ChannelRef("slack", "T1", "C1")).id
    links = ChannelLinks(db)
    old = links.issue(channel, "archive", "U1", NOW)
    new = links.issue(channel, "archive", "U1", NOW)
    other = links.issue(channel, "archive", "U2", NOW)
    calendar = links.issue(channel, "calendar", "U1", NOW)
    assert links.channel_of("archive", old) is None
    assert links.channel_of("archive", new) == channel and links.channel_of("archive", other) == channel
    with db.session() as session:
        assert len(session.scalars(select(ChannelLink).where(ChannelLink.kind == "archive")).all()) == 2
    assert links.revoke(channel, "archive") == 2
    assert links.channel_of("archive", new) is None and links.channel_of("archive", other) is None
    assert links.channel_of("calendar", calendar) == channel  # a reset ends one kind only


def test_wrong_and_malformed_tokens_find_nothing(db):
    channel = Channels(db).get(ChannelRef("console", "local", "reading")).id
    links = ChannelLinks(db)
    token = links.issue(channel, "archive", "U1", NOW)
    for wrong in (token[:-1] + ("A" if token[-1] != "A" else "B"), "", "x", "../../etc/passwd", "a" * 500,
                  token + "'", "%00" + token):
        assert links.channel_of("archive", wrong) is None, wrong
    assert links.made_at(channel, "archive", "U1") is not None and links.made_at(channel, "calendar", "U1") is None
