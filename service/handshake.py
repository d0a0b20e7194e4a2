"""The registration handshake: a signed ``hello`` to a bot's endpoint, and exactly why it failed.

One short attempt: no redirects, no proxies from the environment, a whole-call deadline and a
cap on the answer's size.
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import requests
import urllib3

from bot_sdk.protocol import BotInfo, MalformedAnswer, encode, hello_request, parse_hello_answer
from bot_sdk.signing import sign
from workers.bot_client import connection_reason, excerpt

MAX_ANSWER_BYTES = 64 * 1024


class HandshakeError(Exception):
    """The bot did not complete the handshake; the message says what happened."""


def hello(url: str, secret: str, *, timeout_s: float) -> BotInfo:
    """Shake hands with the bot at ``url``, signing with ``secret``; its name and version."""
    body = encode(hello_request())
    headers = {"Content-Type": "application/json", **sign(secret, body, int(time.time()))}
    deadline = time.monotonic() + timeout_s
    where = _where(url)
    with requests.Session() as session:
        session.trust_env = False
        try:
            response = session.post(
                url,
                data=body,
                headers=headers,
                timeout=(timeout_s, timeout_s),
                allow_redirects=False,
                stream=True,
            )
            with response:
                content = _read(response, deadline, timeout_s)
        except (requests.Timeout, urllib3.exceptions.TimeoutError):
            raise HandshakeError(
                f"{where} did not answer the hello within {timeout_s:g} s"
            ) from None
        except (requests.ConnectionError, urllib3.exceptions.ProtocolError) as error:
            raise HandshakeError(
                f"could not connect to {where}: {connection_reason(error)}"
            ) from None
    if 300 <= response.status_code < 400:
        target = response.headers.get("Location", "?")
        raise HandshakeError(
            f"{where} answered HTTP {response.status_code} redirecting to {target}: the arena "
            "does not follow redirects; register the final URL"
        )
    if not 200 <= response.status_code < 300:
        raise HandshakeError(
            f"{where} answered the hello with HTTP {response.status_code}: {excerpt(content)}"
        )
    try:
        return parse_hello_answer(content)
    except MalformedAnswer as error:
        raise HandshakeError(f"{where} answered the hello wrongly: {error}") from None


def _read(response: requests.Response, deadline: float, timeout_s: float) -> bytes:
    """The body, read as it arrives: a bot dripping bytes is stopped at the deadline (plus at
    most one socket timeout), a bot sending too much at the size cap."""
    chunks: list[bytes] = []
    size = 0
    while chunk := response.raw.read1(4096):
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise HandshakeError(
                f"the hello answer is larger than {MAX_ANSWER_BYTES // 1024} KiB: answer "
                '{"protocol", "name", "version"} only'
            )
        if time.monotonic() > deadline:
            raise requests.Timeout(f"the answer took longer than {timeout_s:g} s")
        chunks.append(chunk)
    return b"".join(chunks)


def _where(url: str) -> str:
    parts = urlsplit(url)
    return f"the bot at {parts.scheme}://{parts.netloc}{parts.path}"
