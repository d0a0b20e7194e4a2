"""The practice runner: duplicate deals from every seat, per-hand lines and a summary."""

from __future__ import annotations

import io

import pytest
from click.testing import CliRunner

from bot_sdk.bot import FunctionBot
from bot_sdk.house import EasyBot
from bot_sdk.practice import load_bot, practice, practice_command
from referee import DECK, HandResult, IllegalMoveError, Observation, Outcome, Rules


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
    assert result.output.count("\n") == 5 and "house-normal" in result.output


def test_the_practice_command_refuses_an_unknown_variant() -> None:
    result = CliRunner().invoke(practice_command, ["easy", "--variant", "no_such_rule"])
    assert result.exit_code != 0 and "no_such_rule" in result.output


def test_an_illegal_move_names_the_bot_and_the_hand() -> None:
    cheat = FunctionBot(play=lambda obs: (DECK - obs.hand).lowest(), name="cheat")
    with pytest.raises(IllegalMoveError, match=r"cheat in seat 0, match 1, hand 1: .*hold"):
        practice(cheat, matches=1, rules=Rules.with_variants("no_exposure"), out=None)


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
