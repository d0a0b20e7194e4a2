"""Which bot endpoint URLs the arena accepts: http(s), short, no credentials or fragment, and
(unless private endpoints are allowed for development) a host that resolves only to public
addresses, so that registering a bot cannot make the arena call into its own network.

>>> check_url("https://bot.example/play")
'https://bot.example/play'
>>> check_url("ftp://bot.example/")
Traceback (most recent call last):
...
arena.endpoints.EndpointError: the endpoint must be an http:// or https:// URL, not ftp://
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from arena.addresses import PrivateAddressError, ensure_public
from arena.errors import InvalidError

MAX_URL_LENGTH = 2048

Resolver = Callable[[str, int], Sequence[str]]


class EndpointError(InvalidError):
    """An endpoint the arena will not call; the message says why (a refusal of the
    ``endpoint`` field)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, field="endpoint")


def check_url(url: str) -> str:
    """``url`` if it is a well-formed endpoint URL, else :class:`EndpointError`."""
    if len(url) > MAX_URL_LENGTH:
        raise EndpointError(f"the endpoint URL is {len(url)} characters; at most {MAX_URL_LENGTH}")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise EndpointError(f"the endpoint is not a valid URL: {error}") from None
    if parts.scheme not in {"http", "https"}:
        raise EndpointError(
            f"the endpoint must be an http:// or https:// URL, not {parts.scheme or '(none)'}://"
        )
    if not parts.hostname:
        raise EndpointError("the endpoint URL has no host name")
    if parts.username is not None or parts.password is not None:
        raise EndpointError(
            "the endpoint URL must not carry credentials (user:password@): requests are signed"
        )
    if parts.fragment or url.endswith("#"):
        raise EndpointError("the endpoint URL must not have a #fragment")
    if any(c.isspace() for c in url):
        raise EndpointError("the endpoint URL must not contain spaces")
    if port == 0:
        raise EndpointError("the endpoint URL's port must be 1 to 65535")
    return url


def check_callable(url: str, *, allow_private: bool) -> str:
    """``url`` if the arena may call it: well-formed and, unless ``allow_private``, on a host
    with only public addresses; else :class:`EndpointError`."""
    check_url(url)
    if not allow_private:
        check_public(url)
    return url


def check_public(url: str, resolve: Resolver | None = None) -> None:
    """Raise :class:`EndpointError` unless every address the URL's host resolves to is public."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    addresses = (resolve or resolve_host)(host, port)
    if not addresses:
        raise EndpointError(f"the host {host!r} has no address")
    try:
        ensure_public(host, addresses)
    except PrivateAddressError as error:
        raise EndpointError(str(error)) from None


def resolve_host(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (a literal address resolves to itself)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise EndpointError(f"the host {host!r} cannot be resolved: {error}") from None
    return sorted({str(info[4][0]) for info in infos})
