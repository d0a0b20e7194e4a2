"""What every use case works on: the configuration, the store, the job queue and, in a web
process holding pull bots' streams, their relay."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from rq import Queue

from arena.archive import Probe
from arena.config import Config
from arena.relay import Relay
from arena.store import Store
from replays.integrity import generate_key, key_id_of, private_key_from_pem, private_key_pem, seal
from replays.log import MatchLog


@dataclass(frozen=True)
class Arena:
    config: Config
    store: Store

    @classmethod
    def from_config(cls, config: Config) -> Arena:
        return cls(config, Store.from_config(config))

    @classmethod
    def from_environment(cls) -> Arena:
        """The arena the environment configures (how an rq job finds it)."""
        return cls.from_config(Config.from_environment())

    @property
    def queue(self) -> Queue:
        """The rq queue the arena's workers take jobs from."""
        return Queue(self.config.queue_name, connection=self.store.redis)

    @cached_property
    def archive_probe(self) -> Probe:
        """Whether the archive takes writes, probed at most every few seconds (``/ready``)."""
        return Probe(self.store.archive)

    @cached_property
    def relay(self) -> Relay:
        """The pull bots' events for the streams this process holds (made on first use)."""
        return Relay(self.store.redis)

    def replay_key(self) -> Ed25519PrivateKey:
        """The key match logs are sealed and checked with, decided here alone: the PEM file
        ``GONGZHU_REPLAY_KEY`` names, if one is set (``gongzhu run`` always sets one: the key
        its data directory keeps, ``service.runtime.DataDir.replay_key_path``); else a key made
        by the first process that asks and kept in the store (:meth:`Store.kept_replay_key`),
        which every worker and the service then share (the Procfile's processes on an
        environment that names no key file)."""
        if self.config.replay_key_path is not None:
            return private_key_from_pem(self.config.replay_key_path.read_bytes())
        kept = self.store.kept_replay_key(private_key_pem(generate_key()))
        return private_key_from_pem(kept)

    def sealed(self, log: MatchLog) -> dict[str, Any]:
        """``log`` sealed with the replay key, as a finished match is recorded."""
        return self.sealed_record(log.to_json())

    def sealed_record(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """A match log's JSON, or a dispute's ruling (:mod:`replays.rulings`), sealed with the
        replay key."""
        key = self.replay_key()
        return seal(record, key, key_id=key_id_of(key.public_key()))
