"""The adding feature's settings: where `add` fetches papers from, and a member's limits."""

from __future__ import annotations

import math
from typing import Any

from pydantic import field_validator

from bot.ops.settings import ADDING, EnvSettings, http_url, setting

PER_HOUR = 20  # papers a member may add (fetch and store) per hour, by default
PER_HOUR_MAX = 10_000
ADD_TIMEOUT = 5.0  # seconds a member waits at most
ADD_TIMEOUT_MAX = 60.0


class AddSettings(EnvSettings):
    """`add` and `paperclub import LINK`: where papers are fetched from (arXiv's API is
    FeedSettings' PAPERCLUB_ARXIV_API_URL), and the limits."""

    crossref_api_url: str = setting("https://api.crossref.org", "PAPERCLUB_CROSSREF_API_URL", ADDING)
    openreview_api_url: str = setting("https://api2.openreview.net", "PAPERCLUB_OPENREVIEW_API_URL", ADDING)
    fetch_allow_private: bool = setting(
        False, "PAPERCLUB_FETCH_ALLOW_PRIVATE", ADDING,
        unset="members' links may name public addresses only (1: private ones too)",
    )
    add_per_hour: int = setting(PER_HOUR, "PAPERCLUB_ADD_PER_HOUR", ADDING,
                                unset=f"{PER_HOUR} papers a member may add per hour")
    add_timeout: float = setting(ADD_TIMEOUT, "PAPERCLUB_ADD_TIMEOUT", ADDING,
                                 unset=f"{ADD_TIMEOUT:g} seconds a member waits at most")

    @field_validator("crossref_api_url", "openreview_api_url", mode="before")
    @classmethod
    def _url(cls, value: Any) -> Any:
        return http_url(value) if isinstance(value, str) else value

    @field_validator("crossref_api_url", "openreview_api_url", mode="after")
    @classmethod
    def _base(cls, value: str) -> str:
        return value.rstrip("/")  # paths are appended to these

    @field_validator("fetch_allow_private", mode="before")
    @classmethod
    def _allow_private(cls, value: Any) -> Any:
        if isinstance(value, str):
            if value.strip() not in ("0", "1"):
                raise ValueError(f"{value!r} is not 0 or 1 (1: members' links may name private addresses)")
            return value.strip() == "1"
        return value

    @field_validator("add_per_hour", mode="before")
    @classmethod
    def _per_hour(cls, value: Any) -> Any:
        if isinstance(value, str):
            if not value.strip().isdigit():
                raise ValueError(f"{value!r} is not a whole number of papers")
            value = int(value)
        if isinstance(value, int) and not 0 <= value <= PER_HOUR_MAX:
            raise ValueError(f"{value} is out of range: use 0 to {PER_HOUR_MAX}")
        return value

    @field_validator("add_timeout", mode="before")
    @classmethod
    def _timeout(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                number = math.nan
            if not math.isfinite(number):
                raise ValueError(f"{value!r} is not a number of seconds")
            value = number
        if isinstance(value, (int, float)) and not 0 < value <= ADD_TIMEOUT_MAX:
            raise ValueError(f"{value:g} seconds is out of range: use more than 0, up to {ADD_TIMEOUT_MAX:g}")
        return value
