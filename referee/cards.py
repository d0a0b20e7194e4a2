"""Cards, suits and card sets.

A card is a plain ``int`` from 0 to 51: ``suit * 13 + rank``, with ranks 0 (two) to 12 (ace)
and suits in the order clubs, diamonds, hearts, spades. A set of cards is an ``int`` bitmask
with bit ``card`` set; :class:`CardSet` wraps one with a set-like interface, the way
python-chess's ``SquareSet`` wraps a bitboard. At every boundary cards are written in the
two-character notation of the rule book: rank then suit, ``QS``, ``TC``, ``2H``.

>>> card = parse_card("QS")
>>> card_name(card), suit_of(card) is Suit.SPADES
('QS', True)
>>> hand = CardSet.parse("AH KH 2C QS")
>>> str(hand), len(hand), parse_card("KH") in hand
('2C KH AH QS', 4, True)
>>> str(hand & SUITS[Suit.HEARTS])
'KH AH'
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from typing import Final

Card = int
"""A card: ``suit * 13 + rank``, 0 to 51."""

RANK_CHARS: Final = "23456789TJQKA"
SUIT_CHARS: Final = "CDHS"


class Suit(enum.IntEnum):
    """The four suits, in the order of their bits."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3

    @property
    def char(self) -> str:
        return SUIT_CHARS[self]

    @property
    def plural(self) -> str:
        """The suit's name as a rule message uses it: ``"must follow clubs"``."""
        return self.name.lower()

    @property
    def singular(self) -> str:
        return self.name.lower()[:-1]


CARD_NAMES: Final[tuple[str, ...]] = tuple(r + s for s in SUIT_CHARS for r in RANK_CHARS)
_CARD_BY_NAME: Final[dict[str, Card]] = {name: i for i, name in enumerate(CARD_NAMES)}

FULL_DECK: Final = (1 << 52) - 1
_CHUNK: Final = 7
_CHUNK_BITS: Final = (1 << _CHUNK) - 1
_NAMES_BY_CHUNK: Final[tuple[tuple[tuple[str, ...], ...], ...]] = tuple(
    tuple(
        tuple(CARD_NAMES[low + i] for i in range(_CHUNK) if bits >> i & 1 and low + i < 52)
        for bits in range(1 << _CHUNK)
    )
    for low in range(0, 52, _CHUNK)
)
"""The names of the cards in each seven-card chunk of a mask, for every value of the chunk."""
SUIT_MASKS: Final[tuple[int, ...]] = tuple(0x1FFF << (13 * s) for s in range(4))


class InvalidCardError(ValueError):
    """A string is not a card in the rule book's notation, or a card appears twice."""


def card_of(rank: int, suit: Suit | int) -> Card:
    """The card of a rank (0 = two … 12 = ace) and a suit."""
    return int(suit) * 13 + rank


