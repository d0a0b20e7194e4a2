"""Where deals come from: the secret's exact form, and which seed each kind of log's deals follow
(a committed secret's only with the secret that was committed to)."""

from __future__ import annotations

import dataclasses

import pytest

from referee import CardSet
from referee.deal import deal_from_seed
from replays.deals import (
    DealScheme,
    DealSource,
    SecretError,
    commitment_of,
    deal_seed,
    draw_secret,
    first_wrong_deal,
    parse_secret,
)

SECRET = bytes(range(32))


def test_a_drawn_secret_is_32_fresh_bytes() -> None:
    first, second = draw_secret(), draw_secret()
    assert len(first) == len(second) == 32
    assert first != second


def test_a_secret_is_read_back_from_its_hex_form() -> None:
    assert parse_secret(SECRET.hex()) == SECRET
    assert parse_secret(f"  {SECRET.hex().upper()}\n") == SECRET


@pytest.mark.parametrize("size", [0, 16, 31, 33, 64])
def test_a_secret_of_another_size_is_refused(size: int) -> None:
    with pytest.raises(SecretError, match=r"is 32 bytes \(64 hex characters\)"):
        parse_secret(bytes(size).hex())


@pytest.mark.parametrize("text", ["xyz", SECRET.hex()[:-1], "0x" + SECRET.hex()])
def test_a_secret_that_is_not_hex_is_refused(text: str) -> None:
    with pytest.raises(SecretError, match="64 hexadecimal characters"):
        parse_secret(text)


def test_committed_deals_follow_the_secret_given_or_revealed_in_the_log() -> None:
    hidden = DealSource.committed(SECRET, "t1:d2")
    assert hidden.secret is None
    assert hidden.seed_with() is None  # not yet revealed: the seed cannot be known
    assert hidden.seed_with(SECRET) == deal_seed(SECRET, "t1:d2")
    revealed = DealSource.committed(SECRET, "t1:d2", reveal=True)
    assert revealed.secret == SECRET.hex()
    assert revealed.seed_with() == deal_seed(SECRET, "t1:d2")
    assert DealSource.from_json(revealed.to_json()) == revealed


def test_committed_deals_refuse_a_secret_that_was_not_committed_to() -> None:
    other = bytes(32)
    source = DealSource.committed(SECRET, "t1:d1")
    message = f"does not match the commitment {commitment_of(SECRET)}: its SHA-256 is"
    with pytest.raises(SecretError, match=message):
        source.seed_with(other)
    lying = DealSource(DealScheme.COMMITTED, commitment_of(SECRET), "t1:d1", secret=other.hex())
    with pytest.raises(SecretError):
        lying.seed_with()


def test_practice_and_unchecked_seeds() -> None:
    practice = DealSource.practice("my-seed")
    assert practice.seed_with() == practice.seed_with(SECRET) == "my-seed"
    assert DealSource.from_json(practice.to_json()) == practice
    unchecked = DealSource(DealScheme.UNCHECKED, seed="informative")
    assert unchecked.seed_with(SECRET) is None


def test_a_deal_source_cannot_be_changed_once_made() -> None:
    source = DealSource.committed(SECRET, "t1:d1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        source.secret = SECRET.hex()  # type: ignore[misc]


def test_the_first_deal_not_from_the_seed_is_found_whichever_way_it_differs() -> None:
    seed = deal_seed(SECRET, "t1:d1")
    deals = [[CardSet(mask) for mask in deal_from_seed(seed, n)] for n in range(1, 9)]
    assert first_wrong_deal(seed, deals) is None
    directions = set()
    for n in range(8):
        changed = [list(deal) for deal in deals]
        changed[n][0], changed[n][1] = changed[n][1], changed[n][0]  # two hands swapped
        directions.add(changed[n][0].mask > changed[n][1].mask)
        assert first_wrong_deal(seed, changed) == n + 1
    assert directions == {True, False}  # a swap that sorts after the real deal, and one before
