"""Which key seals the match logs (``Arena.replay_key``, the one place that decides it): the
configured PEM file, else one key kept in Redis for every process of the arena."""

from __future__ import annotations

import dataclasses

from arena.config import Config
from arena.context import Arena
from arena.store import Store
from replays.integrity import private_key_from_pem, public_key_pem


def test_the_configured_key_file_seals_and_redis_keeps_no_key(config: Config, store: Store) -> None:
    assert config.replay_key_path is not None
    configured = private_key_from_pem(config.replay_key_path.read_bytes())
    key = Arena(config, store).replay_key()
    assert public_key_pem(key.public_key()) == public_key_pem(configured.public_key())
    assert store.redis.get("gz:replay-key") is None


def test_without_a_key_file_every_process_shares_the_key_the_first_one_kept(
    config: Config, store: Store
) -> None:
    unconfigured = dataclasses.replace(config, replay_key_path=None)
    first = Arena(unconfigured, store).replay_key()
    other = Arena(unconfigured, Store.from_config(config)).replay_key()
    assert public_key_pem(first.public_key()) == public_key_pem(other.public_key())
    kept = store.redis.get("gz:replay-key")
    assert kept is not None
    assert public_key_pem(private_key_from_pem(kept).public_key()) == public_key_pem(
        first.public_key()
    )
