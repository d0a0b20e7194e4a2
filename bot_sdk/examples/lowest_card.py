"""A complete bot: it plays its lowest legal card, exposes nothing and passes its highest cards.

Serve it with ``python -m bot_sdk serve bot_sdk.examples.lowest_card:LowestCard --port 8000``
(the signing secret from the arena in ``GONGZHU_BOT_SECRET``).
"""

from bot_sdk import Bot
from referee import Card, Observation


class LowestCard(Bot):
    name = "lowest-card"
    version = "1.0"

    def play(self, obs: Observation) -> Card:
        return obs.legal.lowest()
