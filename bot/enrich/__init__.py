"""Enrichment: papers without a link, a DOI, a year or a venue looked up by title and
authors at OpenAlex in the background, and what it knows filled in where nobody said it."""

from __future__ import annotations

from bot.enrich.cli import add_commands
from bot.feature import Feature, Plugin


def _feature() -> type[Feature]:
    from bot.enrich.commands import EnrichFeature

    return EnrichFeature


PLUGIN = Plugin("enrich", _feature, cli=add_commands)
