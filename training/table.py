"""A match on the referee taken one action at a time: what both environments stand on.

A :class:`Table` holds the :class:`~referee.Game`, the cards the seat to act has chosen so far
of a pass or an exposure (actions come one card at a time, :mod:`training.encoding`), and
what each action earned each seat (:class:`Reward`). It checks every action before anything
changes: an illegal one raises :class:`IllegalActionError` and the table is as it was.

>>> table = Table(Rules.with_variants("no_exposure"))
>>> table.deal(7)
>>> table.seat_to_act(), str(table.game.legal_moves)
(0, '4C 6C 7C 7D TD 3H 6H 9H QH 2S 4S JS AS')
>>> table.act(0)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
training.table.IllegalActionError: seat 0 may not play 2C: seat 0 does not hold 2C; legal: 4C ...
>>> table.act(39), table.seat_to_act()  # 39 is 2S
(None, 1)
"""

from __future__ import annotations

import enum
import numbers
from typing import Final

import numpy as np

from bot_sdk.protocol import (
    DEFAULT_TIME_BANK_MS,
    DEFAULT_TIME_LIMIT_MS,
    DecisionRequest,
    ProtocolVersion,
    decision_id,
)
from referee import (
    PLAYS,
    AnyMove,
    CardSet,
    DecisionKind,
    Expose,
    Game,
    Observation,
    Pass,
    Phase,
    Reason,
    Refusal,
    Rules,
    card_name,
)
from referee.deal import Seed
from referee.game import PASS_COUNT
from training.encoding import ACTIONS, DONE, History, Mask, Vector, encode, legal_actions

_PLAYING: Final = Phase.PLAYING
_EXPOSING: Final = Phase.EXPOSING
_PLAY: Final = DecisionKind.PLAY
_EXPOSE: Final = DecisionKind.EXPOSE
_PASS: Final = DecisionKind.PASS


class IllegalActionError(ValueError):
    """An action the seat to act may not take now; nothing changed."""


def _integer(action: object) -> int:
    """An action given as another integer type (numpy's) as an int, or the refusal."""
    if not isinstance(action, numbers.Integral) or isinstance(action, bool):
        raise IllegalActionError(
            f"an action is an integer, 0 to 51 for a card or {DONE} to end an exposure, "
            f"not {action!r}"
        )
    return int(action)


class Reward(enum.StrEnum):
    """What an action earns a seat."""

    HAND = "hand"
    """The seat's points for a hand, when the hand is scored (the hand's last card)."""
    TEAM = "team"
    """With ``teams``: the seat's team's points for a hand (its own and its partner's)."""
    MATCH = "match"
    """Only when the match ends: +1 for finishing above every opponent, -1 below every one;
    in general (opponents placed below it - opponents placed above it) / opponents, where the
    opponents are the other three seats, or with ``teams`` the other team's two."""


