"""The enrichment's settings: whether it runs in the background, how many papers a run asks
about and how often. Where OpenAlex is: PAPERCLUB_OPENALEX_API_URL (bot.ops.settings,
shared with the follows); its `mailto`: PAPERCLUB_FEED_CONTACT."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import field_validator

from bot.ops.settings import EnvSettings, on_off, setting

ENRICH = "Enrichment (metadata from OpenAlex)"  # its group in `config check`
PER_RUN_MOST = 1_000
EVERY_MOST = 7 * 24 * 60


class EnrichSettings(EnvSettings):
    """bot/enrich: off unless switched on; a run every PAPERCLUB_ENRICH_EVERY minutes asks
    OpenAlex about PAPERCLUB_ENRICH_PER_RUN papers at most. `paperclub enrich` runs one
    at once whatever the switch says."""

    enrich: Literal["on", "off"] = setting("off", "PAPERCLUB_ENRICH", ENRICH,
                                           unset="off: only `paperclub enrich` fills papers in")
    per_run: int = setting(50, "PAPERCLUB_ENRICH_PER_RUN", ENRICH, unset="50 papers a run")
    every: int = setting(60, "PAPERCLUB_ENRICH_EVERY", ENRICH, unset="a run every 60 minutes")

    @field_validator("enrich", mode="before")
    @classmethod
    def _switch(cls, value: Any) -> Any:
        return on_off(value)

    @field_validator("per_run", mode="before")
    @classmethod
    def _per_run(cls, value: Any) -> Any:
        return _whole(value, 1, PER_RUN_MOST, "papers")

    @field_validator("every", mode="before")
    @classmethod
    def _every(cls, value: Any) -> Any:
        return _whole(value, 1, EVERY_MOST, "minutes")


def _whole(value: Any, least: int, most: int, unit: str) -> Any:
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not (text.isascii() and text.isdigit()) or not least <= int(text) <= most:
        raise ValueError(f"{value!r}: give a whole number of {unit} from {least} to {most:,}")
    return int(text)
