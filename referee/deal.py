"""Dealing: from a seed, reproducibly in any language, or from explicit hands.

A seeded deal sorts the 52 cards by keys drawn from SHAKE-256, so a verifier in any language
can rebuild it:

- the key stream is the first 208 bytes of ``SHAKE-256(f"gongzhu-deal:{seed}:{hand}")``
  (UTF-8), read as 52 big-endian unsigned 32-bit words;
- card ``c`` (``c = suit * 13 + rank``, ``2C`` = 0 … ``AS`` = 51) gets key word ``c``;
- the cards are sorted by ``(key, c)``; seat ``s`` receives positions ``13 * s`` to ``13 * s + 12``.

The deal of hand ``n`` depends only on the seed and ``n``, never on play, which is what lets a
duplicate tournament give the same deals to every seat rotation.

>>> [str(CardSet(m)) for m in deal_from_seed(7, 1)][0]
'4C 6C 7C 7D TD 3H 6H 9H QH 2S 4S JS AS'
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Sequence
from typing import Final

from referee.cards import FULL_DECK, CardSet, cards_of

Deal = tuple[int, int, int, int]
"""Four hands as card masks, seat 0 first."""
Seed = int | str


class DealError(ValueError):
    """Explicit hands that are not a deal: 4 hands of 13 cards, each card exactly once."""


_KEYS: Final = struct.Struct(">52I")
# Bound once, read as C globals when compiled rather than looked up as attributes every deal.
_shake_256: Final = hashlib.shake_256
_unpack_keys: Final = _KEYS.unpack
_KEY_BYTES: Final = _KEYS.size


def deal_from_seed(seed: Seed, hand_number: int) -> Deal:
    """The deal of hand ``hand_number`` (from 1) of the match with this seed."""
    stream = _shake_256(f"gongzhu-deal:{seed}:{hand_number}".encode()).digest(_KEY_BYTES)
    # Sorting key * 64 + card sorts by (key, card). As floats (exact: 38 bits), since CPython
    # sorts floats with a fast comparison and ints this wide with the generic one.
    keys: tuple[int, ...] = _unpack_keys(stream)
    order = [float(key << 6 | card) for card, key in enumerate(keys)]
    order.sort()
    return _hand_of(order, 0), _hand_of(order, 13), _hand_of(order, 26), _hand_of(order, 39)


def _hand_of(order: list[float], start: int) -> int:
    mask = 0
    for i in range(start, start + 13):
        mask |= 1 << (int(order[i]) & 63)
    return mask


def parse_deal(hands: Sequence[CardSet | int | str | Iterable[str]]) -> Deal:
    """Four explicit hands (card sets, masks, or names) checked to be a complete deal."""
    if len(hands) != 4:
        raise DealError(f"a deal is 4 hands, not {len(hands)}")
    masks = [cards_of(h) for h in hands]
    seen = 0
    for seat, mask in enumerate(masks):
        if mask.bit_count() != 13:
            raise DealError(f"seat {seat} is dealt {mask.bit_count()} cards, not 13")
        if seen & mask:
            raise DealError(f"{CardSet(seen & mask)} dealt to more than one seat")
        seen |= mask
    assert seen == FULL_DECK
    return masks[0], masks[1], masks[2], masks[3]
