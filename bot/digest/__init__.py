"""The weekly digest, one post per channel and ISO week gathered from every feature's section."""

from __future__ import annotations

from bot.feature import Feature, Plugin


def _feature() -> type[Feature]:
    from bot.digest.commands import DigestFeature

    return DigestFeature


PLUGIN = Plugin("digest", _feature)
