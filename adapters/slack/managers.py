"""Who may manage a channel on Slack, asked only when a command line needs to know.

Slack has no per-command permissions, so managers are workspace admins and owners
(users.info) and the ids in PAPERCLUB_SLACK_MANAGERS. users.info is called inside the
3-second ack, so it is called only for a line the core says may need the answer
(`core.route(line).needs_rights`), with a short timeout and no retry: a 429 or a slow
Slack makes that one command answer as for a member ("Only channel managers can ..."),
never every command of a new member.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

log = logging.getLogger(__name__)

MANAGER_CACHE_SECONDS = 300.0  # an admin's rights, as users.info reported them
LOOKUP_SECONDS = 1.5  # users.info inside the 3-second ack: the rest is the answer's


class Managers:
    """Workspace admins and owners (users.info, cached for a few minutes, so a demoted
    admin keeps the right that long at most) and the ids in PAPERCLUB_SLACK_MANAGERS."""

    def __init__(
        self,
        allowlist: frozenset[str],
        ttl: float = MANAGER_CACHE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        timeout: float = LOOKUP_SECONDS,
    ):
        self.allowlist = allowlist
        self.ttl = ttl
        self.clock = clock
        self.timeout = timeout
        self._known: dict[tuple[str, str], tuple[bool, float]] = {}

    def is_manager(self, client: WebClient, team_id: str, user_id: str) -> bool:
        if user_id in self.allowlist:
            return True
        now = self.clock()
        known = self._known.get((team_id, user_id))
        if known is not None and known[1] > now:
            return known[0]
        answer = self._ask(client, user_id)
        if answer is not None:
            self._known[(team_id, user_id)] = (answer, now + self.ttl)
        return bool(answer)

    def _ask(self, client: WebClient, user_id: str) -> bool | None:
        """users.info once, within the timeout; None when Slack did not answer."""
        # Not the request's client: that one waits out a 429 (Retry-After) and retries
        # failed connections, which the 3-second ack has no time for.
        quick = WebClient(token=client.token, base_url=client.base_url, timeout=self.timeout, retry_handlers=[])
        try:
            user = quick.users_info(user=user_id)["user"]
        except (SlackApiError, OSError) as problem:
            # Not cached: the next command asks again instead of locking an admin out.
            log.warning("users.info for %s failed (%s): treated as a member", user_id, _error(problem))
            return None
        return bool(user.get("is_admin") or user.get("is_owner"))


def _error(problem: Exception) -> str:
    if isinstance(problem, SlackApiError):
        return str(problem.response.get("error", problem))
    return type(problem).__name__ if not str(problem) else str(problem)
