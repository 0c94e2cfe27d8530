"""Which network addresses a member's link may make paperclub connect to.

A pasted link names a host; its addresses are vetted before connecting, and the
connection goes to the vetted address itself (no second lookup an attacker's DNS could
answer differently). Loopback, private, link-local (169.254.169.254, the cloud metadata
service), reserved, multicast, unspecified and IPv4-mapped forms of them are refused:
a member must not be able to make the bot probe the operator's network.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable, Mapping

from bot.adding.settings import AddSettings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# allowed(address) -> True when paperclub may connect there on a member's behalf.
AddressPolicy = Callable[[IPAddress], bool]


def public_only(address: IPAddress) -> bool:
    """A global unicast address: nothing on the operator's own networks."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return public_only(address.ipv4_mapped)  # ::ffff:127.0.0.1 is 127.0.0.1
    return address.is_global and not (
        address.is_private or address.is_loopback or address.is_link_local or address.is_multicast
        or address.is_reserved or address.is_unspecified
    )


def any_address(_address: IPAddress) -> bool:
    return True


def policy_from_env(env: Mapping[str, str] = os.environ) -> AddressPolicy:
    """PAPERCLUB_FETCH_ALLOW_PRIVATE=1 lifts the rule (tests, deployments on a private
    network whose members link to internal pages)."""
    return any_address if AddSettings.from_env(env).fetch_allow_private else public_only
