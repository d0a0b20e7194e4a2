"""What every use case works on: the configuration, the store and the job queue."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from rq import Queue

from arena.config import Config
from arena.store import Store
from replays.integrity import key_id_of, seal
from replays.log import MatchLog


@dataclass(frozen=True)
class Arena:
    config: Config
    store: Store

    @classmethod
    def from_config(cls, config: Config) -> Arena:
        return cls(config, Store.from_url(config.redis_url, config.secret_key))

    @classmethod
    def from_environment(cls) -> Arena:
        """The arena the environment configures (how an rq job finds it)."""
        return cls.from_config(Config.from_environment())

    @property
    def queue(self) -> Queue:
        """The rq queue the arena's workers take jobs from."""
        return Queue(self.config.queue_name, connection=self.store.redis)

    def replay_key(self) -> Ed25519PrivateKey:
        """The key the workers seal logs with (see :meth:`Store.replay_key`)."""
        return self.store.replay_key(self.config.replay_key_path)

    def sealed(self, log: MatchLog) -> dict[str, Any]:
        """``log`` sealed with the replay key, as a finished match is recorded."""
        key = self.replay_key()
        return seal(log.to_json(), key, key_id=key_id_of(key.public_key()))
