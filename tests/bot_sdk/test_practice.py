"""The practice runner: duplicate deals from every seat, per-hand lines, the decisions to look
at (fallbacks, time-limit overruns) and a summary."""

from __future__ import annotations

import io
import time

import pytest
from click.testing import CliRunner

from bot_sdk.bot import FunctionBot
from bot_sdk.house import EasyBot
from bot_sdk.practice import load_bot, practice, practice_command
from bot_sdk.server import make_app
from referee import DECK, HandResult, Observation, Outcome, Rules
from tests.bot_sdk.bot_sdk_support import running


def test_practice_plays_every_match_from_every_seat_on_the_same_deals() -> None:
    out = io.StringIO()
    report = practice(
        EasyBot(1), ("easy", "normal", "easy"), matches=2, seed=9, rules=Rules(fixed_hands=3),
        out=out,
    )  # fmt: skip
    assert len(report.games) == 8
    assert [g.seating.index(0) for g in report.games] == [0, 1, 2, 3] * 2
    for match in (0, 1):
        games = [g for g in report.games if g.match == match]
        assert all(len(g.hands) == 3 and g.deals == games[0].deals for g in games)
    assert report.games[0].deals != report.games[4].deals
    for participant in range(4):
        summary = report.summary(participant)
        assert len(summary.points) == 8 * 3
        assert sum(summary.places) == 8
    text = out.getvalue()
    assert text.count("  hand ") == 8 * 3
    assert "house-easy" in text and "house-normal #2" in text and "95% CI" in text


def test_practice_counts_hands_of_whole_matches() -> None:
    report = practice("easy", ("easy", "easy", "easy"), matches=1, seed=2, out=None)
    for participant in range(4):
        assert len(report.summary(participant).points) == sum(len(g.hands) for g in report.games)


def test_bots_load_from_a_house_level_a_module_class_spec_or_a_url() -> None:
    assert load_bot("Hard", "s").name == "house-hard"
    assert load_bot("bot_sdk.house:NormalBot", "s").name == "house-normal"
    remote = load_bot("http://127.0.0.1:9/bot", "s", secret="shh", timeout_s=0.5)
    assert type(remote).__name__ == "RemoteBot"
    with pytest.raises(ValueError, match="module:Class"):
        load_bot("no-such-bot", "s")


def test_the_practice_command_prints_a_summary() -> None:
    result = CliRunner().invoke(
        practice_command,
        ["normal", "--opponents", "easy,easy,easy", "--matches", "1", "--quiet"],
    )
    assert result.exit_code == 0, result.output
    assert result.output.count("\n") == 6 and "house-normal" in result.output
    assert result.output.endswith("every decision legal, in time and the bot's own\n")


def test_the_practice_command_refuses_an_unknown_variant() -> None:
    result = CliRunner().invoke(practice_command, ["easy", "--variant", "no_such_rule"])
    assert result.exit_code != 0 and "no_such_rule" in result.output


def test_an_illegal_move_is_answered_with_the_fallback_and_reported_per_decision() -> None:
    cheat = FunctionBot(play=lambda obs: (DECK - obs.hand).lowest(), name="cheat")
    out = io.StringIO()
    report = practice(cheat, matches=1, rules=Rules(fixed_hands=1), out=out)
    incidents = [i for game in report.games for i in game.incidents]
    assert len(incidents) == 4 * 13  # every play of the bot, from each seat: the match went on
    assert {(i.name, i.kind, i.hand) for i in incidents} == {("cheat", "play", 1)}
    assert "fallback played: the bot's move was refused: you do not hold" in incidents[0].what
    assert incidents[0].line() in out.getvalue()
    assert "52 decisions to look at (0 over the time limit, 52 fallbacks)" in out.getvalue()


def test_a_bot_over_the_time_limit_or_raising_is_reported() -> None:
    def slow_then_raise(obs: Observation) -> int:
        if len(obs.hand) == 13:
            time.sleep(0.03)
            return obs.legal.lowest()
        raise ValueError("no idea")

    bot = FunctionBot(play=slow_then_raise, name="shaky")
    report = practice(bot, matches=1, rules=Rules(fixed_hands=1), out=None, time_limit_ms=20)
    whats = [i.what for game in report.games for i in game.incidents if i.name == "shaky"]
    assert whats.count("over the 20 ms time limit") == 4
    assert whats.count("fallback played: the bot raised ValueError: no idea") == 4 * 12


def test_a_served_bots_own_fallbacks_are_reported() -> None:
    broken = FunctionBot(play=lambda obs: 1 // 0, name="broken")
    with running(make_app(broken, None, verify_signatures=False)) as url:
        report = practice(url, matches=1, rules=Rules(fixed_hands=1), out=None)
    whats = {i.what for game in report.games for i in game.incidents}
    assert whats == {
        "the served bot answered its own fallback: fallback: the bot raised "
        "ZeroDivisionError: integer division or modulo by zero"
    }


class Listener(EasyBot):
    """Counts the notifications a bot gets."""

    def __init__(self) -> None:
        super().__init__(0)
        self.hands: list[tuple[int, int]] = []
        self.matches = 0

    def hand_end(self, result: HandResult, observation: Observation) -> None:
        self.hands.append((result.hand_number, len(observation.tricks)))

    def match_end(self, outcome: Outcome) -> None:
        self.matches += 1


def test_the_bot_hears_of_every_hand_end_and_match_end() -> None:
    bot = Listener()
    report = practice(bot, matches=1, rules=Rules(fixed_hands=2), out=None)
    assert bot.matches == 4
    # The view of a hand's end is taken at its last play: twelve tricks done.
    assert bot.hands == [(1, 12), (2, 12)] * 4
    assert len(report.games) == 4
