"""Where a match's deals come from, and the check that they came from there.

A rated match is dealt from a **committed secret**: 32 bytes the arena draws from the operating
system's CSPRNG when the tournament (or human game) is created and keeps to itself. Its
commitment, the SHA-256 of the secret, is public from the start; the secret is revealed when the
tournament ends. Each deal sequence of the tournament has a public **label** (``"t1:d1"``: table
1, first deal sequence; the seat rotations of a duplicate deal share it), and its seed is the
HMAC-SHA256 of the label keyed with the secret, as lowercase hex. The hands are then dealt from
that seed by :func:`referee.deal.deal_from_seed`. A verifier in any language needs SHA-256,
HMAC-SHA256 and SHAKE-256:

>>> secret = bytes(range(32))
>>> commitment_of(secret)
'630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd'
>>> seed = deal_seed(secret, "t1:d1")
>>> seed
'7452fd7fed5a13850cb425fe0502b7919a253cb6b88144559149918f6f35f6ab'
>>> from referee import CardSet
>>> from referee.deal import deal_from_seed
>>> str(CardSet(deal_from_seed(seed, 1)[0]))
'8C QC AD 2H 3H 5H 6H 3S 5S 8S 9S TS AS'

Without the secret, nothing public (the label, the match or tournament id, the schedule) tells
anything about a deal; with it, anyone can check every deal of every match of the tournament.

The other sources: a **practice** seed chosen by a client (a human game started with ``seed``),
public from the start, its deals checkable from it; and **unchecked**, logs written before deals
were committed (format 1), whose seed was recorded for information only.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee.cards import CardSet
from referee.deal import deal_from_seed

SECRET_BYTES = 32
"""The size of a drawn secret: 256 bits."""


class DealScheme(enum.StrEnum):
    COMMITTED = "committed"
    """Seeds derived from a secret whose commitment was public before the first deal."""
    PRACTICE = "practice"
    """A seed the client chose (public, so the deals were known in advance): never rated."""
    UNCHECKED = "unchecked"
    """A log from before committed deals: its seed is informative, its deals are not checked."""


class SecretError(ValueError):
    """A secret that is not 32 bytes of hex, or that is not the one committed to."""


def draw_secret() -> bytes:
    """A new secret from the operating system's CSPRNG."""
    return secrets.token_bytes(SECRET_BYTES)


def commitment_of(secret: bytes) -> str:
    """The public commitment to ``secret``: its SHA-256, lowercase hex."""
    return hashlib.sha256(secret).hexdigest()


def deal_seed(secret: bytes, label: str) -> str:
    """The seed of the deal sequence ``label``: HMAC-SHA256(secret, label), lowercase hex."""
    return hmac.new(secret, label.encode("utf-8"), hashlib.sha256).hexdigest()


def parse_secret(text: str) -> bytes:
    """A revealed secret from its hex form (as the API and the page show it)."""
    try:
        secret = bytes.fromhex(text.strip())
    except ValueError:
        raise SecretError("a deal secret is 64 hexadecimal characters") from None
    if len(secret) != SECRET_BYTES:
        raise SecretError(f"a deal secret is {SECRET_BYTES} bytes (64 hex characters)")
    return secret


@dataclass(frozen=True)
class DealSource:
    """A log's ``deals`` field: where its deals came from."""

    scheme: DealScheme
    commitment: str | None = None
    label: str | None = None
    secret: str | None = None
    """The secret in hex, when it was already revealed as the log was sealed (a human game's
    log is sealed when the game ends); a tournament reveals it when the tournament ends."""
    seed: str | None = None
    """The seed itself: practice and unchecked deals only."""

    @classmethod
    def committed(cls, secret: bytes, label: str, *, reveal: bool = False) -> DealSource:
        return cls(
            DealScheme.COMMITTED,
            commitment=commitment_of(secret),
            label=label,
            secret=secret.hex() if reveal else None,
        )

    @classmethod
    def practice(cls, seed: str) -> DealSource:
        return cls(DealScheme.PRACTICE, seed=seed)

    def to_json(self) -> dict[str, Any]:
        return {
            "scheme": self.scheme.value,
            "commitment": self.commitment,
            "label": self.label,
            "secret": self.secret,
            "seed": self.seed,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DealSource:
        return cls(
            DealScheme(data["scheme"]),
            commitment=data.get("commitment"),
            label=data.get("label"),
            secret=data.get("secret"),
            seed=data.get("seed"),
        )

    def seed_with(self, secret: bytes | None = None) -> str | None:
        """The seed the deals follow from: the practice seed, or the committed secret's (the
        revealed ``secret`` given, else the one in the log); None when it cannot be known.
        :class:`SecretError` for a secret that is not the committed one."""
        if self.scheme is DealScheme.PRACTICE:
            return self.seed
        if self.scheme is not DealScheme.COMMITTED:
            return None
        if secret is None and self.secret is not None:
            secret = parse_secret(self.secret)
        if secret is None:
            return None
        if not hmac.compare_digest(commitment_of(secret), self.commitment or ""):
            raise SecretError(
                f"the secret does not match the commitment {self.commitment}: its SHA-256 is "
                f"{commitment_of(secret)}"
            )
        assert self.label is not None
        return deal_seed(secret, self.label)


def first_wrong_deal(seed: str, deals: Sequence[Sequence[CardSet]]) -> int | None:
    """The number (from 1) of the first hand whose deal is not the one ``seed`` gives."""
    for number, deal in enumerate(deals, start=1):
        if tuple(hand.mask for hand in deal) != deal_from_seed(seed, number):
            return number
    return None
