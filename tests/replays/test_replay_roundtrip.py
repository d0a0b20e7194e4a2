"""Every log survives writing, reading, sealing and packing, and verifies: many matches over
every variant, with every kind of fault and with forfeits."""

from __future__ import annotations

import pytest

from bot_sdk.protocol import Status
from referee import PassDirection, Variant
from replays.integrity import canonical, check, pack, unpack
from replays.log import MatchLog
from replays.schema import validate
from replays.upgrade import read_log
from replays.verify import verify
from tests.replays.replay_support import PUBLIC_KEYS, every_log, reloaded, sealed

NAMES = list(every_log())


@pytest.mark.parametrize("name", NAMES)
def test_write_read_verify(name: str) -> None:
    log = every_log()[name]
    data = reloaded(log.to_json())
    assert MatchLog.from_json(data) == log
    assert read_log(data) == log
    validate(data)
    result = verify(log)
    assert result.ok, result.discrepancy
    decisions = [d for hand in log.hands for d in hand.decisions]
    assert (result.hands, result.decisions) == (len(log.hands), len(decisions))
    assert result.requests_checked == sum(d.request_sha256 is not None for d in decisions) > 0


@pytest.mark.parametrize("name", NAMES)
def test_sealed_packed_unpacked_checks(name: str) -> None:
    log = every_log()[name]
    blob = pack(sealed(log))
    assert len(blob) < len(canonical(log.to_json())) / 4
    stored = unpack(blob)
    check(stored, PUBLIC_KEYS)
    assert read_log(stored) == log


def test_the_matches_cover_every_variant_direction_status_and_fault() -> None:
    logs = every_log().values()
    assert {v for log in logs for v in log.rules.variants} == set(Variant)
    passing = [log.rules.pass_direction for log in logs if log.rules.passing]
    assert set(passing) == set(PassDirection)
    records = [d for log in logs for hand in log.hands for d in hand.decisions]
    assert {d.status for d in records} == set(Status)
    faults = [d.fault or "" for d in records]
    for words in ("is not a card name", "must be a list", "this is a", "does not follow"):
        assert any(words in fault for fault in faults), words
    limit = every_log()["standard-1"].time_control.decision_ms
    late = [d for d in records if d.status is Status.OK and (d.latency_ms or 0) > limit]
    assert late, "no answer was late but within the bank"
    timeouts = [d for d in records if d.status is Status.TIMEOUT]
    assert any(d.answer is None for d in timeouts) and any(d.answer for d in timeouts)


@pytest.mark.parametrize("name", [name for name in NAMES if name.endswith("forfeit")])
def test_a_forfeited_seat_is_autoplayed_and_ranked_last(name: str) -> None:
    log = every_log()[name]
    assert log.forfeited == (2,) and log.faults[2] == log.time_control.fault_limit
    assert log.places[2] == 4
    seat_2 = [d for hand in log.hands for d in hand.decisions if d.seat == 2]
    limit = log.time_control.fault_limit
    assert all(d.status is not Status.OK for d in seat_2[:limit])
    assert all(d.status is Status.FORFEIT_AUTOPLAY for d in seat_2[limit:])
    assert all(d.latency_ms is None and d.request_sha256 is None for d in seat_2[limit:])
