"""How long from `add` to the paper being the first hit for its title.

    python -m tests.adding.bench_add                 # the seed corpus (1,091 papers)
    python -m tests.adding.bench_add --size 100000   # plus a generated corpus (paperclub bench's)

The provider is the local fake (tests/adding/fake_providers.py), so the figure is
paperclub's own work: the fetch over loopback, the import, the index's new revision (a
segment added to the persisted index, not a rebuild) and the search. Each run adds
three papers one after another, into a bot that has served the corpus's index already.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from bot.app import build_services
from bot.messages import ChannelRef, Incoming, UserRef
from tests.adding.conftest import providers_for
from tests.adding.fake_providers import FakeProviders
from tests.conftest import SEED_FILES

PAPERS = [("2106.01345", "Decision Transformer: Reinforcement Learning via Sequence Modeling"),
          ("1706.03762", "Attention Is All You Need"),
          ("hep-th/9711200", "The Large N Limit of Superconformal Field Theories and Supergravity")]


class _Deferred:
    """The search service, but `current()` is left to the bench to call and time."""

    def __init__(self, search):
        self.search = search
        self.tokenizer = search.tokenizer

    def current(self):
        return None


def run(size: int, work: Path) -> list[tuple[float, float, float, int]]:
    services = build_services(f"sqlite:///{work / 'bench.db'}", clock=lambda: datetime.now(timezone.utc))
    for name, path in SEED_FILES.items():
        services.library.import_file(path, collection=name)
    if size:
        from adapters.bench.search.realistic import RealisticCorpus, write_corpus

        services.library.import_file(write_corpus(RealisticCorpus.from_seeds(), size, work / "generated.jsonl"),
                                     collection="generated")
    services.search.current()  # a running bot has its index already
    timings = []
    with FakeProviders() as fake:
        services.feature("adding").providers = providers_for(fake)
        services.feature("adding").search = _Deferred(services.search)  # the index's part timed apart
        member = UserRef("console", "ann", "Ann", is_manager=True)
        where = ChannelRef("console", "local", "bench")
        for arxiv_id, title in PAPERS:
            started = time.perf_counter()
            added = services.core.handle(Incoming(where, member, f"add {arxiv_id}"))
            stored = time.perf_counter()
            services.search.current()  # the new revision: what `add` itself does next
            indexed = time.perf_counter()
            found = services.core.handle(Incoming(where, member, f"search {title}"))
            done = time.perf_counter()
            assert added.ok and found.cards[0].paper_id == added.cards[0].paper_id, found.text
            timings.append((stored - started, indexed - stored, done - indexed, services.library.count()))
    services.db.dispose()
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=0, help="generated papers on top of the seeds")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="paperclub-add-bench-") as work:
        for add_s, index_s, search_s, papers in run(args.size, Path(work)):
            print(f"{papers:>9,} papers: fetch+store {add_s * 1000:7.1f} ms, index revision "
                  f"{index_s * 1000:8.1f} ms, search first hit {search_s * 1000:6.1f} ms, "
                  f"add to first hit {(add_s + index_s + search_s) * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
