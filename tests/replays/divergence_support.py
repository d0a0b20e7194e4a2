"""Helpers of the divergence tests: the four seat rotations of one duplicate deal, played in
process by simple bots, as the arena plays them (one log per rotation, the same deals)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from arena import divergence_index
from arena.config import Config
from arena.context import Arena
from arena.match_loop import InProcessSeat, play_match
from arena.pairing import PlannedMatch
from arena.records import HOUSE_PARTICIPANTS, Format, TournamentSpec, TournamentStatus
from arena.store import Store
from bot_sdk import Bot
from bot_sdk.bot import CardsAnswer
from bot_sdk.examples.lowest_card import LowestCard
from referee import Card, CardSet, Game, Observation, Rules, Variant
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
    bots: Callable[[str], Bot] = bot_for,
) -> list[MatchLog]:
    """The four rotations of one deal among ``participants`` (table order), as
    :func:`arena.pairing.plan` seats them, each match named and dealt as the arena does, each
    participant played by ``bots(participant)``."""
    a, b, c, d = participants
    logs = []
    for rotation in range(4):
        planned = PlannedMatch(table, deal, rotation, (a, b, c, d))
        seats = tuple(participants)[rotation:] + tuple(participants)[:rotation]
        players = [InProcessSeat(bots(p), SeatInfo(seat, p, p)) for seat, p in enumerate(seats)]
        logs.append(
            play_match(
                Game(rules, seed=deal_seed(SECRET, planned.deal_label)),
                players,
                match_id=planned.match_id(tournament_id),
                deals=DealSource.committed(SECRET, planned.deal_label),
                time_control=TimeControl(1000, 30000, 5),
                tournament_id=tournament_id,
                table_id=planned.table_id,
                rated=False,
            )
        )
    return logs


def concealed(log: MatchLog, seat: int, hand_number: int, decision: int) -> CardSet:
    """The cards the other seats held, unseen by ``seat``, when decision ``decision`` of hand
    ``hand_number`` was asked: not exposed, and not the cards ``seat`` itself passed."""
    game = Game(log.rules, deals=[hand.deal for hand in log.hands])
    for hand in log.hands:
        for index, record in enumerate(hand.decisions):
            if (hand.hand_number, index) == (hand_number, decision):
                view = game.observation(seat)
                hidden = CardSet()
                for other in range(4):
                    if other != seat:
                        hidden = hidden | (CardSet(game.hands[other]) - view.exposed[other])
                return hidden - (view.passed or CardSet())
            game.push(record.applied)
    raise ValueError(f"hand {hand_number} of {log.match_id} has no decision {decision}")


class Deal:
    """A duplicate deal of a running tournament, its four rotations played, to be recorded one
    by one (indexing after each, as ``play`` does). ``names`` are its participants in table
    order: a house bot's id, or the name of a bot registered for it; the one named ``high``
    plays high, the others their lowest card."""

    def __init__(self, config: Config, store: Store, names: Sequence[str]) -> None:
        self.arena = Arena(config, store)
        participants = [n if n in HOUSE_PARTICIPANTS else self._bot(store, n) for n in names]
        self.high = participants[list(names).index("high")]
        spec = TournamentSpec(
            "cup", tuple(participants), Format(), RULES, TimeControl(1000, 30000, 5), rated=False
        )
        self.tid = store.create_tournament(spec)
        self.logs = rotations(participants, tournament_id=self.tid, bots=self._play_as)
        for log in self.logs:
            store.create_match(
                log.match_id,
                seats=[s.bot_id for s in log.seats],
                tournament_id=self.tid,
                table_id="table-1",
                deal_label="t1:d1",
            )
        store.set_tournament_total(self.tid, 4)
        store.move_tournament(
            self.tid, TournamentStatus.RUNNING, allowed_from=[TournamentStatus.CREATED]
        )

    def _play_as(self, participant: str) -> Bot:
        return HighestCard() if participant == self.high else LowestCard()

    @staticmethod
    def _bot(store: Store, name: str) -> str:
        bot, _ = store.create_bot(
            name=name, endpoint="http://127.0.0.1:9/bot", description="", contact="me@example.com",
            version="1.0", secret="s",
        )  # fmt: skip
        return bot.id

    def record(self, logs: Sequence[MatchLog]) -> None:
        for log in logs:
            assert self.arena.store.record_result(log.match_id, self.arena.sealed(log))
            divergence_index.index_recorded_deals(self.arena)

    def seat_of(self, log: MatchLog, bot: str) -> int:
        return next(s.seat for s in log.seats if s.bot_id == bot)