def suit_of(card: Card) -> Suit:
    return Suit(card // 13)


def rank_of(card: Card) -> int:
    return card % 13


def card_name(card: Card) -> str:
    """``card_name(parse_card("TC")) == "TC"``."""
    return CARD_NAMES[card]


def parse_card(name: object) -> Card:
    """Parse a card name such as ``"QS"``; lower case and ``10`` for ``T`` are accepted.

    Anything else, a non-string included, raises :class:`InvalidCardError` (typed ``object`` so
    that the compiled build refuses it the same way rather than with a ``TypeError``)."""
    if not isinstance(name, str):
        raise InvalidCardError(f"a card must be a string such as 'QS', not {name!r}")
    key = name.strip().upper()
    if key.startswith("10"):
        key = "T" + key[2:]
    try:
        return _CARD_BY_NAME[key]
    except KeyError:
        raise InvalidCardError(
            f"{name!r} is not a card: write rank then suit, ranks {RANK_CHARS}, "
            f"suits {SUIT_CHARS} (e.g. 'QS', 'TC')"
        ) from None


# The named cards of Gong Zhu.
PIG: Final = parse_card("QS")
GOAT: Final = parse_card("JD")
TRANSFORMER: Final = parse_card("TC")
ACE_OF_HEARTS: Final = parse_card("AH")
QUEEN_OF_DIAMONDS: Final = parse_card("QD")
TWO_OF_SPADES: Final = parse_card("2S")
TWO_OF_CLUBS: Final = parse_card("2C")


def _lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


class CardSet:
    """An immutable set of cards backed by a 52-bit mask.

    It iterates in card order (clubs, diamonds, hearts, spades; low to high), supports
    ``in``, ``len``, ``|``, ``&``, ``-``, ``^``, equality with other card sets, and prints in
    the rule book's notation.

    >>> CardSet.parse("TC 2H") | CardSet.parse(["QS"])
    CardSet('TC 2H QS')
    >>> list(CardSet.parse("2C 3C").names())
    ['2C', '3C']
    """

    __slots__ = ("mask",)

    def __init__(self, mask: int = 0) -> None:
        if not 0 <= mask <= FULL_DECK:
            raise ValueError(f"card mask out of range: {mask:#x}")
        self.mask = mask

    @classmethod
    def parse(cls, cards: str | Iterable[str]) -> CardSet:
        """Cards from a space-separated string or an iterable of names; duplicates are refused."""
        names = cards.split() if isinstance(cards, str) else list(cards)
        mask = 0
        for name in names:
            bit = 1 << parse_card(name)
            if mask & bit:
                raise InvalidCardError(f"{name} is listed twice")
            mask |= bit
        return cls(mask)

    @classmethod
    def of(cls, cards: Iterable[Card]) -> CardSet:
        mask = 0
        for card in cards:
            mask |= 1 << card
        return cls(mask)

    def __iter__(self) -> Iterator[Card]:
        mask = self.mask
        while mask:
            low = mask & -mask
            yield low.bit_length() - 1
            mask ^= low

    def __reversed__(self) -> Iterator[Card]:
        mask = self.mask
        while mask:
            card = mask.bit_length() - 1
            yield card
            mask ^= 1 << card

    def names(self) -> list[str]:
        # a table lookup per seven cards: this runs for every card set of every request's JSON
        mask, names = self.mask, list[str]()
        for table in _NAMES_BY_CHUNK:
            names.extend(table[mask & _CHUNK_BITS])
            mask >>= _CHUNK
        return names

    def __contains__(self, card: object) -> bool:
        return isinstance(card, int) and 0 <= card < 52 and bool(self.mask >> card & 1)

    def __len__(self) -> int:
        return self.mask.bit_count()

    def __bool__(self) -> bool:
        return bool(self.mask)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CardSet) and other.mask == self.mask

    def __hash__(self) -> int:
        return hash(self.mask)

    def __or__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask | other.mask)

    def __and__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask & other.mask)

    def __sub__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask & ~other.mask)

    def __xor__(self, other: CardSet) -> CardSet:
        return CardSet(self.mask ^ other.mask)

    def issubset(self, other: CardSet) -> bool:
        return self.mask & ~other.mask == 0

    def of_suit(self, suit: Suit | int) -> CardSet:
        return CardSet(self.mask & SUIT_MASKS[suit])

    def lowest(self) -> Card:
        if not self.mask:
            raise ValueError("an empty card set has no lowest card")
        return _lowest(self.mask)

    def highest(self) -> Card:
        if not self.mask:
            raise ValueError("an empty card set has no highest card")
        return self.mask.bit_length() - 1

    def __str__(self) -> str:
        return " ".join(self.names())

    def __repr__(self) -> str:
        return f"CardSet({str(self)!r})"


HEARTS_MASK: Final = SUIT_MASKS[Suit.HEARTS]
SCORING_MASK: Final = HEARTS_MASK | 1 << PIG | 1 << GOAT | 1 << TRANSFORMER
EXPOSABLE_MASK: Final = 1 << ACE_OF_HEARTS | 1 << PIG | 1 << GOAT | 1 << TRANSFORMER

SUITS: Final[tuple[CardSet, ...]] = tuple(CardSet(m) for m in SUIT_MASKS)
SCORING_CARDS: Final = CardSet(SCORING_MASK)
EXPOSABLE_CARDS: Final = CardSet(EXPOSABLE_MASK)
DECK: Final = CardSet(FULL_DECK)


def cards_of(cards: CardSet | int | str | Iterable[str]) -> int:
    """The mask of cards given as a :class:`CardSet`, a mask, or names (a string or list)."""
    if isinstance(cards, CardSet):
        return cards.mask
    if isinstance(cards, int):
        return CardSet(cards).mask
    return CardSet.parse(cards).mask
