"""Sealed logs kept in the archive, served through the API: the record names the blob, Redis
holds no log but a cache entry that expires (never served for another log), a blob the archive
cannot return is a 503 in the one error shape (never another log), logs recorded before the
archive are read and moved by ``gongzhu migrate-replays``, and the sweep removes only day-old
blobs no match names."""

from __future__ import annotations

import dataclasses
import json
import os
import time
import zlib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from flask.testing import FlaskClient

from arena import archiving
from arena.archive import DirectoryArchive
from arena.config import Config
from arena.context import Arena
from arena.store import Store, keys
from replays.integrity import canonical
from service.archive_cli import migrate_replays
from tests.service.service_support import sealed_log

BOTS = ["bot_a", "bot_b", "bot_c", "house:easy"]


def record(store: Store, config: Config, match_id: str, seed: int = 1) -> dict[str, Any]:
    log = sealed_log(config, match_id, BOTS, seed=seed)
    assert store.record_result(match_id, log)
    return log


def blob_path(config: Config, digest: str) -> Path:
    return Path(config.archive) / digest[:2] / digest


def test_a_recorded_log_lives_in_the_archive_and_its_record_names_it(
    client: FlaskClient, store: Store, config: Config
) -> None:
    log = record(store, config, "m1")
    fields = store.redis.hgetall(keys.match("m1"))
    digest = fields[b"log_sha256"].decode()
    stored = blob_path(config, digest).read_bytes()
    assert int(fields[b"log_bytes"]) == len(stored)
    assert store.redis.exists(keys.replay("m1")) == 0  # no log kept in Redis
    assert store.redis.sismember(keys.LOGS, digest)
    assert json.loads(client.get("/api/matches/m1/replay").data) == log
    assert client.get("/api/matches/m1/replay").data == canonical(log)


def test_a_log_is_cached_in_redis_when_recorded_and_when_read_for_a_while_only(
    client: FlaskClient, store: Store, config: Config
) -> None:
    record(store, config, "m1")
    digest = store.redis.hget(keys.match("m1"), "log_sha256").decode()
    assert 0 < store.redis.ttl(keys.log_cache(digest)) <= config.replay_cache_s  # when recorded
    store.redis.delete(keys.log_cache(digest))  # expired
    assert client.get("/api/matches/m1/replay").status_code == 200
    assert 0 < store.redis.ttl(keys.log_cache(digest)) <= config.replay_cache_s  # when read
    blob_path(config, digest).unlink()  # served from the cache meanwhile
    assert client.get("/api/matches/m1/replay").status_code == 200
    store.redis.delete(keys.log_cache(digest))  # expired
    assert client.get("/api/matches/m1/replay").status_code == 503


def test_no_cache_when_it_is_off(store: Store, config: Config) -> None:
    uncached = Store.from_config(dataclasses.replace(config, replay_cache_s=0))
    log = sealed_log(config, "m2", BOTS, seed=2)
    assert uncached.record_result("m2", log)
    assert uncached.replay_blob("m2") is not None
    digest = store.redis.hget(keys.match("m2"), "log_sha256").decode()
    assert store.redis.exists(keys.log_cache(digest)) == 0


def test_a_cache_entry_that_is_not_the_matchs_log_is_dropped_never_served(
    client: FlaskClient, store: Store, config: Config
) -> None:
    logs = {f"m{n}": sealed_log(config, f"m{n}", BOTS, seed=n) for n in (1, 2)}
    for match_id, log in logs.items():
        assert store.record_result(match_id, log)
    first, second = (
        keys.log_cache(store.redis.hget(keys.match(m), "log_sha256").decode()) for m in logs
    )
    entries = store.redis.mget(first, second)
    store.redis.mset({first: entries[1], second: entries[0]})  # swapped
    for match_id, log in logs.items():
        assert client.get(f"/api/matches/{match_id}/replay").data == canonical(log)
    assert store.redis.mget(first, second) == entries  # each its own again
    for match_id, log in logs.items():  # cached again, rightly, and served from there
        assert json.loads(client.get(f"/api/matches/{match_id}/replay").data) == log
    store.redis.set(first, b"\x00" * 40)  # damaged
    assert client.get("/api/matches/m1/replay").data == canonical(logs["m1"])


