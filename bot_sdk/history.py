"""What the SDK remembers of a match for a ``gongzhu-bot/2`` bot: the earlier hands' results.

A ``gongzhu-bot/2`` request carries the current hand only, and at most the hand just finished
(a decision's ``last_result``; ``hand_end``'s ``result``). The SDK keeps each seat's results
here and puts them back into every observation it gives the bot, so that a :class:`~bot_sdk.Bot`
sees exactly the observation a ``gongzhu-bot/1`` request would have carried.

>>> from referee import Game, RandomPlayer, Rules
>>> game, player = Game(Rules(fixed_hands=2), seed=1), RandomPlayer(1)
>>> history = MatchHistory()
>>> while not game.is_over():
...     for decision in game.pending:
...         game.push(player.choose(game.observation(decision.seat)))
>>> for result in game.results:
...     history.learn("m1", 0, result)
>>> history.earlier("m1", 0, hand_number=2) == tuple(game.results[:1])
True
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from referee import HandResult


class MatchHistory:
    """The results each seat of each match has been told, by hand number; the seats used
    least recently are forgotten beyond ``max_seats``."""

    def __init__(self, max_seats: int = 1024) -> None:
        self._seats: OrderedDict[tuple[str, int], dict[int, HandResult]] = OrderedDict()
        self._max_seats = max_seats
        self._lock = threading.Lock()

    def learn(self, match_id: str, seat: int, result: HandResult) -> None:
        """``result`` was told to ``seat`` (again, perhaps: a result is kept once)."""
        with self._lock:
            key = (match_id, seat)
            results = self._seats.setdefault(key, {})
            results[result.hand_number] = result
            self._seats.move_to_end(key)
            if len(self._seats) > self._max_seats:
                self._seats.popitem(last=False)

    def earlier(self, match_id: str, seat: int, *, hand_number: int) -> tuple[HandResult, ...]:
        """The results of the hands before ``hand_number`` that ``seat`` was told, in order.
        All of them unless the bot missed both a ``hand_end`` and the decisions that repeat it
        (a bot restarted during the match)."""
        with self._lock:
            results = self._seats.get((match_id, seat), {})
            return tuple(results[n] for n in sorted(results) if n < hand_number)

    def forget(self, match_id: str, seat: int) -> None:
        with self._lock:
            self._seats.pop((match_id, seat), None)
