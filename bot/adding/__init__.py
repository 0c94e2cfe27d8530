"""Papers from the conversation: `add LINK|ID` and "Add to paperclub" on a message.

references (bot.corpus.identifiers.find_all) -> providers (arXiv, Crossref, OpenReview,
citation_* pages) fetched by `web` under the address policy of `addresses` -> the
library's import (one paper per identity) -> `additions` (who added what, the hourly
limit) -> `commands` (the replies, the nominate and discuss buttons).
"""

from __future__ import annotations

from bot.feature import Feature, Plugin


def _feature() -> type[Feature]:
    from bot.adding.commands import AddingFeature

    return AddingFeature


PLUGIN = Plugin("adding", _feature)