@pytest.mark.parametrize("fault", ["missing", "damaged"])
def test_a_log_the_archive_cannot_return_is_a_503_never_another_log(
    fault: str, client: FlaskClient, store: Store, config: Config
) -> None:
    record(store, config, "m1")
    digest = store.redis.hget(keys.match("m1"), "log_sha256").decode()
    store.redis.delete(keys.log_cache(digest))  # expired
    path = blob_path(config, digest)
    if fault == "missing":
        path.unlink()
    else:
        other = sealed_log(config, "m1", BOTS, seed=2)  # a real log, but not this one
        path.chmod(0o644)
        path.write_bytes(zlib.compress(canonical(other), 9))
    for url, method in [("/api/matches/m1/replay", "get"), ("/api/matches/m1/verify", "post")]:
        answer = getattr(client, method)(url)
        assert answer.status_code == 503, answer.data
        assert answer.json["error"] == "unavailable" and answer.json["status"] == 503
        assert "archive" in answer.json["message"]
        assert answer.headers["Retry-After"]
    assert client.get("/matches/m1").status_code == 503  # the match's page too


def _keep_in_redis_as_before(store: Store, config: Config, match_id: str) -> dict[str, Any]:
    """A match recorded as the arena did before the archive: its log zlib-packed in Redis."""
    log = record(store, config, match_id, seed=int(match_id.removeprefix("m")))
    digest = store.redis.hget(keys.match(match_id), "log_sha256").decode()
    store.redis.hdel(keys.match(match_id), "log_sha256", "log_bytes")
    store.redis.srem(keys.LOGS, digest)
    store.archive.delete(digest)
    store.redis.set(keys.replay(match_id), zlib.compress(canonical(log), 9))
    return log


def test_logs_kept_in_redis_are_served_then_moved_verified_and_resumably(
    client: FlaskClient, store: Store, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = {f"m{n}": _keep_in_redis_as_before(store, config, f"m{n}") for n in range(1, 6)}
    assert client.get("/api/matches/m1/replay").data == canonical(logs["m1"])  # not moved yet
    arena = Arena.from_config(config)
    assert archiving.to_migrate(arena) == sorted(logs)

    class StoppedError(Exception):
        pass

    def stop_after_two(match_id: str) -> None:
        if match_id == "m2":
            raise StoppedError  # Ctrl-C, a crash: the rest stays in Redis

    with pytest.raises(StoppedError):
        archiving.migrate(arena, archiving.to_migrate(arena), each=stop_after_two, repack=True)
    assert archiving.to_migrate(arena) == ["m3", "m4", "m5"]

    store.redis.set(keys.replay("m4"), zlib.compress(canonical({**logs["m4"], "table_id": "x"})))
    for name, value in config_environment(config).items():
        monkeypatch.setenv(name, value)
    ran = CliRunner().invoke(migrate_replays)
    assert ran.exit_code == 1, ran.output
    assert "3 log(s) in Redis" in ran.output and "moved 2 log(s)" in ran.output
    assert "left in Redis: m4: " in ran.output and "SHA-256" in ran.output
    assert archiving.to_migrate(arena) == ["m4"]  # the damaged log is left where it was
    for match_id, log in logs.items():
        if match_id != "m4":
            assert client.get(f"/api/matches/{match_id}/replay").data == canonical(log)
            assert store.redis.exists(keys.replay(match_id)) == 0
    assert CliRunner().invoke(migrate_replays).output.startswith("1 log(s)")  # run again
    assert _archived(store, "m1").startswith(b"GZ\x02")  # repacked (the first, partial run)
    assert _archived(store, "m3") == zlib.compress(canonical(logs["m3"]), 9)  # moved as it was


def _archived(store: Store, match_id: str) -> bytes:
    """The bytes the archive keeps for the match's log."""
    return store.archive.get(store.redis.hget(keys.match(match_id), "log_sha256").decode())


def config_environment(config: Config) -> dict[str, str]:
    return {
        "REDIS_URL": config.redis_url,
        "GONGZHU_SECRET_KEY": config.secret_key,
        "GONGZHU_ARCHIVE": config.archive,
    }


def test_the_sweep_removes_day_old_blobs_no_match_names_and_nothing_else(
    client: FlaskClient, store: Store, config: Config
) -> None:
    record(store, config, "m1")
    archive = store.archive
    assert isinstance(archive, DirectoryArchive)
    orphan = archive.put(b"the log of a job that died before its record")
    young = archive.put(b"the log of a job recording it now")
    day_old = time.time() - archiving.SWEEP_AGE_S - 60
    named = store.redis.hget(keys.match("m1"), "log_sha256").decode()
    for digest in (orphan, named):
        os.utime(blob_path(config, digest), (day_old, day_old))
    assert archiving.sweep(Arena.from_config(config)) == 1
    assert {kept.digest for kept in archive.blobs()} == {named, young}
    assert client.get("/api/matches/m1/replay").status_code == 200
