"""Request signing: the arena proves each request is its own, and recent.

The signature is HMAC-SHA256, keyed with the bot's signing secret, over the timestamp, a dot and
the exact body bytes; it travels as hex in ``X-Gongzhu-Signature: v1=<hex>`` beside
``X-Gongzhu-Timestamp: <unix seconds>``. Signing the timestamp makes a captured request useless
once it is stale.

During a secret rotation the arena may sign with both secrets (``v1=<a>,v1=<b>``) and a bot may
accept several secrets: one match is enough.

>>> headers = sign("s3cret", b'{"type":"hello"}', 1767225600)
>>> headers["X-Gongzhu-Signature"][:10]
'v1=8f87d56'
>>> verify(["old", "s3cret"], headers, b'{"type":"hello"}', now=1767225630)
>>> verify("s3cret", headers, b'{"type":"hello!"}', now=1767225630)
Traceback (most recent call last):
...
bot_sdk.signing.SignatureError: bad signature: no v1 signature matches this bot's secret ...
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping

TIMESTAMP_HEADER = "X-Gongzhu-Timestamp"
SIGNATURE_HEADER = "X-Gongzhu-Signature"
SCHEME = "v1"
DEFAULT_TOLERANCE_S = 300

Secret = str | bytes
Secrets = Secret | Iterable[Secret]


class SignatureError(Exception):
    """A request whose signature headers are missing, stale or wrong."""


def signature(secret: Secret, body: bytes, timestamp: int) -> str:
    """The hex HMAC-SHA256 of ``f"{timestamp}."`` followed by ``body``."""
    return hmac.new(_key(secret), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def sign(secret: Secrets, body: bytes, timestamp: int) -> dict[str, str]:
    """The two headers for ``body`` sent at ``timestamp``, one ``v1=`` entry per secret."""
    return Signer(secret).sign(body, timestamp)


class Signer:
    """:func:`sign` for many bodies with the same secrets: each secret's HMAC is keyed once
    and copied for every body, rather than keyed again for each."""

    def __init__(self, secret: Secrets) -> None:
        self._keyed = [hmac.new(_key(s), digestmod=hashlib.sha256) for s in _secrets(secret)]

    def sign(self, body: bytes, timestamp: int) -> dict[str, str]:
        """The two headers for ``body`` sent at ``timestamp``, one ``v1=`` entry per secret."""
        return {TIMESTAMP_HEADER: str(timestamp), SIGNATURE_HEADER: self.entries(body, timestamp)}

    def entries(self, body: bytes, timestamp: int) -> str:
        """The :data:`SIGNATURE_HEADER`'s value for ``body`` sent at ``timestamp``."""
        stamp = f"{timestamp}.".encode()
        entries = []
        for keyed in self._keyed:
            mac = keyed.copy()
            mac.update(stamp)
            mac.update(body)
            entries.append(f"{SCHEME}={mac.hexdigest()}")
        return ",".join(entries)


def verify(
    secret: Secrets,
    headers: Mapping[str, str],
    body: bytes,
    now: float,
    tolerance_s: float = DEFAULT_TOLERANCE_S,
) -> None:
    """Raise :class:`SignatureError` unless ``headers`` sign ``body`` with one of the secrets and
    a timestamp within ``tolerance_s`` of ``now`` (header names are case-insensitive)."""
    secrets = _secrets(secret)
    lowered = {name.lower(): value for name, value in headers.items()}
    stamp = lowered.get(TIMESTAMP_HEADER.lower())
    offered = lowered.get(SIGNATURE_HEADER.lower())
    if stamp is None:
        raise SignatureError(f"missing {TIMESTAMP_HEADER} header")
    if offered is None:
        raise SignatureError(f"missing {SIGNATURE_HEADER} header")
    if not stamp.isascii() or not stamp.isdigit():
        raise SignatureError(f"{TIMESTAMP_HEADER} must be whole unix seconds, not {stamp!r}")
    timestamp = int(stamp)
    if abs(now - timestamp) > tolerance_s:
        raise SignatureError(
            f"stale timestamp: {timestamp} is {abs(now - timestamp):.0f} s from this server's "
            f"clock ({now:.0f}); more than {tolerance_s:g} s (check both clocks)"
        )
    candidates = [
        value.strip().encode("utf-8", "replace")
        for scheme, _, value in (entry.strip().partition("=") for entry in offered.split(","))
        if scheme == SCHEME
    ]
    if not candidates:
        raise SignatureError(f"{SIGNATURE_HEADER} has no {SCHEME}= signature")
    for key in secrets:
        expected = signature(key, body, timestamp).encode()
        # Compare against every candidate without stopping early: no timing hint either way.
        matches = [hmac.compare_digest(expected, candidate) for candidate in candidates]
        if any(matches):
            return
    raise SignatureError(
        f"bad signature: no {SCHEME} signature matches this bot's secret "
        "(wrong secret, or the body was changed on the way)"
    )


def _key(secret: Secret) -> bytes:
    return secret.encode("utf-8") if isinstance(secret, str) else secret


def _secrets(secret: Secrets) -> list[Secret]:
    secrets = [secret] if isinstance(secret, str | bytes) else list(secret)
    if not secrets or any(not s for s in secrets):
        raise ValueError("a signing secret must be a non-empty string or bytes")
    return secrets
