"""Slow `add` lines on Discord hold up no one else's answer (issue 28, finding 1): the
core's work runs in threads, and adds waiting on pages must not take the threads every
other command is answered on."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor

from bot.adding.addresses import any_address
from bot.adding.providers import Providers
from bot.adding.web import ChatFetcher, ChatFetchPolicy
from tests.adding.slow_pages import SlowPages
from tests.discord.test_discord import Harness

BUDGET = 2.0
DEFAULT_THREADS = 6  # asyncio's default executor on a 2-core machine: min(32, cores + 4)
ADDERS = DEFAULT_THREADS + 2


def test_slow_adds_leave_other_members_answers_quick(seeded_copy):
    async def scenario(slow: SlowPages) -> tuple[float, list]:
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(DEFAULT_THREADS))
        bot = Harness(seeded_copy)
        fetcher = ChatFetcher(ChatFetchPolicy(timeout=BUDGET, spacing=0.0), addresses=any_address)
        bot.services.feature("adding").providers = Providers(fetcher=fetcher)
        try:
            adds = [asyncio.create_task(bot.use("add", user_id=100 + n, paper=slow.url("silent", n)))
                    for n in range(ADDERS)]
            # As many adds waiting on their pages as the default executor has threads.
            # (Waited for on a thread of the test's own: the default executor is what is measured.)
            with ThreadPoolExecutor(1) as waiter:
                waiting = await asyncio.get_running_loop().run_in_executor(
                    waiter, slow.wait_for_connections, DEFAULT_THREADS)
            assert waiting >= DEFAULT_THREADS
            started = time.monotonic()
            helped = await bot.use("help", user_id=7)
            took = time.monotonic() - started
            return took, [helped, *await asyncio.gather(*adds)]
        finally:
            bot.services.core.stop()
            bot.close()

    with SlowPages() as slow:
        took, (helped, *added) = asyncio.run(scenario(slow))
    assert took < 1.0, f"help was answered after {took:.2f} s"
    assert "paperclub commands" in _said(helped)
    assert all("timed out; try again" in _said(interaction) for interaction in added)


def _said(interaction) -> str:
    """Everything the member was shown: the answer in place of "thinking…", followups."""
    shown = [interaction.original] + [m for kind, m in interaction.events if kind == "followup"]
    return "\n".join(m.content or "" for m in shown if m is not None)
