"""Old logs stay readable: the golden logs of every version read and verify as they were
sealed, versions 1 to 5 through the registered upgrades to version 6, and a log of an older
format is upgraded through the chain (also tested with a hypothetical version 0)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bot_sdk.protocol import FALLBACK_NOTE, ProtocolVersion, Status
from replays.cli import main
from replays.deals import DealScheme, DealSource
from replays.integrity import check, key_id_of, public_key_from_pem
from replays.log import FORMAT, Connection, Deadline, MatchLog
from replays.schema import validate
from replays.upgrade import UPGRADES, LogReadError, read_log, upgrade
from replays.verify import verify
from tests.replays.make_fixture import FIXTURE_SECRET
from tests.replays.replay_support import KEY_ID

FIXTURES = Path(__file__).resolve().parent / "fixtures"
GOLDEN = FIXTURES / "replay-1.json"
VERSION_2 = FIXTURES / "replay-2.json"
VERSION_3 = FIXTURES / "replay-3.json"
VERSION_4 = FIXTURES / "replay-4.json"
VERSION_5 = FIXTURES / "replay-5.json"
CURRENT = FIXTURES / "replay-6.json"
OLD = FIXTURES / "replay-0.json"
PUBLIC_KEY = public_key_from_pem((FIXTURES / "replay-1.pub.pem").read_bytes())
Data = dict[str, Any]
DIVISION = "ZeroDivisionError: division by zero"


def golden() -> Data:
    data: Data = json.loads(GOLDEN.read_text("utf-8"))
    return data


# -- the golden log ---------------------------------------------------------------------------


def test_the_golden_log_is_still_sealed_valid_and_verified() -> None:
    data = golden()
    assert data["format"] == "gongzhu-replay/1"
    assert key_id_of(PUBLIC_KEY) == data["integrity"]["key_id"] == KEY_ID
    check(data, {KEY_ID: PUBLIC_KEY})
    validate(data)
    log = read_log(data)
    result = verify(log)
    assert result.ok, result.discrepancy
    assert result.requests_checked > 0
    statuses = {d.status for hand in log.hands for d in hand.decisions}
    assert statuses == set(Status)
    assert log.forfeited == (2,) and log.places[2] == 4


def current() -> Data:
    data: Data = json.loads(CURRENT.read_text("utf-8"))
    return data


def test_the_golden_version_1_log_reads_with_its_seed_unchecked() -> None:
    log = read_log(golden())
    assert log.deals == DealSource(DealScheme.UNCHECKED, seed="fixture")
    assert not verify(log).deals_checked


def test_the_golden_version_2_log_reads_without_notes_and_verifies() -> None:
    data: Data = json.loads(VERSION_2.read_text("utf-8"))
    assert data["format"] == "gongzhu-replay/2"
    check(data, {KEY_ID: PUBLIC_KEY})
    validate(data)
    log = read_log(data)
    assert all(d.note is None for hand in log.hands for d in hand.decisions)
    result = verify(log, secret=FIXTURE_SECRET)
    assert result.ok and result.deals_checked, result.discrepancy
    assert json.loads(VERSION_2.read_text("utf-8")) == data  # reading never changes it


def test_the_golden_version_3_log_reads_without_timings_its_deadlines_from_its_banks() -> None:
    data: Data = json.loads(VERSION_3.read_text("utf-8"))
    assert data["format"] == "gongzhu-replay/3"
    check(data, {KEY_ID: PUBLIC_KEY})  # the seal covers the stored version 3 bytes
    validate(data)
    validate(upgrade(data))  # upgraded, it is a valid current log
    log = read_log(data)
    decisions = [d for hand in log.hands for d in hand.decisions]
    assert all(d.timing is None for d in decisions)
    assert all(seat.hello is None for seat in log.seats)
    deadlines = [(d.time_bank_ms, d.deadline) for d in decisions if d.status is Status.TIMEOUT]
    assert deadlines == [(1600, Deadline.BANK), (1600, Deadline.BANK)]
    assert all(d.deadline is None for d in decisions if d.status is not Status.TIMEOUT)
    result = verify(log, secret=FIXTURE_SECRET)
    assert result.ok and result.deals_checked, result.discrepancy
    assert json.loads(VERSION_3.read_text("utf-8")) == data  # reading never changes it


def test_the_golden_version_4_log_reads_as_no_continuation_and_verifies() -> None:
    data: Data = json.loads(VERSION_4.read_text("utf-8"))
    assert data["format"] == "gongzhu-replay/4" and "continues" not in data
    check(data, {KEY_ID: PUBLIC_KEY})  # the seal covers the stored version 4 bytes
    validate(data)
    validate(upgrade(data))
    log = read_log(data)
    assert log.continues is None
    assert any(d.timing is not None for hand in log.hands for d in hand.decisions)
    result = verify(log, secret=FIXTURE_SECRET)
    assert result.ok and result.deals_checked, result.discrepancy
    assert json.loads(VERSION_4.read_text("utf-8")) == data  # reading never changes it


def test_the_golden_version_5_log_reads_every_seat_as_gongzhu_bot_1_and_verifies() -> None:
    data: Data = json.loads(VERSION_5.read_text("utf-8"))
    assert data["format"] == "gongzhu-replay/5"
    assert all("protocol" not in seat for seat in data["seats"])
    check(data, {KEY_ID: PUBLIC_KEY})  # the seal covers the stored version 5 bytes
    validate(data)
    validate(upgrade(data))
    log = read_log(data)
    assert {seat.protocol for seat in log.seats} == {ProtocolVersion.V1}
    result = verify(log, secret=FIXTURE_SECRET)
    assert result.ok and result.deals_checked and result.requests_checked > 0
    assert json.loads(VERSION_5.read_text("utf-8")) == data  # reading never changes it


def test_the_golden_current_log_has_a_seat_speaking_each_protocol_version() -> None:
    log = read_log(current())
    assert [seat.protocol for seat in log.seats] == [ProtocolVersion.V1] * 3 + [ProtocolVersion.V2]
    hashed = {d.seat for hand in log.hands for d in hand.decisions if d.request_sha256}
    assert {1, 2, 3} <= hashed


def test_the_golden_current_log_has_timings_and_both_deadlines() -> None:
    log = read_log(current())
    http = [seat for seat in log.seats if seat.kind == "http"]
    assert all(seat.hello is not None and seat.hello.connection is Connection.NEW for seat in http)
    asked = [d for hand in log.hands for d in hand.decisions if d.latency_ms is not None]
    assert all(d.timing is not None for d in asked)
    deadlines = {d.deadline for d in asked if d.status is Status.TIMEOUT}
    assert deadlines == {Deadline.LIMIT, Deadline.BANK}


def test_the_golden_current_log_is_sealed_valid_and_its_deals_follow_from_the_secret() -> None:
    data = current()
    assert data["format"] == FORMAT == "gongzhu-replay/6"
    assert data["continues"] is None
    check(data, {KEY_ID: PUBLIC_KEY})
    validate(data)
    log = read_log(data)
    assert verify(log).ok and not verify(log).deals_checked  # the secret is not in the log
    result = verify(log, secret=FIXTURE_SECRET)
    assert result.ok and result.deals_checked, result.discrepancy
    statuses = {d.status for hand in log.hands for d in hand.decisions}
    assert statuses == set(Status)
    notes = [d.note for hand in log.hands for d in hand.decisions if d.note]
    assert notes == ["a random legal card", f"{FALLBACK_NOTE}the bot raised {DIVISION}"]


def test_a_note_that_is_not_the_answers_is_a_discrepancy() -> None:
    data = current()
    decision = next(d for h in data["hands"] for d in h["decisions"] if d["note"])
    decision["note"] = "something else"
    result = verify(read_log(data))
    assert not result.ok and result.discrepancy is not None
    assert "is not the answer's note" in result.discrepancy.message


def test_the_writer_still_writes_the_golden_log_exactly() -> None:
    data = current()
    del data["integrity"]
    assert MatchLog.from_json(data).to_json() == data


def test_the_cli_verifies_the_golden_log() -> None:
    key = str(FIXTURES / "replay-1.pub.pem")
    outcome = CliRunner().invoke(main, ["verify", str(GOLDEN), "--public-key", key])
    assert outcome.exit_code == 0, outcome.output
    assert "referee    ok: 2 hands, 117 decisions" in outcome.output


# -- the upgrade mechanism, with a hypothetical version 0 ----------------------------------------
# Version 0 (see make_fixture.py) named the seats "players", stored each decision's move with
# its seat under "move", and called a forfeit's auto-play "autoplay".


def players_to_seats(data: Data) -> Data:
    data["seats"] = data.pop("players")
    return data


def moves_to_applied(data: Data) -> Data:
    for hand in data["hands"]:
        for decision in hand["decisions"]:
            move = decision.pop("move")
            del move["seat"]
            decision["applied"] = move
            if decision["status"] == "autoplay":
                decision["status"] = "forfeit-autoplay"
    return data


def upgrade_0_to_1(data: Data) -> Data:
    return moves_to_applied(players_to_seats(data))


def old() -> Data:
    data: Data = json.loads(OLD.read_text("utf-8"))
    return data


def test_an_old_format_is_unknown_until_an_upgrade_is_registered() -> None:
    assert set(UPGRADES) == {f"gongzhu-replay/{n}" for n in (1, 2, 3, 4, 5)}  # all there were
    with pytest.raises(LogReadError, match="unknown log format 'gongzhu-replay/0'"):
        read_log(old())


def test_an_old_log_is_upgraded_read_and_verified(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(UPGRADES, "gongzhu-replay/0", ("gongzhu-replay/1", upgrade_0_to_1))
    stored = old()
    check(stored, {KEY_ID: PUBLIC_KEY})  # the seal covers the stored, old bytes
    log = read_log(stored)
    assert log == read_log(golden())
    assert verify(log).ok
    assert stored == old()  # reading never changes the stored data


def test_a_chain_of_upgrades_is_followed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(UPGRADES, "gongzhu-replay/0", ("gongzhu-replay/0.5", players_to_seats))
    monkeypatch.setitem(UPGRADES, "gongzhu-replay/0.5", ("gongzhu-replay/1", moves_to_applied))
    current = upgrade(old())
    assert current["format"] == FORMAT
    assert read_log(current) == read_log(golden())


def test_a_circle_of_upgrades_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(UPGRADES, "gongzhu-replay/0", ("gongzhu-replay/0.5", players_to_seats))
    monkeypatch.setitem(UPGRADES, "gongzhu-replay/0.5", ("gongzhu-replay/0", lambda d: d))
    with pytest.raises(LogReadError, match="go round in a circle"):
        upgrade(old())


def test_a_wrong_upgrade_is_caught_when_the_log_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(UPGRADES, "gongzhu-replay/0", ("gongzhu-replay/1", players_to_seats))
    with pytest.raises(LogReadError, match="not a valid gongzhu-replay/6 log: KeyError"):
        read_log(old())


def test_the_cli_reads_an_old_log(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(UPGRADES, "gongzhu-replay/0", ("gongzhu-replay/1", upgrade_0_to_1))
    key = str(FIXTURES / "replay-1.pub.pem")
    outcome = CliRunner().invoke(main, ["verify", str(OLD), "--public-key", key])
    assert outcome.exit_code == 0, outcome.output
    assert "format     ok: gongzhu-replay/6, from gongzhu-replay/0" in outcome.output
