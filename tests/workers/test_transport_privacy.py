"""A bot's endpoint is its owner's only: what a match's transport says (a fault of the sealed
log, the fault feed, a hello that failed) never names the endpoint's host, address, port or
path, whatever the network or the bot put in the words it quotes; what the owner's own checks
say (the endpoint check, the doctor) names the endpoint, to act on. (The same through a whole
tournament of hostile bots, its logs, pages and API: tests/reliability/test_hostile_bots.py.)"""

from __future__ import annotations

import errno
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import pytest

from arena.doctor import examine
from arena.http_seat import HttpSeat
from arena.transport import HIDDEN, BotTransport, HelloError, handshake, hide_endpoint
from bot_sdk.protocol import DecisionRequest, Status, hello_request
from replays.log import SeatInfo
from tests.bot_sdk.bot_sdk_support import play_obs
from tests.workers.test_transport import (
    PUBLIC,
    Net,
    TlsPair,
    answers,
    bot,
    closed_port,
    public_bot,
    response,
    routed_net,
    tls_pair,
)

SECRET_PATH = "/gz/k3y-7f3a9c"
"""A recognisable path: an endpoint's path may be all that keeps it from strangers."""
REQUEST = DecisionRequest(
    play_obs(), match_id="m", decision_id="d", time_limit_ms=300, time_bank_ms=200
)


@pytest.fixture
def net(monkeypatch: pytest.MonkeyPatch) -> Net:
    return routed_net(monkeypatch)


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> TlsPair:
    """TLS for another name than the bot's (its certificate does not match)."""
    return tls_pair("other.bot.example", tmp_path_factory.mktemp("privacy-tls"))


def _private(url: str) -> list[str]:
    """What of ``url`` a public message must not show."""
    parts = urlsplit(url)
    return [url, parts.netloc, parts.hostname or "", f":{parts.port}", SECRET_PATH, PUBLIC]


def _hello(url: str, **options: object) -> str:
    transport = BotTransport(url, ["s"], **options)  # type: ignore[arg-type]
    try:
        transport.hello(hello_request(), 2.0)
    except HelloError as error:
        return str(error)
    finally:
        transport.close()
    raise AssertionError("the hello was answered")


def _fault(url: str, **options: object) -> str:
    transport = BotTransport(url, ["s"], **options)  # type: ignore[arg-type]
    seat = HttpSeat(SeatInfo(0, "bot_x", "x", "1"), transport)
    try:
        reply = seat.ask(REQUEST)
    finally:
        seat.close()
    assert reply.status is not Status.OK and reply.fault is not None
    return reply.fault


def _assert_public(message: str, url: str) -> None:
    leaked = [part for part in _private(url) if part in message]
    assert not leaked, (leaked, message)


def _echo_where(conn: socket.socket, n: int) -> bool:
    """An error page naming the address, port and path it was asked at, as web servers'."""
    page = f"Not Found: the requested URL http://127.0.0.1:{conn.getsockname()[1]}{SECRET_PATH}"
    conn.sendall(response(page.encode(), "404 Not Found"))
    return True


def _redirect_to_itself(conn: socket.socket, n: int) -> bool:
    """An http -> https redirect to its own host, port and path (the usual one)."""
    where = f"https://127.0.0.1:{conn.getsockname()[1]}{SECRET_PATH}"
    conn.sendall(response(b"", "301 Moved Permanently", Location=where))
    return True


def _hang_up(conn: socket.socket, n: int) -> bool:
    conn.shutdown(socket.SHUT_RDWR)
    return False


@contextmanager
def served(handle: Callable[[socket.socket, int], bool]) -> Iterator[str]:
    """A bot on loopback that answers with ``handle``; its URL, on the secret path."""
    with bot(handle) as running:
        yield f"http://127.0.0.1:{running.port}{SECRET_PATH}"


QUOTING = {"error page": _echo_where, "redirect": _redirect_to_itself, "hang-up": _hang_up}
"""Bots whose failures quote what names the endpoint: their words, or the network's."""


@pytest.mark.parametrize("handle", QUOTING.values(), ids=QUOTING)
def test_a_match_s_fault_and_hello_never_name_the_endpoint(
    handle: Callable[[socket.socket, int], bool],
) -> None:
    with served(handle) as url:
        fault, hello = _fault(url, allow_private=True), _hello(url, allow_private=True)
    for message in (fault, hello):
        _assert_public(message, url)
    assert "the bot's endpoint" in hello


