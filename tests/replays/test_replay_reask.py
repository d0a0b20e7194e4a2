"""Re-asking a real bot server on loopback: the bot that played answers the same, another bot
is reported as different, and what cannot be asked again is refused."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.match_loop import SeatPlayer
from bot_sdk import Bot
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.protocol import Status
from bot_sdk.server import make_app
from referee import Card, Observation
from replays.cli import main
from replays.log import MatchLog, SeatInfo
from replays.reask import ReaskError, reask, rebuild
from replays.upgrade import read_log
from tests.bot_sdk.bot_sdk_support import running
from tests.replays.replay_support import (
    PROFILES,
    HashingSeat,
    ScriptedSeat,
    always,
    house_seat,
    in_turn,
    record,
    reloaded,
)

SECRET = "reask-secret"


class HighestCard(Bot):
    name = "highest-card"

    def play(self, obs: Observation) -> Card:
        return obs.legal.highest()


def _log() -> MatchLog:
    """Seat 1 is LowestCard with its requests hashed; seat 2 sends a malformed answer first
    and forfeits later; seat 0 and 3 are house bots."""
    players: list[SeatPlayer] = [
        house_seat(0, "r-0"),
        HashingSeat(LowestCard(), SeatInfo(1, "bot-lowest", "lowest-card", "1.0")),
        ScriptedSeat(2, in_turn("malformed", then="error"), seed="r-2"),
        ScriptedSeat(3, always("ok"), seed="r-3"),
    ]
    return record(PROFILES["pass_next"], 12, players)


LOG = _log()


def decisions_of(seat: int, status: Status = Status.OK) -> list[tuple[int, int]]:
    """(hand, index) of the seat's decisions with that status."""
    return [
        (hand.hand_number, index)
        for hand in LOG.hands
        for index, d in enumerate(hand.decisions)
        if d.seat == seat and d.status is status
    ]


@pytest.fixture(scope="module")
def lowest_url() -> Iterator[str]:
    with running(make_app(LowestCard, SECRET)) as url:
        yield url


@pytest.fixture(scope="module")
def highest_url() -> Iterator[str]:
    with running(make_app(HighestCard, SECRET)) as url:
        yield url


def test_the_same_bot_answers_the_same_every_time(lowest_url: str) -> None:
    asked = decisions_of(1)[:16]
    kinds = set()
    for hand, index in asked:
        result = reask(LOG, hand, index, lowest_url, SECRET)
        assert result.rebuilt.hash_checked and result.http_status == 200
        assert result.same, result.verdict
        assert result.verdict.startswith("same: the log has {")
        kinds.add(result.rebuilt.record.kind.value)
    assert kinds == {"pass", "expose", "play"}


def test_another_bot_is_reported_as_different(highest_url: str) -> None:
    hand, index = next(
        (h, i)
        for h, i in decisions_of(1)
        if LOG.hands[h - 1].decisions[i].kind.value == "play"
        and len(_choices(h, i)) > 1  # a choice to make
    )
    result = reask(LOG, hand, index, highest_url, SECRET)
    assert not result.same and result.move is not None
    assert result.verdict.startswith("different: the log has {")


def _choices(hand: int, index: int) -> list[str]:
    obs = rebuild(LOG, hand, index).observation
    assert obs.decision is not None
    return obs.decision.choices.names()


def test_a_refused_answer_is_the_same_only_if_the_bot_says_it_again(lowest_url: str) -> None:
    hand, index = decisions_of(2, Status.INVALID)[0]
    result = reask(LOG, hand, index, lowest_url, SECRET)
    assert not result.same
    assert 'the log has answer {"pass":"AH"} (invalid' in result.verdict


def test_an_auto_played_decision_was_never_asked() -> None:
    hand, index = decisions_of(2, Status.FORFEIT_AUTOPLAY)[0]
    with pytest.raises(ReaskError, match="seat 2 had forfeited"):
        rebuild(LOG, hand, index)


def test_a_log_that_does_not_reproduce_its_request_is_refused() -> None:
    data = reloaded(LOG.to_json())
    hand, index = decisions_of(1)[0]
    data["hands"][hand - 1]["decisions"][index]["time_bank_ms"] = 1
    with pytest.raises(ReaskError, match="does not reproduce what was sent"):
        rebuild(read_log(data), hand, index)


def test_a_wrong_secret_is_an_http_401(lowest_url: str) -> None:
    hand, index = decisions_of(1)[0]
    result = reask(LOG, hand, index, lowest_url, "not-the-secret")
    assert result.http_status == 401 and not result.same
    assert "HTTP 401" in result.verdict


def test_no_such_decision() -> None:
    with pytest.raises(ReaskError, match="hand 1 has decisions 0 to"):
        rebuild(LOG, 1, 99)


def test_the_reask_command(tmp_path: Path, lowest_url: str, highest_url: str) -> None:
    path = tmp_path / "match.json"
    path.write_text(json.dumps(LOG.to_json()))
    hand, index = next(
        (h, i) for h, i in decisions_of(1) if len(_choices(h, i)) > 1 and h == 1 and i > 8
    )
    common = ["reask", str(path), "--hand", str(hand), "--decision", str(index)]
    same = CliRunner().invoke(main, [*common, "--url", lowest_url, "--secret", SECRET])
    assert same.exit_code == 0, same.output
    lines = same.output.splitlines()
    assert lines[0].startswith(f"request    ok: seat 1 play, {LOG.match_id}:{hand}:{index}; ")
    assert lines[0].endswith("bytes, matches the log's SHA-256")
    assert lines[1] == "answer     HTTP 200"
    assert lines[2].startswith("verdict    ok: same: the log has")
    env = {"GONGZHU_BOT_SECRET": SECRET}
    different = CliRunner().invoke(main, [*common, "--url", highest_url], env=env)
    assert different.exit_code == 1
    assert different.output.splitlines()[2].startswith("verdict    FAILED: different:")
    unset = {"GONGZHU_BOT_SECRET": None}
    unsigned = CliRunner().invoke(main, [*common, "--url", lowest_url], env=unset)
    assert unsigned.exit_code == 2 and "--insecure" in unsigned.output
