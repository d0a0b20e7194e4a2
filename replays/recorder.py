"""Writing a match log while the match is played: every decision goes through the recorder."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from referee import CardSet, Game
from replays.deals import DealSource
from replays.log import (
    Continuation,
    DecisionRecord,
    HandRecord,
    MatchLog,
    SeatInfo,
    TimeControl,
    final_places,
)


class MatchRecorder:
    """Applies each decision to the referee's game and keeps the log of the match.

    The caller decides what to apply (the bot's answer, or the fallback after a fault); the
    recorder pushes it to the referee, so an illegal move can never enter a log.
    """

    def __init__(
        self,
        game: Game,
        *,
        match_id: str,
        deals: DealSource,
        seats: Sequence[SeatInfo],
        time_control: TimeControl,
        tournament_id: str | None = None,
        table_id: str | None = None,
        rated: bool = True,
        started_at: str | None = None,
        extra: Mapping[str, Any] | None = None,
        continues: Continuation | None = None,
    ) -> None:
        if game.move_stack:
            raise ValueError("a match is recorded from its first decision")
        self.game = game
        self._header: dict[str, Any] = {
            "match_id": match_id,
            "deals": deals,
            "seats": tuple(seats),
            "time_control": time_control,
            "tournament_id": tournament_id,
            "table_id": table_id,
            "rated": rated,
            "started_at": started_at,
            "extra": dict(extra or {}),
            "continues": continues,
        }
        self.hands: list[HandRecord] = []
        self._decisions: list[DecisionRecord] = []
        self._dealer = game.dealer

    def apply(self, record: DecisionRecord) -> None:
        """Push ``record.applied`` to the game (IllegalMoveError if the rules forbid it); log it."""
        game = self.game
        if not self._decisions:
            self._dealer = game.dealer
        game.push(record.applied)
        self._decisions.append(record)
        done = len(self.hands)
        if len(game.results) > done:
            deal = game.deals[done]
            tricks = game.hand_tricks[done]
            self.hands.append(
                HandRecord(
                    hand_number=done + 1,
                    deal=(CardSet(deal[0]), CardSet(deal[1]), CardSet(deal[2]), CardSet(deal[3])),
                    dealer=self._dealer,
                    first_leader=tricks[0].leader,
                    decisions=tuple(self._decisions),
                    tricks=tricks,
                    result=game.results[done],
                )
            )
            self._decisions = []

    def finish(
        self,
        *,
        forfeited: Sequence[int] = (),
        faults: Sequence[int] = (0, 0, 0, 0),
        finished_at: str | None = None,
    ) -> MatchLog:
        """The log of the finished match."""
        outcome = self.game.outcome
        if outcome is None:
            raise ValueError("the match is not over")
        h = self._header
        return MatchLog(
            match_id=h["match_id"],
            tournament_id=h["tournament_id"],
            table_id=h["table_id"],
            rated=h["rated"],
            rules=self.game.rules,
            deals=h["deals"],
            time_control=h["time_control"],
            seats=h["seats"],
            started_at=h["started_at"],
            finished_at=finished_at,
            hands=tuple(self.hands),
            outcome=outcome,
            forfeited=tuple(sorted(forfeited)),
            faults=(faults[0], faults[1], faults[2], faults[3]),
            places=final_places(outcome, forfeited),
            extra=h["extra"],
            continues=h["continues"],
        )