class Table:
    """A match, one action at a time, with the rewards of ``reward`` and the requests a bot is
    sent in ``protocol`` (as match ``match_id``, with ``time_limit_ms`` and a full
    ``time_bank_ms`` each decision: there is no clock here)."""

    def __init__(
        self,
        rules: Rules | None = None,
        *,
        reward: Reward | str = Reward.HAND,
        protocol: ProtocolVersion | str = ProtocolVersion.V2,
        match_id: str = "training",
        time_limit_ms: int = DEFAULT_TIME_LIMIT_MS,
        time_bank_ms: int = DEFAULT_TIME_BANK_MS,
    ) -> None:
        self.rules = rules if rules is not None else Rules()
        self.reward = Reward(reward)
        if self.reward is Reward.TEAM and not self.rules.teams:
            raise ValueError("reward 'team' needs the teams variant in the rules")
        self.protocol = ProtocolVersion(protocol)
        self.match_id = match_id
        self.time_limit_ms = time_limit_ms
        self.time_bank_ms = time_bank_ms
        self.game = Game(self.rules, seed=0)
        self.chosen = 0
        """The cards the seat to act has chosen of its pass or exposure (a mask)."""
        self.history = History()
        self._asked = 0
        """Decisions asked so far this hand: the sequence number in a request's id."""

    def deal(self, seed: Seed) -> None:
        """Start a new match, dealt from ``seed`` as ``Game(rules, seed=seed)`` deals."""
        self.game = Game(self.rules, seed=seed)
        self.chosen = 0
        self.history = History()
        self._asked = 0

    def seat_to_act(self) -> int:
        """The seat whose action the table waits for (the first of :attr:`Game.pending`), or -1
        once the match is over."""
        game = self.game
        if game.phase is _PLAYING:
            return game.to_move
        if game.phase is _EXPOSING:
            return game.pending_exposers()[0]
        pending = game.pending
        return pending[0].seat if pending else -1

    def _turn(self) -> tuple[int, DecisionKind, int]:
        """The seat to act, its decision's kind and the cards it chooses from (a mask)."""
        game = self.game
        if game.phase is _PLAYING:
            return game.to_move, _PLAY, game.legal_mask()
        if game.phase is _EXPOSING:
            seat = game.pending_exposers()[0]
            return seat, _EXPOSE, game.exposable_mask(seat)
        pending = game.pending
        if not pending:
            return -1, _PLAY, 0
        return pending[0].seat, _PASS, pending[0].choices.mask

    def legal(self) -> int:
        """The legal actions of the seat to act, as a mask (bit :data:`DONE` for ``DONE``)."""
        _, kind, choices = self._turn()
        return legal_actions(kind, choices, self.chosen)

    def act(self, action: object) -> list[float] | None:
        """Take ``action`` for the seat to act: what it earned each seat (by seat), or None
        when it earned nobody anything. Raises :class:`IllegalActionError`, changing nothing."""
        if type(action) is not int:
            action = _integer(action)
        seat, kind, choices = self._turn()
        if seat < 0:
            raise IllegalActionError("the match is over: reset it to play again")
        if not 0 <= action <= DONE:
            raise IllegalActionError(
                f"an action is a card from 0 to 51 or {DONE} to end an exposure, not {action}"
            )
        if kind is _PLAY:
            if not choices >> action & 1:
                raise IllegalActionError(self._refusal(seat, kind, choices, action))
            return self._push(PLAYS[seat][action])
        if not legal_actions(kind, choices, self.chosen) >> action & 1:
            raise IllegalActionError(self._refusal(seat, kind, choices, action))
        if action == DONE:
            return self._push(Expose(seat, CardSet(self.chosen)))
        if kind is _EXPOSE or (self.chosen | 1 << action).bit_count() < PASS_COUNT:
            self.chosen |= 1 << action
            return None
        return self._push(Pass(seat, CardSet(self.chosen | 1 << action)))

    def push(self, move: AnyMove) -> list[float] | None:
        """Make a whole move (a bot's answer) for the seat to act, as :meth:`act` does: what it
        earned each seat, or None. The referee refuses an illegal one, changing nothing."""
        seat = self.seat_to_act()
        if move.seat != seat:
            raise IllegalActionError(f"it is seat {seat}'s turn to act, not seat {move.seat}'s")
        return self._push(move)

    def _push(self, move: AnyMove) -> list[float] | None:
        game = self.game
        results, hand = len(game.results), game.hand_number
        game.push(move)
        self.chosen = 0
        self._asked = 0 if game.hand_number != hand else self._asked + 1
        if len(game.results) == results and game.outcome is None:
            return None
        return self._earned(results)

    def _earned(self, results: int) -> list[float] | None:
        game = self.game
        if self.reward is Reward.MATCH:
            outcome = game.outcome
            if outcome is None:
                return None
            places, teams = outcome.places, self.rules.teams
            earned = []
            for seat in range(4):
                opponents = (
                    [(seat + 1) % 4, (seat + 3) % 4]
                    if teams
                    else [s for s in range(4) if s != seat]
                )
                below = sum(places[o] > places[seat] for o in opponents)
                above = sum(places[o] < places[seat] for o in opponents)
                earned.append((below - above) / len(opponents))
            return earned
        if len(game.results) == results:
            return None
        scores = game.results[-1].scores
        if self.reward is Reward.TEAM:
            return [float(scores[s] + scores[(s + 2) % 4]) for s in range(4)]
        return [float(score) for score in scores]

    def _refusal(self, seat: int, kind: DecisionKind, choices: int, action: int) -> str:
        legal = legal_actions(kind, choices, self.chosen)
        cards = CardSet(legal & ~(1 << DONE))
        also = f" or {DONE} (done)" if legal >> DONE & 1 else ""
        choose = f"legal: {cards or 'no card'}{also}"
        if kind is _PLAY:
            if action == DONE:
                return f"seat {seat} must play a card, {DONE} ends only an exposure; {choose}"
            reason = self.game.play_refusal(seat, action)
            assert reason is not None, "an illegal play has the referee's reason"
            return f"seat {seat} may not play {card_name(action)}: {reason.message}; {choose}"
        verb = "pass" if kind is _PASS else "expose"
        if action == DONE:  # only a pass refuses DONE
            left = PASS_COUNT - self.chosen.bit_count()
            return f"seat {seat} passes {PASS_COUNT} cards: choose {left} more; {choose}"
        name = card_name(action)
        if self.chosen >> action & 1:
            return f"seat {seat} has already chosen {name} to {verb}; {choose}"
        if not self.game.hands[seat] >> action & 1:
            reason = Reason(Refusal.NOT_HELD, seat=seat, cards=CardSet(1 << action))
        else:
            reason = Reason(Refusal.NOT_EXPOSABLE, cards=CardSet(1 << action))
        return f"seat {seat} may not {verb} {name}: {reason.message}; {choose}"

    def observation(self, seat: int) -> Observation:
        """What ``seat`` may know now (the referee's :meth:`~referee.Game.observation`)."""
        return self.game.observation(seat)

    def encode(self, seat: int) -> tuple[Vector, Mask]:
        """``seat``'s observation vector and legal-action mask; the mask is empty unless the
        seat is the one to act (a seat waiting its turn to pass or expose at once with others
        has its decision in the vector, but no action now)."""
        if seat != self.seat_to_act():
            vector, _ = encode(self.game.observation(seat), 0, self.history)
            return vector, np.zeros(ACTIONS, np.int8)
        return encode(self.game.observation(seat), self.chosen, self.history)

    def request(self, seat: int) -> DecisionRequest | None:
        """The decision request the arena would send ``seat`` now, if it is the seat to act:
        built by :mod:`bot_sdk.protocol` as for a match (its ``message`` is the JSON a bot
        receives, its ``body`` the bytes); None for any other seat."""
        if seat != self.seat_to_act() or seat < 0:
            return None
        game = self.game
        ident = decision_id(self.match_id, game.hand_number, self._asked)
        return DecisionRequest(
            game.observation(seat),
            self.match_id,
            ident,
            self.time_limit_ms,
            self.time_bank_ms,
            self.protocol,
        )
