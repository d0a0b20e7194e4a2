"""Which network addresses the arena may call: global unicast only, unless private endpoints are
allowed for development. The service checks a bot's URL with this at registration
(``service.endpoints``); the workers check every connection's peer with it at connect time
(``workers.bot_client``), so that a host re-resolving to a private address (DNS rebinding) is
refused too.

>>> is_public(ipaddress.ip_address("93.184.216.34"))
True
>>> is_public(ipaddress.ip_address("::ffff:127.0.0.1"))
False
"""

from __future__ import annotations

import ipaddress

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def is_public(address: IPAddress) -> bool:
    """Whether ``address`` is a global unicast address, looking through IPv4-mapped, 6to4 and
    Teredo forms to the IPv4 address they carry."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address.teredo is not None:
            embedded = address.teredo[1]
        if embedded is not None:
            return is_public(embedded)
    return address.is_global and not (
        address.is_multicast
        or address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_reserved
        or address.is_unspecified
    )
