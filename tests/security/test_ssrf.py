"""SSRF: with the development switch off, neither registration nor a match (``HttpSeat``) calls a
private, loopback, link-local, metadata or otherwise non-public address, in any spelling, through
any name; loopback listeners prove that no TCP connection is even opened. With the switch on,
loopback works."""

from __future__ import annotations

import dataclasses
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from flask import Flask

from arena.addresses import PrivateAddressError
from arena.bot_connection import connect_public
from arena.http_seat import HelloError, HttpSeat
from arena.transport import BotTransport
from bot_sdk.protocol import DecisionRequest, Status
from referee import Rules
from replays.log import SeatInfo
from service import Config, create_app
from tests.bot_sdk.bot_sdk_support import play_obs

HELLO = b'{"protocol": "gongzhu-bot/1", "name": "x", "version": "1"}'
LOOPBACK = [
    "127.0.0.1",
    "127.1",
    "2130706433",  # decimal
    "0x7f000001",  # hexadecimal
    "0177.0.0.1",  # octal
    "0.0.0.0",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "[::]",
    "localhost",
    "private.bot.example",  # resolves to 127.0.0.1 (see `names`)
]
"""Spellings that reach this machine: a listener on loopback would see the connection."""
ELSEWHERE = {
    "10.0.0.1": "10.0.0.1",
    "172.16.0.1": "172.16.0.1",
    "192.168.1.1": "192.168.1.1",
    "169.254.169.254": "169.254.169.254",  # cloud metadata
    "100.64.0.1": "100.64.0.1",  # carrier-grade NAT
    "224.0.0.1": "224.0.0.1",  # multicast
    "[::ffff:169.254.169.254]": "::ffff:a9fe:a9fe",  # IPv4-mapped metadata
    "[fe80::1]": "fe80::1",  # link-local
    "[fc00::1]": "fc00::1",  # unique local
    "[fec0::1]": "fec0::1",  # site-local (deprecated)
    "[2002:a9fe:a9fe::1]": "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
    "[2001:0:4136:e378:8000:63bf:f5ff:fffe]": "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo
    "[64:ff9b::a9fe:a9fe]": "64:ff9b::a9fe:a9fe",  # NAT64 of the metadata address
    "metadata.bot.example": "169.254.169.254",  # a name (see `names`)
}
"""Private addresses elsewhere (the URL's host, the address a connection would go to)."""
NAMES = {"private.bot.example": "127.0.0.1", "metadata.bot.example": "169.254.169.254"}


class Listener:
    """Loopback listeners (IPv4 and IPv6) that answer every request with a valid hello and
    count the connections they accept."""

    def __init__(self) -> None:
        self.accepted = 0
        self._stop = threading.Event()
        self._sockets = [self._listen(socket.AF_INET, "127.0.0.1")]
        self._sockets.append(self._listen(socket.AF_INET6, "::1"))
        self.ports = {s.family: s.getsockname()[1] for s in self._sockets}

    def url(self, host: str) -> str:
        family = socket.AF_INET6 if host in ("[::1]", "[::]") else socket.AF_INET
        return f"http://{host}:{self.ports[family]}/bot"

    def _listen(self, family: socket.AddressFamily, address: str) -> socket.socket:
        sock = socket.socket(family)
        sock.bind((address, 0))
        sock.listen(16)
        sock.settimeout(0.05)
        threading.Thread(target=self._serve, args=(sock,), daemon=True).start()
        return sock

    def _serve(self, sock: socket.socket) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = sock.accept()
            except (TimeoutError, OSError):
                continue
            self.accepted += 1
            with conn:
                conn.settimeout(1)
                head = b""
                while b"\r\n\r\n" not in head and (chunk := conn.recv(65536)):
                    head += chunk
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(HELLO), HELLO)
                )

    def close(self) -> None:
        self._stop.set()
        for sock in self._sockets:
            sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    running = Listener()
    yield running
    running.close()


