"""An archive that takes no writes costs no match: the result is recorded with its log held in
Redis, the replay is served from there (checked like any stored log), ``/ready`` says
``degraded`` with the logs waiting, and once the archive takes writes the logs move into it and
the match's record is exactly what it would have been had the archive never failed. Past the
bound of what Redis may hold, the archive's error stands and nothing is recorded."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from arena import archive as archive_module
from arena import archiving
from arena.archive import digest_of
from arena.config import Config
from arena.context import Arena
from arena.errors import ArchiveError
from arena.store import Store, keys
from replays.integrity import canonical, pack
from service import create_app
from tests.service.service_support import sealed_log
from tests.workers.archive_outage import DirectoryOutage

BOTS = ["bot_a", "bot_b", "bot_c", "house:easy"]


@pytest.fixture
def outage(config: Config, monkeypatch: pytest.MonkeyPatch) -> DirectoryOutage:
    monkeypatch.setattr(archive_module, "PROBE_S", 0.0)  # /ready probes on every call here
    return DirectoryOutage(Path(config.archive))


def ready_archive(client: FlaskClient) -> tuple[str, dict[str, Any]]:
    answer = client.get("/ready")
    assert answer.status_code == 200
    return answer.json["status"], answer.json["archive"]


def stored(store: Store, match_id: str) -> dict[bytes, bytes]:
    """The match's record as Redis keeps it, less nothing."""
    return dict(store.redis.hgetall(keys.match(match_id)))


def test_a_log_the_archive_cannot_take_is_held_served_and_moved_once_it_can(
    client: FlaskClient, config: Config, outage: DirectoryOutage
) -> None:
    store = Store.from_config(config, clock=lambda: 1_700_000_000.0)  # records that compare
    assert ready_archive(client) == (
        "ready", {"writable": True, "logs_waiting": 0, "bytes_waiting": 0}
    )  # fmt: skip
    outage.begin()
    logs = {f"m{n}": sealed_log(config, f"m{n}", BOTS, seed=n) for n in (1, 2)}
    for match_id, log in logs.items():
        assert store.record_result(match_id, log)
        assert not store.record_result(match_id, log)  # once, held or not
    held = [digest_of(pack(log)) for log in logs.values()]
    assert store.held_logs() == sorted(held)
    size = sum(len(pack(log)) for log in logs.values())
    assert ready_archive(client) == (
        "degraded", {"writable": False, "logs_waiting": 2, "bytes_waiting": size}
    )  # fmt: skip
    for match_id, log in logs.items():
        store.redis.delete(keys.log_cache(digest_of(pack(log))))  # read from the held copy
        assert client.get(f"/api/matches/{match_id}/replay").data == canonical(log)
        check = client.post(f"/api/matches/{match_id}/verify").json
        assert check["ok"] and check["integrity"] == "ok", check
    arena = Arena.from_config(config)
    assert archiving.move_held(arena) == 0  # still out: nothing moved, nothing lost
    assert store.held_logs() == sorted(held)

    outage.end()
    assert archiving.move_held(arena) == 2
    assert store.held_logs() == [] and store.held_size() == (0, 0)
    assert ready_archive(client) == (
        "ready", {"writable": True, "logs_waiting": 0, "bytes_waiting": 0}
    )  # fmt: skip
    for match_id, log in logs.items():
        digest = digest_of(pack(log))
        assert store.archive.get(digest) == pack(log)
        store.redis.delete(keys.log_cache(digest))
        assert client.get(f"/api/matches/{match_id}/replay").data == canonical(log)
    held_records = {m: stored(store, m) for m in logs}
    store.redis.flushdb()  # the same matches recorded with the archive taking writes
    for match_id, log in logs.items():
        assert store.record_result(match_id, log)
        assert stored(store, match_id) == held_records[match_id]
        assert store.log_referenced(digest_of(pack(log)))


def test_past_the_bound_of_held_logs_the_archive_error_stands_and_nothing_is_recorded(
    store: Store, config: Config, outage: DirectoryOutage
) -> None:
    first, second = (sealed_log(config, f"m{n}", BOTS, seed=n) for n in (1, 2))
    room = len(pack(first)) + len(pack(second)) - 1  # for one of them
    bounded = Store.from_url(
        config.redis_url, config.secret_key, archive=store.archive, hold_bytes=room
    )
    outage.begin()
    assert bounded.record_result("m1", first)
    with pytest.raises(ArchiveError, match="at their bound"):
        bounded.record_result("m2", second)
    match = store.get_match("m2")
    assert match is None or match.result is None
    assert store.held_logs() == [digest_of(pack(first))]
    nothing = Store.from_config(dataclasses.replace(config, archive_hold_mb=0))
    with pytest.raises(ArchiveError, match="cannot write"):  # none held at all
        nothing.record_result("m2", second)
    outage.end()
    assert bounded.record_result("m2", second)  # the archive takes it: no bound applies


def test_a_damaged_held_log_is_a_503_never_other_bytes_and_is_not_archived(
    client: FlaskClient, store: Store, config: Config, outage: DirectoryOutage
) -> None:
    outage.begin()
    log = sealed_log(config, "m1", BOTS, seed=1)
    assert store.record_result("m1", log)
    digest = digest_of(pack(log))
    other = pack(sealed_log(config, "m1", BOTS, seed=2))  # a real log, but not this one
    store.redis.hset(keys.HELD_LOGS, digest, other)
    store.redis.delete(keys.log_cache(digest))
    answer = client.get("/api/matches/m1/replay")
    assert answer.status_code == 503 and answer.json["error"] == "unavailable", answer.data
    outage.end()
    assert archiving.move_held(Arena.from_config(config)) == 0
    assert store.held_logs() == [digest]  # left for the operator, never archived under it
    assert list(store.archive.blobs()) == []  # nor under another's name


def test_ready_stays_cheap_the_archive_probed_once_in_a_while(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = create_app(config)
    probes = []
    monkeypatch.setattr(archive_module.DirectoryArchive, "probe", lambda self: probes.append(1))
    client = app.test_client()
    for _ in range(20):
        assert client.get("/ready").status_code == 200
    assert len(probes) == 1  # within PROBE_S of the first
