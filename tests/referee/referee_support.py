"""Helpers shared by the referee tests: explicit deals, scripted drivers, whole-state snapshots.

Everything here drives the referee through its public API (``pending``, ``push``, ``play``,
``legal_moves``, ``observation``); the one exception, :func:`finish_hand_with_totals`, says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from referee import (
    DECK,
    CardSet,
    DecisionKind,
    Expose,
    Game,
    Pass,
    Phase,
    Play,
    Suit,
    parse_card,
)
from referee.refusals import Reason, Refusal

Chooser = Callable[[Game], int]


def deal_with(fixed: Mapping[int, str]) -> list[CardSet]:
    """Four hands of 13: the listed seats get the cards written (and possibly more), and the
    rest of the deck is handed out in card order to fill every seat up to 13 cards."""
    given = {seat: CardSet.parse(text) for seat, text in fixed.items()}
    used = CardSet()
    for hand in given.values():
        assert not hand & used, "a card is listed for two seats"
        used |= hand
    rest = list(DECK - used)
    hands = []
    for seat in range(4):
        hand = given.get(seat, CardSet())
        need = 13 - len(hand)
        assert need >= 0, f"seat {seat} is given more than 13 cards"
        hands.append(hand | CardSet.of(rest[:need]))
        rest = rest[need:]
    assert not rest
    return hands


def lowest_card(game: Game) -> int:
    """The scripted policy used by default: play the lowest legal card."""
    return game.legal_moves.lowest()


def preferring(orders: Mapping[int, str]) -> Chooser:
    """A scripted policy: each seat plays the first legal card of its list, else its lowest."""
    parsed = {seat: [parse_card(c) for c in text.split()] for seat, text in orders.items()}

    def choose(game: Game) -> int:
        legal = game.legal_moves
        for card in parsed.get(game.to_move, []):
            if card in legal:
                return card
        return legal.lowest()

    return choose


def advance(
    game: Game,
    *,
    exposures: Mapping[int, str] | None = None,
    passes: Mapping[int, str] | None = None,
    chooser: Chooser = lowest_card,
) -> None:
    """Answer every decision pending now, once: pass the 3 lowest cards (or ``passes``), expose
    nothing (or ``exposures``), play with ``chooser``."""
    for decision in game.pending:
        seat = decision.seat
        if decision.kind is DecisionKind.PASS:
            chosen = (passes or {}).get(seat)
            cards = CardSet.parse(chosen) if chosen else CardSet.of(list(decision.choices)[:3])
            game.push(Pass(seat, cards))
        elif decision.kind is DecisionKind.EXPOSE:
            game.push(Expose(seat, CardSet.parse((exposures or {}).get(seat, ""))))
        else:
            game.push(Play(seat, chooser(game)))


def to_play(
    game: Game,
    *,
    exposures: Mapping[int, str] | None = None,
    passes: Mapping[int, str] | None = None,
) -> Game:
    """Answer the passing and exposure decisions until the first card of the hand is due."""
    while game.phase in (Phase.PASSING, Phase.EXPOSING):
        advance(game, exposures=exposures, passes=passes)
    assert game.phase is Phase.PLAYING
    return game


def play_cards(game: Game, count: int, chooser: Chooser = lowest_card) -> None:
    for _ in range(count):
        assert game.phase is Phase.PLAYING
        game.push(Play(game.to_move, chooser(game)))


def finish_hand(
    game: Game,
    chooser: Chooser = lowest_card,
    *,
    exposures: Mapping[int, str] | None = None,
    passes: Mapping[int, str] | None = None,
) -> None:
    """Play the current hand to its end (the next hand starts, or the match ends)."""
    number = game.hand_number
    while not game.is_over() and game.hand_number == number:
        advance(game, exposures=exposures, passes=passes, chooser=chooser)


def finish_match(game: Game, chooser: Chooser = lowest_card, max_moves: int = 100_000) -> None:
    for _ in range(max_moves):
        if game.is_over():
            return
        advance(game, chooser=chooser)
    raise AssertionError("the match did not end")


def at_last_card(game: Game) -> bool:
    return game.phase is Phase.PLAYING and len(game.tricks) == 12 and len(game.trick) == 3


def play_to_last_card(game: Game, chooser: Chooser = lowest_card) -> None:
    """Play the current hand until only its 52nd card remains to be played."""
    number = game.hand_number
    while not at_last_card(game):
        assert game.hand_number == number and not game.is_over()
        advance(game, chooser=chooser)


def finish_hand_with_totals(game: Game, totals: tuple[int, int, int, int]) -> None:
    """Finish the current hand so that the running totals after it are exactly ``totals``.

    The referee has no public way to start from chosen totals, so this plays the hand to its
    last card, learns the hand's scores from an independent :meth:`Game.copy` that plays that
    card, then sets ``game.totals`` (an internal attribute) to ``totals - scores`` and plays
    the last card through the public :meth:`Game.push`: the match-end decision is the
    referee's own.
    """
    play_to_last_card(game)
    probe = game.copy()
    probe.play(lowest_card(probe))
    scores = probe.results[-1].scores
    game.totals[:] = [t - s for t, s in zip(totals, scores, strict=True)]
    game.play(lowest_card(game))
    assert tuple(game.totals) == tuple(totals)


def observations(game: Game) -> list[dict[str, Any]]:
    return [game.observation(seat).to_json() for seat in range(4)]


def full_state(game: Game) -> dict[str, Any]:
    """Everything a comparison of two game states should look at, as plain JSON values."""
    return {
        "observations": observations(game),
        "hands": [game.hand(seat).names() for seat in range(4)],
        "totals": list(game.totals),
        "results": [r.to_json() for r in game.results],
        "outcome": None if game.outcome is None else game.outcome.to_json(),
        "moves": [m.to_json() for m in game.move_stack],
        "pending": [(d.seat, d.to_json()) for d in game.pending],
        "hand_number": game.hand_number,
        "phase": game.phase.value,
        "legal": game.legal_moves.names(),
    }


REFUSAL_SAMPLES: list[tuple[Reason, str]] = [
    (Reason(Refusal.MATCH_OVER), "the match is over"),
    (
        Reason(Refusal.NO_PLAY_NOW, phase=Phase.EXPOSING),
        "no card is played now: the game is exposing",
    ),
    (
        Reason(Refusal.CANNOT_PLAY_NOW, seat=1, phase=Phase.PASSING),
        "seat 1 cannot play a card: the game is passing",
    ),
    (
        Reason(Refusal.CANNOT_DECIDE_NOW, seat=0, kind=DecisionKind.PASS, phase=Phase.PLAYING),
        "seat 0 cannot pass now: the game is playing",
    ),
    (
        Reason(Refusal.NO_DECISION, seat=3, kind=DecisionKind.EXPOSE),
        "seat 3 has no expose decision pending",
    ),
    (
        Reason(Refusal.NOT_YOUR_TURN, seat=0, turn=3, kind=DecisionKind.PLAY),
        "it is seat 3's turn to play, not seat 0's",
    ),
    (
        Reason(Refusal.NOT_YOUR_TURN, seat=1, turn=2, kind=DecisionKind.EXPOSE),
        "it is seat 2's turn to expose, not seat 1's",
    ),
    (Reason(Refusal.NOT_A_CARD, offered=52), "52 is not a card"),
    (Reason(Refusal.NOT_A_CARD, offered=True), "True is not a card"),
    (Reason(Refusal.NOT_HELD, seat=2, cards=CardSet.parse("QS")), "seat 2 does not hold QS"),
    (
        Reason(Refusal.NOT_HELD, seat=0, cards=CardSet.parse("3C TC")),
        "seat 0 does not hold 3C TC",
    ),
    (
        Reason(Refusal.MUST_FOLLOW_SUIT, seat=2, suit=Suit.CLUBS),
        "seat 2 must follow clubs",
    ),
    (Reason(Refusal.MUST_LEAD_2C, seat=0), "seat 0 must lead 2C to the first trick"),
    (
        Reason(Refusal.NO_HEART_LEAD, seat=1),
        "seat 1 may not lead a heart before hearts are broken",
    ),
    (Reason(Refusal.NO_SPADE_LEAD, seat=3), "seat 3 may not lead a spade to the first trick"),
    (
        Reason(Refusal.EXPOSED_FIRST_TRICK, seat=0, cards=CardSet.parse("QS"), suit=Suit.SPADES),
        "exposed QS cannot be played to the first spade trick while seat 0 holds other spades",
    ),
    (
        Reason(Refusal.NOT_EXPOSABLE, cards=CardSet.parse("2C KH")),
        "only AH, QS, JD and TC may be exposed, not 2C KH",
    ),
    (
        Reason(Refusal.PASS_COUNT, seat=0, needed=3, count=2),
        "seat 0 must pass exactly 3 cards, not 2",
    ),
]
"""A reason of every code with the referee's message for it, word for word as it has always
been written (errors, logs and sealed replays show it)."""
