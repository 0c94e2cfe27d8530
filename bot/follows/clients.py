"""Where the follows fetch from, and with which manners: one set of clients for the
daily ingest (the feeds' fetcher: arXiv's 3 s between requests, patient retries) and a
quick one for a member's `follow author NAME` (a few seconds at most)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace

from bot.corpus.fetch import Fetcher, FetchPolicy
from bot.follows.arxiv import ArxivListing
from bot.follows.openalex import OpenAlex
from bot.ops.settings import FeedSettings

# A member waits for the author lookup: two tries, short timeouts, no long Retry-After.
LOOKUP_POLICY = FetchPolicy(max_attempts=2, backoff_base=1.0, max_backoff=2.0, max_retry_after=3.0, timeout=5.0)
# One page of a follow: arXiv's 100 entries are ~300 kB, OpenAlex's 200 works a few MB (big
# collaborations list thousands of authors); a larger answer is refused before it is parsed.
FOLLOW_MAX_BYTES = 20_000_000


@dataclass(frozen=True)
class FollowUrls:
    arxiv: str = "https://export.arxiv.org/api/query"
    openalex: str = "https://api.openalex.org"
    contact: str | None = None  # sent to OpenAlex as mailto=, when an e-mail address

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> FollowUrls:
        """PAPERCLUB_ARXIV_API_URL, PAPERCLUB_OPENALEX_API_URL, PAPERCLUB_FEED_CONTACT."""
        feeds = FeedSettings.from_env(env)
        return cls(feeds.arxiv_api_url, feeds.openalex_api_url, feeds.contact)


class FollowClients:
    def __init__(self, urls: FollowUrls | None = None, fetcher: Fetcher | None = None,
                 lookup_fetcher: Fetcher | None = None):
        self.urls = urls or FollowUrls()
        fetcher = fetcher or Fetcher(FetchPolicy(max_bytes=FOLLOW_MAX_BYTES))
        self.arxiv = ArxivListing(self.urls.arxiv, fetcher)
        self.openalex = OpenAlex(self.urls.openalex, fetcher, self.urls.contact)
        self.lookup = OpenAlex(self.urls.openalex, lookup_fetcher or Fetcher(LOOKUP_POLICY), self.urls.contact)

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> FollowClients:
        return cls(FollowUrls.from_env(env), Fetcher(replace(FetchPolicy.from_env(env), max_bytes=FOLLOW_MAX_BYTES)))
