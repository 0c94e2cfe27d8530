"""Follows (arXiv categories, OpenAlex authors, citing papers), their daily ingest and fresh picks."""

from __future__ import annotations

from bot.feature import Feature, Plugin


def _feature() -> type[Feature]:
    from bot.follows.commands import FollowsFeature

    return FollowsFeature


PLUGIN = Plugin("follows", _feature)
