"""Where discord.py talks to: Discord itself, unless DISCORD_API_URL says otherwise.

Tests point the bot at a fake Discord on 127.0.0.1 (tests/fake_discord_api.py), and
a deployment may put a self-hosted proxy in front of Discord's REST API. By default
nothing here runs and discord.py uses https://discord.com/api/v10 and
wss://gateway.discord.gg.

discord.py has no setting for this, so `use_api_url` sets two class attributes,
process-wide:

- `discord.http.Route.BASE`: every REST call, and the interaction responses and
  followups too (discord.webhook builds its requests from the same Route).
- `discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY`: a plain discord.Client never asks
  GET /gateway/bot where the gateway is (only an AutoShardedClient without a shard count
  does); it connects to this constant. So the gateway's address is asked once here,
  from the API's GET /gateway, which needs no token (Discord's "Get Gateway"). A REST-only
  proxy passes that through and answers with Discord's own gateway; a fake answers with
  its own. discord.py adds `?v=10&encoding=json&compress=zlib-stream` itself, and resumes
  at the `resume_gateway_url` the gateway's READY names.
"""

from __future__ import annotations

import json
import urllib.request
from urllib.parse import urlsplit

import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route

from bot.ops.settings import ConfigError

GATEWAY_LOOKUP_SECONDS = 10.0


def use_api_url(url: str, gateway: bool = True) -> None:
    """Send discord.py's REST calls to `url` (e.g. http://127.0.0.1:8080/api/v10, with
    the API version in the path as Discord's own URL has it) and connect to the gateway
    that `url`'s GET /gateway names. Raises ConfigError, naming DISCORD_API_URL, for a URL
    that is not http(s) with a host, or an API that does not say where its gateway is.
    `gateway=False`: REST only (`discord sync` never connects to the gateway), so nothing
    is asked here and an unreachable API shows up at the first real call."""
    base = url.strip().rstrip("/")
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"DISCORD_API_URL={url!r} is not an http(s) URL with a host, "
            "e.g. http://127.0.0.1:8080/api/v10 (unset it to use Discord's own API)"
        )
    if gateway:
        DiscordWebSocket.DEFAULT_GATEWAY = _gateway_url(base)
    Route.BASE = base


def _gateway_url(base: str) -> yarl.URL:
    # No proxies from the environment: discord.py's own aiohttp session ignores them too.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"{base}/gateway", timeout=GATEWAY_LOOKUP_SECONDS) as response:
            gateway = json.loads(response.read())["url"]
    except (OSError, ValueError, KeyError, TypeError) as problem:  # URLError is an OSError
        raise ConfigError(
            f"DISCORD_API_URL={base!r}: GET {base}/gateway did not say where the gateway is ({problem})"
        ) from None
    if not isinstance(gateway, str) or urlsplit(gateway).scheme not in ("ws", "wss"):
        raise ConfigError(f"DISCORD_API_URL={base!r}: GET /gateway named {gateway!r}, not a ws(s) URL")
    return yarl.URL(gateway)
