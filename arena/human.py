"""A human game at the table: the referee's game rebuilt from the stored decisions, the person's
moves, the computers' turns, and the log once the match is over.

Nothing but the decisions is kept between requests: :class:`HumanTable` pushes every stored
decision through a :class:`~replays.recorder.MatchRecorder` again (a whole match replays in
milliseconds), so every legality question is the referee's and the finished match's log is
built exactly as a tournament match's. The computers are asked through ``match_loop.py``'s
``decide`` and the game's :class:`~replays.faults.FaultBook` like in a tournament: a fault
becomes the fallback move, and enough faults forfeit the seat.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from arena.errors import WrongStateError
from arena.match_loop import SeatPlayer, decide
from arena.matches import seat_info
from arena.records import HOUSE_LEVELS, HOUSE_PARTICIPANTS, HumanGame, RegisteredBot
from bot_sdk.protocol import decision_id
from referee import AnyMove, CardSet, Decision, Game, Phase, Play, card_name
from replays.faults import FaultBook
from replays.log import DecisionRecord, MatchLog, SeatInfo, TimeControl
from replays.recorder import MatchRecorder

HUMAN = "human"
"""The participant id of the person's seat in a human game's log."""
HUMAN_TIME_CONTROL = TimeControl(decision_ms=1000, bank_ms=5000, fault_limit=5)
"""The computers' time control: a registered bot can hold up one request by at most its 1 s
limit plus what is left of its 5 s bank, and a house bot answers in well under that."""

PlayerFor = Callable[[int, str], SeatPlayer]
"""Builds the player of a computer seat from its seat and participant id."""


class NotYourTurnError(WrongStateError):
    """A move from the person when the game does not wait for one (or waits for Next hand):
    the table's refusal, in words for the person, before the referee is asked."""

    code = "not_your_turn"


@dataclass(frozen=True)
class TableEvent:
    """Something public that happened: a card played (``winner`` set when it completed its
    trick), or the exposures of a hand revealed together (``exposed``, one list per seat)."""

    move: int
    """The index of the decision that made it happen, from 0."""
    kind: str
    hand: int
    seat: int | None = None
    card: str | None = None
    trick: int | None = None
    winner: int | None = None
    exposed: tuple[tuple[str, ...], ...] | None = None


def participant_at(game: HumanGame, seat: int, hand: int) -> str:
    """Who plays a computer seat in ``hand``: its opponent, a house bot at the difficulty of
    the latest change that applies from ``hand`` on."""
    participant = game.opponents[(seat - game.seat) % 4 - 1]
    if participant not in HOUSE_PARTICIPANTS:
        return participant
    levels = [level for from_hand, level in game.level_changes if from_hand <= hand]
    return f"house:{levels[-1]}" if levels else participant


def seat_infos(stored: HumanGame, bots: Mapping[str, RegisteredBot]) -> list[SeatInfo]:
    """Who sits where in the log: the person, the house bots as chosen for the first hand (a
    later difficulty change is in the log's ``extra``), and the registered ``bots``."""
    infos = []
    for seat in range(4):
        if seat == stored.seat:
            infos.append(SeatInfo(seat, HUMAN, "Human player", kind="human"))
            continue
        participant = participant_at(stored, seat, 1)
        bot = None if participant in HOUSE_PARTICIPANTS else bots[participant]
        infos.append(seat_info(seat, participant, bot))
    return infos