@pytest.mark.parametrize("handle", QUOTING.values(), ids=QUOTING)
def test_its_owner_s_checks_name_the_endpoint(handle: Callable[[socket.socket, int], bool]) -> None:
    """The endpoint check and the doctor are answered to the bot's owner: the endpoint is
    named, and what the bot or the network said is quoted whole."""
    with served(handle) as url:
        with pytest.raises(HelloError) as checked:
            handshake(url, ["s"], timeout_s=2.0, allow_private=True)
        report = examine(url, ["s"], allow_private=True, hello_timeout_s=2.0)
    assert f"the bot at {url}" in str(checked.value)
    assert HIDDEN not in str(checked.value)
    hello = report.checks[0]
    assert (report.endpoint, hello.name, hello.ok) == (url, "hello", False)
    assert hello.detail == str(checked.value)


def test_a_refused_connection_is_the_bot_s_endpoint_refusing() -> None:
    url = f"http://127.0.0.1:{closed_port()}{SECRET_PATH}"
    refused = "connection refused (is the bot running, on that port?)"
    assert _fault(url, allow_private=True) == f"could not reach the bot's endpoint: {refused}"
    assert _hello(url, allow_private=True) == f"could not connect to the bot's endpoint: {refused}"
    assert _hello(url, allow_private=True, named=True).startswith(
        f"could not connect to the bot at {url}: connection refused"
    )


def test_a_private_address_is_refused_without_saying_which(net: Net) -> None:
    net.names["inside.bot.example"] = ["10.1.2.3"]
    url = f"http://inside.bot.example:9000{SECRET_PATH}"
    fault = _fault(url, allow_private=False)
    assert fault.startswith("could not reach the bot's endpoint: the host '[hidden]' resolves")
    assert "10.1.2.3" not in fault and "inside" not in fault
    assert "resolves to 10.1.2.3" in _hello(url, allow_private=False, named=True)
    assert net.attempts == []


def test_a_certificate_for_another_name_does_not_name_the_endpoint(net: Net, tls: TlsPair) -> None:
    with bot(answers(response(b"{}")), tls[0]) as running:
        url = public_bot(net, running).replace("http:", "https:").replace("/bot", SECRET_PATH)
        fault = _fault(url, allow_private=False, tls=tls[1])
    assert "the TLS handshake failed" in fault and "CERTIFICATE_VERIFY_FAILED" in fault, fault
    _assert_public(fault, url)


def test_a_body_is_hidden_before_its_excerpt_is_cut() -> None:
    """A host cut in two by the excerpt's end would not be recognised any more."""
    page = b"x" * 295 + b" at 127.0.0.1"
    with served(lambda conn, n: bool(conn.sendall(response(page, "404 Nope"))) or True) as url:
        hello = _hello(url, allow_private=True)
    assert (
        hello == "the bot's endpoint answered the hello with HTTP 404: " + "x" * 295 + " at [\u2026"
    )


def test_a_name_that_does_not_resolve_is_not_named(monkeypatch: pytest.MonkeyPatch) -> None:
    def resolve(host: str, *args: object, **kwargs: object) -> object:
        raise socket.gaierror(errno.EAGAIN, f"Temporary failure resolving {host}")

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    url = f"http://dns.bot.example{SECRET_PATH}"
    fault = _fault(url)
    assert fault.startswith("could not reach the bot's endpoint: Failed to resolve '[hidden]'")
    _assert_public(fault, url)


@pytest.mark.parametrize(
    ("endpoint", "text", "shown"),
    [
        ("http://bot.example/p", "at BOT.Example:80", "at [hidden]"),
        ("http://bot.example/p", "see http://bot.example/p now", "see [hidden] now"),
        ("http://bot.example/p", "GET /p HTTP/1.1", "GET [hidden] HTTP/1.1"),
        (f"http://{'a' * 64}.example/p", f"no {'A' * 64}.example", "no [hidden]"),
        ("https://bücher.example/p", "xn--bcher-kva.example said no", "[hidden] said no"),
        ("http://bot.example/p", "from 10.9.8.7:8080.", "from [hidden]."),
        ("http://bot.example/p", "from [2001:db8::1]:443 and ::1", "from [hidden] and [hidden]"),
        ("http://bot.example/p?token=abc", "token=abc was wrong", "[hidden] was wrong"),
        ("http://bot.example/", "GET / HTTP/1.1", "GET / HTTP/1.1"),
        (
            "http://bot.example/p",
            "v1.2.3 at 12:30:45, std::vector",
            "v1.2.3 at 12:30:45, std::vector",
        ),
        (
            "http://bot.example/p",
            "no 1.2.3.4.5 or 300.1.1.1 either",
            "no 1.2.3.4.5 or 300.1.1.1 either",
        ),
    ],
    ids=[
        "any-case",
        "whole-url",
        "path",
        "not-idna",
        "idna",
        "address-and-port",
        "ipv6",
        "query",
        "root-path",
        "no-address",
        "not-addresses",
    ],
)
def test_what_is_hidden(endpoint: str, text: str, shown: str) -> None:
    assert hide_endpoint(text, endpoint) == shown
