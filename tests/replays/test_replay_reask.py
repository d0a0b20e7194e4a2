"""Re-asking a real bot server on loopback: the bot that played answers the same, another version
of it is reported as different, another bot is refused, and what cannot be asked again is
refused."""

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
from replays.reask import ReaskError, WrongBotError, reask, rebuild
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
    """Another version of the bot of seat 1 (lowest-card 1.0), which plays otherwise."""

    name = "lowest-card"
    version = "2.0"

    def play(self, obs: Observation) -> Card:
        return obs.legal.highest()


class Stranger(LowestCard):
    """Plays as seat 1's bot does, but is another bot."""

    name = "stranger"


class Scripted(LowestCard):
    """The bot of seat 2 (scripted-2 2.1), now answering legally where it sent a malformed
    answer."""

    name = "scripted-2"
    version = "2.1"


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


def test_another_version_is_reported_as_different(highest_url: str) -> None:
    hand, index = next(
        (h, i)
        for h, i in decisions_of(1)
        if LOG.hands[h - 1].decisions[i].kind.value == "play"
        and len(_choices(h, i)) > 1  # a choice to make
    )
    result = reask(LOG, hand, index, highest_url, SECRET)
    assert not result.same and result.move is not None
    assert (result.bot.name, result.bot.version) == ("lowest-card", "2.0")
    assert result.verdict.startswith("different: the log has {")


def test_another_bot_is_not_asked_a_decision_of_a_seat_it_did_not_hold(lowest_url: str) -> None:
    house_hand, house_index = decisions_of(0)[0]  # seat 0: a house bot, "random"
    with pytest.raises(WrongBotError) as refused:
        reask(LOG, house_hand, house_index, lowest_url, SECRET)
    assert str(refused.value) == (
        "the decision is seat 0's, played by random 1 (house-0); the bot at "
        f"{lowest_url} is lowest-card 1.0, so its answer says nothing about that decision (it "
        "held seat 1 of this match: re-ask a decision of its own)"
    )
    with running(make_app(Stranger, SECRET)) as stranger:
        hand, index = decisions_of(1)[0]
        with pytest.raises(WrongBotError, match=f"it did not play in match {LOG.match_id}"):
            reask(LOG, hand, index, stranger, SECRET)


def _choices(hand: int, index: int) -> list[str]:
    obs = rebuild(LOG, hand, index).observation
    assert obs.decision is not None
    return obs.decision.choices.names()


def test_a_refused_answer_is_the_same_only_if_the_bot_says_it_again() -> None:
    hand, index = decisions_of(2, Status.INVALID)[0]
    with running(make_app(Scripted, SECRET)) as url:
        result = reask(LOG, hand, index, url, SECRET)
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


def test_a_wrong_secret_is_refused_at_the_hello(lowest_url: str) -> None:
    hand, index = decisions_of(1)[0]
    with pytest.raises(WrongBotError, match="refused the hello's signature \\(HTTP 401: ") as no:
        reask(LOG, hand, index, lowest_url, "not-the-secret")
    assert "--secret or GONGZHU_BOT_SECRET" in str(no.value)
    assert "not-the-secret" not in str(no.value)


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
    assert lines[1] == "bot        ok: lowest-card 1.0, as in seat 1 of the match"
    assert lines[2] == "answer     HTTP 200"
    assert lines[3].startswith("verdict    ok: same: the log has")
    env = {"GONGZHU_BOT_SECRET": SECRET}
    different = CliRunner().invoke(main, [*common, "--url", highest_url], env=env)
    assert different.exit_code == 1
    lines = different.output.splitlines()
    assert lines[1] == (
        "bot        lowest-card 2.0; seat 1 played version 1.0: another version may answer "
        "otherwise"
    )
    assert lines[3].startswith("verdict    FAILED: different:")
    house_hand, house_index = decisions_of(0)[0]
    house = ["reask", str(path), "--hand", str(house_hand), "--decision", str(house_index)]
    refused = CliRunner().invoke(main, [*house, "--url", lowest_url], env=env)
    assert refused.exit_code == 1
    assert refused.output.startswith("bot        FAILED: the decision is seat 0's, played by ")
    unset = {"GONGZHU_BOT_SECRET": None}
    unsigned = CliRunner().invoke(main, [*common, "--url", lowest_url], env=unset)
    assert unsigned.exit_code == 2 and "--insecure" in unsigned.output