@pytest.fixture
def connects(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every address a socket of this process tries to connect to, from now on; and the test
    names of :data:`NAMES` resolve to their private addresses."""
    tried: list[tuple[str, int]] = []
    connect, getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def spy(self: socket.socket, address: Any) -> None:
        tried.append((str(address[0]), int(address[1])))
        connect(self, address)

    def resolve(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        return getaddrinfo(NAMES.get(host, host), port, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", spy)
    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    return tried


def _client(config: Config, *, allow_private: bool) -> Any:
    app: Flask = create_app(dataclasses.replace(config, allow_private_endpoints=allow_private))
    return app.test_client()


def _register(config: Config, url: str, *, allow_private: bool) -> Any:
    """Register a bot at ``url`` and verify its endpoint: the refusal, or the verification's
    answer."""
    client = _client(config, allow_private=allow_private)
    body = {"name": "probe", "endpoint": url, "contact": "me@x.org"}
    made = client.post("/api/bots", json=body)
    if made.status_code != 201:
        return made
    auth = {"Authorization": f"Bearer {made.json['token']}"}
    return client.post(f"/api/bots/{made.json['bot']['id']}/verify-endpoint", headers=auth)


@contextmanager
def _seat(url: str, *, allow_private: bool) -> Iterator[HttpSeat]:
    seat = HttpSeat(
        SeatInfo(0, "bot-x", "x"), BotTransport(url, ["s3cret"], allow_private=allow_private)
    )
    try:
        yield seat
    finally:
        seat.close()


def _hello(seat: HttpSeat) -> Any:
    return seat.hello(
        match_id="m-1", rules=Rules(), time_limit_ms=1000, time_bank_ms=1000, timeout_s=1.0
    )


def _ask(seat: HttpSeat) -> Any:
    return seat.ask(DecisionRequest(play_obs(), "m-1", "m-1:1:0", 500, 0))


def _refused(message: str) -> bool:
    return "resolves to" in message and "public internet" in message


ALL_FORMS = [*LOOPBACK, *ELSEWHERE]


@pytest.mark.parametrize("host", ALL_FORMS)
def test_registration_refuses_every_private_form(
    config: Config, listener: Listener, connects: list[tuple[str, int]], host: str
) -> None:
    response = _register(config, listener.url(host), allow_private=False)
    assert response.status_code == 422, response.json
    assert response.json["error"] == "invalid"
    assert _refused(response.json["errors"]["endpoint"][0]), response.json
    assert listener.accepted == 0
    assert ELSEWHERE.get(host) not in {address for address, _ in connects}


@pytest.mark.parametrize("host", ALL_FORMS)
def test_match_calls_refuse_every_private_form_before_connecting(
    listener: Listener, connects: list[tuple[str, int]], host: str
) -> None:
    with _seat(listener.url(host), allow_private=False) as seat:
        with pytest.raises(HelloError) as refused:
            _hello(seat)
        reply = _ask(seat)
    assert _refused(str(refused.value)), refused.value
    assert reply.status is Status.ERROR and _refused(reply.fault or ""), reply.fault
    assert listener.accepted == 0
    assert ELSEWHERE.get(host) not in {address for address, _ in connects}


@pytest.mark.parametrize("host", LOOPBACK)
def test_the_development_switch_allows_loopback(
    config: Config, listener: Listener, connects: list[tuple[str, int]], host: str
) -> None:
    response = _register(config, listener.url(host), allow_private=True)
    assert response.status_code == 200, response.json
    with _seat(listener.url(host), allow_private=True) as seat:
        assert _hello(seat).version == "1"
    assert listener.accepted == 2
    assert len([port for _, port in connects if port in listener.ports.values()]) == 2


def test_dns_rebinding_is_refused_at_connect_time(
    config: Config, listener: Listener, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The name resolves to a public address when registration and the verification check it
    and to loopback when the handshake connects: refused, and the loopback listener sees
    nothing."""
    answers = iter(["93.184.216.34", "93.184.216.34", "127.0.0.1"])
    getaddrinfo = socket.getaddrinfo

    def rebinding(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "rebind.bot.example":
            return getaddrinfo(next(answers), port, *args, **kwargs)
        return getaddrinfo(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    response = _register(config, listener.url("rebind.bot.example"), allow_private=False)
    assert response.status_code == 422 and response.json["error"] == "handshake_failed"
    message = response.json["errors"]["endpoint"][0]
    assert "resolves to 127.0.0.1" in message and "public internet" in message
    assert listener.accepted == 0


def test_a_connection_goes_to_the_address_that_was_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The name is resolved once per connection: a second answer (rebinding between check and
    connect) is never asked for, and the socket connects to the checked address."""
    answers = iter(["93.184.216.34", "127.0.0.1"])
    tried: list[Any] = []
    getaddrinfo = socket.getaddrinfo

    def rebinding(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        return getaddrinfo(next(answers), port, *args, **kwargs)

    def refuse(self: socket.socket, address: Any) -> None:
        tried.append(address)
        raise ConnectionRefusedError

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    with pytest.raises(ConnectionRefusedError):
        connect_public("rebind.bot.example", 80, 1.0)
    assert tried == [("93.184.216.34", 80)]
    with pytest.raises(PrivateAddressError, match=r"127\.0\.0\.1"):
        connect_public("rebind.bot.example", 80, 1.0)
    assert tried == [("93.184.216.34", 80)]  # no second attempt


def test_every_address_of_a_name_must_be_public(monkeypatch: pytest.MonkeyPatch) -> None:
    """One private address among public ones refuses the name (no partial trust)."""
    getaddrinfo = socket.getaddrinfo

    def mixed(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        public = getaddrinfo("93.184.216.34", port, *args, **kwargs)
        return public + getaddrinfo("10.0.0.1", port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", mixed)
    with pytest.raises(PrivateAddressError, match=r"10\.0\.0\.1"):
        connect_public("mixed.bot.example", 80, 1.0)
