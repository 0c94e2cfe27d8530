"""Enrichment: links, DOIs, years and venues filled in from OpenAlex where nobody gave them."""

from __future__ import annotations

from bot.enrich.cli import add_commands
from bot.feature import Feature, Plugin


def _feature() -> type[Feature]:
    from bot.enrich.commands import EnrichFeature

    return EnrichFeature


PLUGIN = Plugin("enrich", _feature, cli=add_commands)
