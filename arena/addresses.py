"""Which network addresses the arena may call: global unicast only, unless private endpoints are
allowed for development. A bot's URL is checked with this when it is registered or changed
(``arena.endpoints``); the bot transport (``arena.transport``) checks every address a host
resolves to before it connects, and connects only to an address it checked, so a host
re-resolving to a private address (DNS rebinding) never gets a connection either.

>>> is_public(ipaddress.ip_address("93.184.216.34"))
True
>>> is_public(ipaddress.ip_address("::ffff:127.0.0.1"))
False
>>> ensure_public("bot.example", ["93.184.216.34", "10.0.0.1"])
Traceback (most recent call last):
...
arena.addresses.PrivateAddressError: the host 'bot.example' resolves to 10.0.0.1, a private, ...
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class PrivateAddressError(OSError):
    """A host that resolves to an address the arena does not call."""


def is_public(address: IPAddress) -> bool:
    """Whether ``address`` is a global unicast address, looking through IPv4-mapped, 6to4 and
    Teredo forms to the IPv4 address they carry."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address.teredo is not None:
            embedded = address.teredo[1]
        if embedded is not None:
            return is_public(embedded)
        if address.is_site_local:  # fec0::/10: deprecated, but still routed privately
            return False
    return address.is_global and not (
        address.is_multicast
        or address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_reserved
        or address.is_unspecified
    )


def ensure_public(host: str, addresses: Iterable[str]) -> None:
    """Raise :class:`PrivateAddressError` unless every one of the addresses ``host`` resolved
    to (text, an IPv6 zone ``%eth0`` allowed) is public."""
    for text in addresses:
        address = ipaddress.ip_address(text.split("%", 1)[0])
        if not is_public(address):
            raise PrivateAddressError(
                f"the host {host!r} resolves to {address}, a private, loopback, link-local or "
                "reserved address: the endpoint must be reachable on the public internet"
            )
