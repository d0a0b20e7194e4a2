"""``gongzhu-bot/2`` beside ``gongzhu-bot/1``: the version chosen in the hello, requests whose
size does not grow with the match, and the SDK giving a bot the same observations in both."""

from __future__ import annotations

import time
from typing import Any

import pytest
from click.testing import CliRunner

from bot_sdk import Bot
from bot_sdk.bot import CardsAnswer
from bot_sdk.cli import main, prepare_bot
from bot_sdk.dispatch import Dispatcher
from bot_sdk.protocol import (
    SPOKEN,
    DecisionRequest,
    Message,
    ProtocolVersion,
    choose_protocol,
    decision_request,
    encode,
    hello_request,
    last_result,
)
from bot_sdk.schemas import validate_request
from referee import Card, HandResult, Observation, Outcome, Rules
from tests.bot_sdk.bot_sdk_support import observations, record_match

V1, V2 = ProtocolVersion.V1, ProtocolVersion.V2
LONG = Rules(fixed_hands=20, max_hands=20)
LOWEST_CARD = "bot_sdk.examples.lowest_card:LowestCard"


def sizes_by_hand(protocol: ProtocolVersion) -> dict[int, int]:
    """The largest request body of each hand of a 20-hand match, in ``protocol``."""
    largest: dict[int, int] = {}
    for n, obs in enumerate(observations(LONG, 5)):
        body = DecisionRequest(obs, "t-1:table-2:match-3", f"t-1:table-2:match-3:{n}", 1000, 30_000,
                               protocol).body  # fmt: skip
        largest[obs.hand_number] = max(largest.get(obs.hand_number, 0), len(body))
    return largest


def test_version_2_requests_stay_flat_through_a_20_hand_match_and_version_1_grow() -> None:
    two, one = sizes_by_hand(V2), sizes_by_hand(V1)
    assert len(two) == len(one) == 20
    assert two[20] <= two[1] * 1.2  # the current hand, and at most one earlier result
    assert max(two.values()) - min(two[h] for h in range(2, 21)) <= 256
    assert one[20] >= 5 * one[1]  # every earlier result, again in every request
    assert abs(two[1] - one[1]) <= 16  # hand 1: the same but for the version's name


def test_last_result_is_the_hand_just_finished_until_the_first_trick_is_complete() -> None:
    seen = 0
    for obs in observations(Rules.with_variants("pass_3", fixed_hands=3), 8):
        message = decision_request(
            obs, match_id="m", decision_id="m:1:0", time_limit_ms=1000, time_bank_ms=0,
            protocol=V2,
        )  # fmt: skip
        assert "results" not in message["observation"]
        validate_request(message)
        if obs.hand_number > 1 and not obs.tricks:
            assert message["last_result"] == obs.results[-1].to_json()
            seen += 1
        else:
            assert message["last_result"] is None and last_result(obs) is None
        assert encode(message) == DecisionRequest(obs, "m", "m:1:0", 1000, 0, V2).body
    assert seen >= 2 * 8  # each of hands 2 and 3: every seat's pass and first play at least


@pytest.mark.parametrize(
    ("offered", "speaks", "chosen"),
    [
        (SPOKEN, SPOKEN, V2),
        ((V1,), SPOKEN, V1),  # an arena that offers gongzhu-bot/1 only
        (None, SPOKEN, V1),  # an arena from before versions were offered
        (SPOKEN, (V1,), V1),  # a bot told to speak gongzhu-bot/1
        ((V2, V1), SPOKEN, V2),
    ],
)
def test_a_bot_chooses_the_latest_version_both_sides_speak(
    offered: tuple[ProtocolVersion, ...] | None,
    speaks: tuple[ProtocolVersion, ...],
    chosen: ProtocolVersion,
) -> None:
    hello = hello_request(protocols=offered or SPOKEN)
    if offered is None:
        del hello["protocols"]
    validate_request(hello)
    assert choose_protocol(hello, speaks) is chosen
    answer = Dispatcher(Recording, protocols=speaks).hello(hello)
    assert answer["protocol"] == chosen.value


class Recording(Bot):
    """Plays by what it sees of the earlier hands (a bot that misses them plays otherwise),
    and keeps everything the SDK gives it."""

    name = "recording"

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def play(self, obs: Observation) -> Card:
        self.seen.append(obs)
        legal = sorted(obs.legal)
        return legal[len(obs.results) % len(legal)]

    def expose(self, obs: Observation) -> CardsAnswer:
        self.seen.append(obs)
        return list(obs.legal) if len(obs.results) % 2 else []

    def pass_cards(self, obs: Observation) -> CardsAnswer:
        self.seen.append(obs)
        return super().pass_cards(obs)

    def hand_end(self, result: HandResult, observation: Observation) -> None:
        self.seen.append(("hand_end", result, observation))

    def match_end(self, outcome: Outcome) -> None:
        self.seen.append(outcome)


def served(messages: list[Message], *, drop_hand_ends: bool = False) -> list[Any]:
    """What seat 2's bot is given by the SDK for the messages of a match, in order."""
    bots: list[Recording] = []

    def made() -> Recording:
        bots.append(Recording())
        return bots[-1]

    dispatcher = Dispatcher(made)
    for message in messages:
        if message["seat"] != 2 or (drop_hand_ends and message["type"] == "hand_end"):
            continue
        validate_request(message)
        if message["type"] == "decision":
            dispatcher.decision(message, time.monotonic())
        elif message["type"] == "hand_end":
            dispatcher.hand_end(message)
        else:
            dispatcher.match_end(message)
    (bot,) = [b for b in bots if b.seen]
    return bot.seen


@pytest.mark.parametrize("rules", [Rules(fixed_hands=4), Rules.with_variants("pass_3", "teams")])
def test_the_sdk_gives_a_bot_the_same_observations_in_both_versions(rules: Rules) -> None:
    one = list(record_match(rules, seed=3, match_id="m-1"))
    two = list(record_match(rules, seed=3, match_id="m-1", protocol=V2))
    assert {m["protocol"] for m in one} == {V1} and {m["protocol"] for m in two} == {V2}
    seen = served(one)
    assert len(seen) > 4 * 13 and any(isinstance(s, Observation) and s.results for s in seen)
    assert served(two) == seen
    # a hand_end lost on the way: the results still come, in the next hand's first decisions
    decided = [s for s in seen if not (isinstance(s, tuple) and s[0] == "hand_end")]
    assert served(two, drop_hand_ends=True) == decided


def test_the_command_line_keeps_a_bot_on_version_1_when_told() -> None:
    options = {"secret_envs": (), "insecure": True, "margin_ms": 100, "no_fallback": False}
    told = prepare_bot(LOWEST_CARD, **options, protocols=(V1.value,), log_level="warning")
    default = prepare_bot(LOWEST_CARD, **options, protocols=SPOKEN, log_level="warning")
    assert told.dispatcher.hello(hello_request())["protocol"] == V1
    assert default.dispatcher.hello(hello_request())["protocol"] == V2
    usage = CliRunner().invoke(main, ["serve", LOWEST_CARD, "--protocol", "gongzhu-bot/3"])
    assert usage.exit_code == 2 and "'gongzhu-bot/3' is not one of" in usage.output
