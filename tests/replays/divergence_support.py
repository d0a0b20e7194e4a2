"""Helpers of the divergence tests: the four seat rotations of one duplicate deal, played in
process by simple bots, as the arena plays them (one log per rotation, the same deals)."""

from __future__ import annotations

from collections.abc import Sequence

from arena.match_loop import InProcessSeat, play_match
from arena.pairing import PlannedMatch
from bot_sdk import Bot
from bot_sdk.bot import CardsAnswer
from bot_sdk.examples.lowest_card import LowestCard
from referee import Card, Game, Observation, Rules, Variant
from replays.deals import DealSource, deal_seed
from replays.log import MatchLog, SeatInfo, TimeControl

SECRET = b"divergence-tests-secret-32-bytes"
RULES = Rules(variants=frozenset({Variant.PASS_3}), fixed_hands=2)
"""Two hands with passing: a seat's hand after the pass depends on the other seats."""


class HighestCard(LowestCard):
    """Plays its highest legal card: it parts from the lowest-card bots at its first choice of
    a card."""

    name = "highest-card"

    def play(self, obs: Observation) -> Card:
        return obs.legal.highest()


class LowPasser(HighestCard):
    """Plays high and passes its lowest three: it parts from the others at its pass, and
    whoever it passes to holds other cards than in the other rotations."""

    name = "low-passer"

    def pass_cards(self, obs: Observation) -> CardsAnswer:
        return list(obs.legal)[:3]


def bot_for(participant: str) -> Bot:
    """``high…`` plays high, ``lowpass…`` also passes low; any other participant plays the
    lowest-card example."""
    if participant.startswith("lowpass"):
        return LowPasser()
    return HighestCard() if participant.startswith("high") else LowestCard()


def rotations(
    participants: Sequence[str],
    *,
    tournament_id: str = "t_0123456789ab",
    table: int = 0,
    deal: int = 0,
    rules: Rules = RULES,
) -> list[MatchLog]:
    """The four rotations of one deal among ``participants`` (table order), as
    :func:`arena.pairing.plan` seats them, each match named and dealt as the arena does."""
    a, b, c, d = participants
    logs = []
    for rotation in range(4):
        planned = PlannedMatch(table, deal, rotation, (a, b, c, d))
        seats = tuple(participants)[rotation:] + tuple(participants)[:rotation]
        players = [InProcessSeat(bot_for(p), SeatInfo(seat, p, p)) for seat, p in enumerate(seats)]
        logs.append(
            play_match(
                Game(rules, seed=deal_seed(SECRET, planned.deal_label)),
                players,
                match_id=planned.match_id(tournament_id),
                deals=DealSource.committed(SECRET, planned.deal_label),
                time_control=TimeControl(1000, 30000, 5),
                tournament_id=tournament_id,
                table_id=planned.table_id,
            )
        )
    return logs
