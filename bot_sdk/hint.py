"""The "Hint" button: what the Normal house bot would do in the player's place.

>>> from referee import Game
>>> game = Game(seed=1)
>>> [str(hint(game.observation(d.seat))) for d in game.pending]
['seat 3 exposes nothing', 'seat 0 exposes nothing']
"""

from __future__ import annotations

from bot_sdk.house.normal import NormalBot
from referee import AnyMove, Observation


def hint(obs: Observation) -> AnyMove:
    """A legal move answering ``obs.decision``: the cards to expose or pass, or one card to play.

    Raises ``ValueError`` when the seat has nothing to decide.
    """
    return NormalBot().decide(obs)
