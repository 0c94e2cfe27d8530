"""The enrichment as a feature: its background run (a provider step, on a job of its own
beside the minute's tick, when PAPERCLUB_ENRICH is on), the citation count it adds to the
card `show` answers with, and its stop at shutdown. It owns no chat command: the
operator's `paperclub enrich` runs it at once."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta

from bot.enrich.enrich import Enricher, fetcher
from bot.enrich.openalex import TitleSearch
from bot.enrich.settings import EnrichSettings
from bot.feature import Feature, Kit
from bot.messages import Incoming, PaperCard
from bot.ops.settings import FeedSettings


class EnrichFeature(Feature):
    """Papers filled in from OpenAlex in the background."""

    name = "enrich"
    settings_model = EnrichSettings

    def __init__(self, enricher: Enricher, config: EnrichSettings):
        self.enricher = enricher
        self.config = config

    @classmethod
    def build(cls, kit: Kit) -> EnrichFeature:
        config = kit.settings(EnrichSettings)
        client = kit.provided(TitleSearch) or title_search(kit.env)
        return cls(Enricher(kit.db, kit.library, kit.search, client), config)

    def provider_step(self, now: datetime, stopping: Callable[[], bool]) -> dict[str, int]:
        """A run, when it is on and its turn has come (PAPERCLUB_ENRICH_EVERY)."""
        if self.config.enrich != "on":
            return {}
        outcome = self.enricher.run(now, self.config.per_run, timedelta(minutes=self.config.every),
                                    stopping=stopping)
        return outcome.counts()

    def stop(self) -> None:
        self.enricher.stop()

    def on_show(self, incoming: Incoming, paper_id: int, card: PaperCard) -> None:
        """The citation count OpenAlex gave, after the venue: "ICLR 2021 · Poster · cited by 1,204"."""
        cited = self.enricher.cited_by(paper_id)
        if cited:
            card.venue = " · ".join(part for part in (card.venue, f"cited by {cited:,}") if part)


def title_search(env: Mapping[str, str]) -> TitleSearch:
    """The client on PAPERCLUB_OPENALEX_API_URL, with PAPERCLUB_FEED_CONTACT as `mailto`."""
    feeds = FeedSettings.from_env(env)
    return TitleSearch(feeds.openalex_api_url, fetcher(), feeds.contact)
