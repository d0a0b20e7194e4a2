"""The arena's Redis data layer: :class:`Store` (:mod:`.store`), every key (:mod:`.keys`), how
each record is stored (:mod:`.codecs`), and redis-py's replies typed (:mod:`.replies`)."""

from arena.store.codecs import schedule_json, timestamp
from arena.store.keys import FAULTS_KEPT, HUMAN_GAME_TTL_S
from arena.store.store import BotChanges, Clock, Store, hash_token, new_id, new_secret

__all__ = [
    "FAULTS_KEPT",
    "HUMAN_GAME_TTL_S",
    "BotChanges",
    "Clock",
    "Store",
    "hash_token",
    "new_id",
    "new_secret",
    "schedule_json",
    "timestamp",
]