class HumanTable:
    """A human game at its current position (see the module's doc)."""

    def __init__(self, stored: HumanGame, seats: list[SeatInfo]) -> None:
        self.stored = stored
        self.seats = seats
        self.game = Game(stored.rules, seed=stored.seed)
        extra: dict[str, object] = {"human": True, "game_id": stored.id}
        if stored.level_changes:
            extra["level_changes"] = [list(change) for change in stored.level_changes]
        self.recorder = MatchRecorder(
            self.game,
            match_id=stored.match_id,
            deals=stored.deals,
            seats=seats,
            time_control=HUMAN_TIME_CONTROL,
            rated=False,
            started_at=stored.created_at,
            extra=extra,
        )
        self.events: list[TableEvent] = []
        self.new_moves: list[DecisionRecord] = []
        self._moves = 0
        self._seq = 0
        for record in stored.moves:
            self._apply(record)
        self.book = FaultBook.from_records(HUMAN_TIME_CONTROL, stored.moves)

    @property
    def seat(self) -> int:
        return self.stored.seat

    @property
    def unseen_result(self) -> bool:
        """A hand has ended whose result the person has not yet acknowledged."""
        return len(self.game.results) > self.stored.acknowledged

    def decision(self) -> Decision | None:
        """The person's pending decision, if the game waits for it."""
        if self.unseen_result:
            return None
        return next((d for d in self.game.pending if d.seat == self.seat), None)

    def expecting(self) -> Decision:
        """The person's pending decision, or :class:`NotYourTurnError` saying what to do instead."""
        decision = self.decision()
        if decision is None:
            if self.game.is_over():
                raise NotYourTurnError("the match is over")
            waiting = "press Next hand first" if self.unseen_result else "wait for your turn"
            raise NotYourTurnError(f"the game is not waiting for your move: {waiting}")
        return decision

    def play(self, move: AnyMove) -> None:
        """Apply the person's move, or raise :class:`NotYourTurnError` or
        :class:`~referee.IllegalMoveError` with the referee's reason, changing nothing."""
        decision = self.expecting()
        record = DecisionRecord(self.seat, decision.kind, move, decision_id=self._ident())
        self._apply(record)
        self.new_moves.append(record)

    def next_hand(self) -> None:
        """The person has seen the last hand's result: the computers may play on."""
        if self.game.is_over():
            raise NotYourTurnError("the match is over: there is no next hand")
        if not self.unseen_result:
            raise NotYourTurnError("there is no hand result waiting for Next hand")
        self.stored = replace(self.stored, acknowledged=self.stored.acknowledged + 1)

    def change_level(self, level: str) -> None:
        """The house bots play at ``level`` from the person's next hand on."""
        if self.game.is_over():
            raise NotYourTurnError("the match is over: there is no next hand")
        if level not in HOUSE_LEVELS:
            raise ValueError(f"no difficulty {level!r}; choose one of {', '.join(HOUSE_LEVELS)}")
        change = (self.stored.acknowledged + 2, level)
        self.stored = replace(self.stored, level_changes=(*self.stored.level_changes, change))

    def advance(self, player_for: PlayerFor) -> None:
        """Let the computers decide until the person must, a hand's result waits to be seen, or
        the match is over."""
        game = self.game
        players: dict[tuple[int, str], SeatPlayer] = {}
        while not game.is_over() and not self.unseen_result:
            waiting = [d for d in game.pending if d.seat != self.seat]
            if not waiting:
                return
            seat = waiting[0].seat
            participant = participant_at(self.stored, seat, game.hand_number)
            key = (seat, participant)
            if key not in players:
                players[key] = player_for(seat, participant)
            record = decide(
                self.book,
                players[key],
                game.observation(seat),
                match_id=self.stored.match_id,
                ident=self._ident(),
            )
            self._apply(record)
            self.new_moves.append(record)

    def finish(self, finished_at: str) -> MatchLog:
        """The finished match's log (not sealed)."""
        book = self.book
        return self.recorder.finish(
            forfeited=sorted(book.forfeited), faults=book.faults, finished_at=finished_at
        )

    def _ident(self) -> str:
        return decision_id(self.stored.match_id, self.game.hand_number, self._seq)

    def _apply(self, record: DecisionRecord) -> None:
        game = self.game
        hand, phase, tricks = game.hand_number, game.phase, len(game.tricks)
        self.recorder.apply(record)
        index = self._moves
        self._moves += 1
        self._seq = 0 if game.hand_number != hand else self._seq + 1
        move = record.applied
        if isinstance(move, Play):
            winner = None
            if game.hand_number != hand:
                winner = game.hand_tricks[-1][-1].winner
            elif len(game.tricks) > tricks:
                winner = game.tricks[-1].winner
            self.events.append(
                TableEvent(index, "play", hand, move.seat, card_name(move.card), tricks + 1, winner)
            )
        elif phase is Phase.EXPOSING and game.phase is not Phase.EXPOSING:
            revealed = tuple(tuple(CardSet(m).names()) for m in game.exposed_by)
            self.events.append(TableEvent(index, "exposed", hand, exposed=revealed))
