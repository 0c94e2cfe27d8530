"""The follows feature's settings: where OpenAlex is reached."""

from __future__ import annotations

from typing import Any

from pydantic import field_validator

from bot.ops.settings import EnvSettings, base_url, setting

FOLLOWS = "Follows (the daily ingest)"  # its group in `config check`


class FollowSettings(EnvSettings):
    """The follows' daily ingest (bot/follows): where OpenAlex is reached. arXiv's API is
    FeedSettings' PAPERCLUB_ARXIV_API_URL; the contact, PAPERCLUB_FEED_CONTACT."""

    openalex_api_url: str = setting("https://api.openalex.org", "PAPERCLUB_OPENALEX_API_URL", FOLLOWS)

    @field_validator("openalex_api_url", mode="before")
    @classmethod
    def _url(cls, value: Any) -> Any:
        return base_url(value)
