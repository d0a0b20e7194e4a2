"""The protocol module: builders, canonical encoding, answers and their failure classes."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import pytest

from bot_sdk.protocol import (
    PROTOCOL,
    BotInfo,
    Fault,
    IllegalAnswerError,
    MalformedAnswerError,
    ProtocolVersion,
    WrongKindError,
    answer_of,
    decision_id,
    decision_request,
    decode,
    encode,
    fallback_move,
    hand_end_notice,
    hello_answer,
    hello_request,
    match_end_notice,
    parse_answer,
    parse_hello_answer,
    read_decision,
    read_hand_end,
    read_match_end,
    trick_number,
)
from referee import (
    AnyMove,
    CardSet,
    DecisionKind,
    Expose,
    Game,
    Observation,
    Pass,
    Play,
    RandomPlayer,
    Rules,
    parse_card,
)
from referee.cards import card_name, suit_of

PLAY, EXPOSE, PASS = DecisionKind.PLAY, DecisionKind.EXPOSE, DecisionKind.PASS


def exposing(seed: int = 1) -> tuple[Game, Observation]:
    """Seed 1: seat 3 may expose JD AH, seat 0 TC QS."""
    game = Game(seed=seed)
    return game, game.observation(3)


def passing() -> Observation:
    game = Game(Rules.with_variants("pass_3"), seed=2)
    return game.observation(0)


def playing(*moves: str) -> tuple[Game, Observation]:
    """Seed 1 after both exposures (seat 3 exposes AH), then the given plays."""
    game = Game(seed=1)
    game.push(Expose(3, CardSet.parse("AH")))
    game.push(Expose(0, CardSet()))
    for card in moves:
        game.play(card)
    return game, game.observation(game.to_move)


def request(obs: Observation) -> dict[str, object]:
    return decision_request(
        obs, match_id="m-7", decision_id="m-7:1:0", time_limit_ms=1000, time_bank_ms=30_000
    )


# -- builders --------------------------------------------------------------------------------


def test_decision_request_carries_the_envelope_and_the_exact_observation() -> None:
    _, obs = exposing()
    message = request(obs)
    assert message == {
        "protocol": PROTOCOL,
        "type": "decision",
        "match_id": "m-7",
        "hand_number": 1,
        "trick_number": 0,
        "decision_id": "m-7:1:0",
        "seat": 3,
        "kind": "expose",
        "time_limit_ms": 1000,
        "time_bank_ms": 30_000,
        "observation": obs.to_json(),
    }
    assert read_decision(json.loads(encode(message))) == obs


def test_trick_number_counts_from_one_in_play_and_is_zero_before() -> None:
    assert trick_number(passing()) == 0
    assert trick_number(exposing()[1]) == 0
    assert trick_number(playing()[1]) == 1
    game, _ = playing("2S", "KS", "QS", "4S")
    assert trick_number(game.observation(game.to_move)) == 2


def test_decision_request_needs_a_pending_decision() -> None:
    game = Game(seed=1)
    idle = game.observation(1)  # seed 1: seat 1 holds nothing exposable
    with pytest.raises(ValueError, match="no decision pending"):
        request(idle)


def test_decision_ids_are_stable_strings() -> None:
    assert decision_id("m-7", 3, 12) == "m-7:3:12"


def test_hello_request_before_a_match_and_at_registration() -> None:
    rules = Rules.with_variants("teams")
    message = hello_request(match_id="m-7", seat=2, rules=rules, time_limit_ms=500)
    assert message["rules"] == rules.to_json()
    assert (message["seat"], message["time_limit_ms"], message["time_bank_ms"]) == (2, 500, 30_000)
    bare = hello_request()
    assert (bare["match_id"], bare["seat"], bare["rules"]) == (None, None, None)
    assert bare["protocol"] == PROTOCOL and bare["type"] == "hello"


def test_notices_round_trip() -> None:
    game = Game(Rules(fixed_hands=1), seed=4)
    players = [RandomPlayer(s) for s in range(4)]
    while not game.is_over():
        for decision in game.pending:
            game.push(players[decision.seat].decide(decision))
    assert game.outcome is not None
    view = game.observation(1)
    notice = json.loads(encode(hand_end_notice(game.results[-1], view, match_id="m")))
    assert (notice["type"], notice["seat"], notice["hand_number"]) == ("hand_end", 1, 1)
    assert read_hand_end(notice) == (game.results[-1], view)
    end = json.loads(encode(match_end_notice(game.outcome, match_id="m", seat=1)))
    assert (end["type"], end["seat"]) == ("match_end", 1)
    assert read_match_end(end) == game.outcome


# -- canonical encoding ----------------------------------------------------------------------


def test_encoding_is_canonical_whatever_the_key_order() -> None:
    a = {"b": 1, "a": {"y": [1, 2], "x": "拱猪"}}
    b = {"a": {"x": "拱猪", "y": [1, 2]}, "b": 1}
    assert encode(a) == encode(b) == '{"a":{"x":"拱猪","y":[1,2]},"b":1}'.encode()


def reordered(value: Any) -> Any:
    """The same JSON value with every object's keys in reverse order."""
    if isinstance(value, dict):
        return {key: reordered(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [reordered(item) for item in value]
    return value


def test_encoding_of_a_real_request_is_reproducible_from_its_log() -> None:
    _, obs = exposing()
    body = encode(request(obs))
    logged = json.loads(body)  # what a match log keeps
    assert encode(reordered(logged)) == body
    assert hashlib.sha256(encode(logged)).digest() == hashlib.sha256(body).digest()
    assert b" " not in body and body.startswith(b'{"decision_id":"m-7:1:0","hand_number":1,')


def test_encoding_refuses_nan() -> None:
    with pytest.raises(ValueError):
        encode({"x": float("nan")})
    with pytest.raises(ValueError):
        decode(b'{"x": NaN}')


# -- answers ---------------------------------------------------------------------------------


def test_answers_of_moves_parse_back_to_the_moves() -> None:
    _, expose_obs = exposing()
    pass_obs = passing()
    _, play_obs = playing()
    moves: list[tuple[Observation, AnyMove]] = [
        (expose_obs, Expose(3, CardSet.parse("JD AH"))),
        (expose_obs, Expose(3, CardSet())),
        (pass_obs, Pass(0, CardSet.of(list(pass_obs.legal)[:3]))),
        (play_obs, Play(2, parse_card("2S"))),
    ]
    for obs, move in moves:
        body = encode(answer_of(move))
        assert parse_answer(move.kind, body, obs) == move
    assert answer_of(Play(2, parse_card("QS"))) == {"card": "QS"}
    assert answer_of(Expose(0, CardSet.parse("AH JD"))) == {"expose": ["JD", "AH"]}


def test_unknown_fields_in_an_answer_are_ignored() -> None:
    _, obs = playing()
    assert parse_answer(PLAY, b'{"card": "2S", "comment": "why not"}', obs) == Play(2, 39)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"QS", "not UTF-8 JSON"),
        (b"\xff\xfe", "not UTF-8 JSON"),
        (b'["QS"]', "must be a JSON object"),
        (b"{}", 'no "card" field'),
        (b'{"card": 39}', "must be a card name"),
        (b'{"card": ["2S"]}', "must be a card name"),
        (b'{"card": "2s"}', "is not a card name"),
        (b'{"card": "10S"}', "is not a card name"),
        (b'{"card": "ZZ"}', "is not a card name"),
    ],
)
def test_malformed_play_answers(body: bytes, message: str) -> None:
    _, obs = playing()
    with pytest.raises(MalformedAnswerError, match=message) as caught:
        parse_answer(PLAY, body, obs)
    assert caught.value.fault is Fault.MALFORMED


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"expose": "AH"}', "must be a list of card names"),
        (b'{"expose": ["AH", "AH"]}', "lists AH twice"),
        (b'{"expose": ["AH", null]}', "must be a card name"),
    ],
)
def test_malformed_card_lists(body: bytes, message: str) -> None:
    _, obs = exposing()
    with pytest.raises(MalformedAnswerError, match=message):
        parse_answer(EXPOSE, body, obs)


def test_wrong_kind() -> None:
    _, expose_obs = exposing()
    with pytest.raises(
        WrongKindError, match=r'expose decision: answer \{"expose": \[...\]\}'
    ) as caught:
        parse_answer(EXPOSE, b'{"card": "AH"}', expose_obs)
    assert caught.value.fault is Fault.WRONG_KIND
    _, play_obs = playing()
    with pytest.raises(
        WrongKindError, match=re.escape('a play decision: answer {"card": "QS"}, not "pass"')
    ):
        parse_answer(PLAY, b'{"pass": ["2S", "5S", "6S"]}', play_obs)


def test_illegal_plays_say_why() -> None:
    _, lead = playing()
    with pytest.raises(
        IllegalAnswerError, match="you do not hold QS; your legal cards: 3C"
    ) as caught:
        parse_answer(PLAY, b'{"card": "QS"}', lead)
    assert caught.value.fault is Fault.ILLEGAL
    _, follow = playing("2S")  # seat 3 holds JS KS
    with pytest.raises(
        IllegalAnswerError, match="4H does not follow spades; your legal cards: JS KS"
    ):
        parse_answer(PLAY, b'{"card": "4H"}', follow)


def test_an_exposed_card_held_back_on_its_suits_first_trick() -> None:
    game = Game(seed=1)
    game.push(Expose(3, CardSet()))
    game.push(Expose(0, CardSet.parse("QS")))
    game.play("2S")
    game.play("JS")
    obs = game.observation(0)  # seat 0 holds 3S 8S QS; QS is exposed
    assert parse_card("QS") not in obs.legal
    with pytest.raises(IllegalAnswerError, match="QS may not be played now"):
        parse_answer(PLAY, b'{"card": "QS"}', obs)


def test_illegal_exposures_and_passes() -> None:
    _, expose_obs = exposing()
    with pytest.raises(
        IllegalAnswerError, match="you may not expose QS: you may expose only JD AH"
    ):
        parse_answer(EXPOSE, b'{"expose": ["AH", "QS"]}', expose_obs)
    pass_obs = passing()
    three = [c for c in pass_obs.legal.names()[:3]]
    absent = next(c for c in ("2C", "3C", "4C", "5C") if parse_card(c) not in pass_obs.hand)
    with pytest.raises(IllegalAnswerError, match="pass exactly 3 cards, not 2"):
        parse_answer(PASS, encode({"pass": three[:2]}), pass_obs)
    with pytest.raises(IllegalAnswerError, match=f"you may not pass {absent}"):
        parse_answer(PASS, encode({"pass": [*three[:2], absent]}), pass_obs)


def test_parse_answer_refuses_a_kind_that_is_not_pending() -> None:
    _, obs = exposing()
    with pytest.raises(ValueError, match="has an expose decision, not play"):
        parse_answer(PLAY, b'{"card": "AH"}', obs)


# -- fallback and hello ----------------------------------------------------------------------


def test_fallback_moves_are_the_documented_ones_and_legal() -> None:
    game, expose_obs = exposing()
    assert fallback_move(expose_obs) == Expose(3, CardSet())
    game.push(fallback_move(expose_obs))
    game.push(fallback_move(game.observation(0)))
    lead = game.observation(game.to_move)
    assert fallback_move(lead) == Play(lead.seat, lead.legal.lowest())
    game.push(fallback_move(lead))
    pass_game = Game(Rules.with_variants("pass_3"), seed=2)
    obs = pass_game.observation(0)
    assert fallback_move(obs) == Pass(0, CardSet.of(list(reversed(obs.hand))[:3]))
    pass_game.push(fallback_move(obs))


def test_hello_answers() -> None:
    body = encode(hello_answer("pig-hunter", "2.1"))
    assert parse_hello_answer(body) == BotInfo("pig-hunter", "2.1", ProtocolVersion.V1)
    chosen = b'{"protocol": "gongzhu-bot/2", "name": "x", "version": "1"}'
    assert parse_hello_answer(chosen) == BotInfo("x", "1", ProtocolVersion.V2)
    with pytest.raises(MalformedAnswerError, match='the bot answered protocol "gongzhu-bot/2"'):
        parse_hello_answer(chosen, offered=(ProtocolVersion.V1,))
    with pytest.raises(MalformedAnswerError, match='"name" must be a string of 1 to 64'):
        parse_hello_answer(encode({"protocol": PROTOCOL, "name": "", "version": "1"}))
    with pytest.raises(MalformedAnswerError, match='"version" must be a string'):
        parse_hello_answer(encode({"protocol": PROTOCOL, "name": "x", "version": 2}))
    with pytest.raises(MalformedAnswerError, match="not UTF-8 JSON"):
        parse_hello_answer(b"<html>")


def test_the_sdk_defaults_are_the_arenas() -> None:  # the SDK documents the arena's
    from bot_sdk.protocol import DEFAULT_FAULT_LIMIT, DEFAULT_TIME_BANK_MS, DEFAULT_TIME_LIMIT_MS
    from service.schemas import TimeControlSchema

    assert TimeControlSchema().load({}) == {
        "decision_ms": DEFAULT_TIME_LIMIT_MS,
        "bank_ms": DEFAULT_TIME_BANK_MS,
        "fault_limit": DEFAULT_FAULT_LIMIT,
    }


@pytest.mark.parametrize("protocol", ["gongzhu-bot/0", "gongzhu-bot/3", "", None])
def test_a_hello_in_another_protocol_is_refused(protocol: str | None) -> None:
    body = encode({"protocol": protocol, "name": "n", "version": "1"})
    with pytest.raises(
        MalformedAnswerError, match="the arena speaks gongzhu-bot/1 or gongzhu-bot/2"
    ):
        parse_hello_answer(body)


@pytest.mark.parametrize("missing", ["protocol", "name", "version"])
@pytest.mark.parametrize("as_null", [False, True])
def test_a_hello_answer_missing_a_field_says_which_and_what_to_answer(
    missing: str, as_null: bool
) -> None:
    answer: dict[str, Any] = {"protocol": "gongzhu-bot/2", "name": "n", "version": "1"}
    if as_null:
        answer[missing] = None
    else:
        del answer[missing]
    with pytest.raises(MalformedAnswerError) as refused:
        parse_hello_answer(encode(answer))
    message = str(refused.value)
    assert f'the hello answer has no "{missing}"' in message
    assert 'e.g. {"protocol": "gongzhu-bot/2", "name": "my-bot", "version": "1.0"}' in message
    assert "None" not in message  # Python's, not the protocol's


def test_a_wrong_hello_value_is_shown_as_the_json_the_bot_sent() -> None:
    answer = {"protocol": "gongzhu-bot/2", "name": ["x"], "version": "1"}
    with pytest.raises(MalformedAnswerError, match=r'"name" must be a string .*, not \["x"\]$'):
        parse_hello_answer(encode(answer))
    long = {"protocol": "x" * 500, "name": "n", "version": "1"}
    with pytest.raises(MalformedAnswerError, match=r'protocol "x{79}…: answer a version'):
        parse_hello_answer(encode(long))


def test_a_bot_name_is_1_to_64_characters() -> None:
    answer = encode(hello_answer("n" * 64, "v" * 64))
    assert parse_hello_answer(answer) == BotInfo("n" * 64, "v" * 64)
    for name, version in (("n" * 65, "1"), ("n", "v" * 65), ("", "1")):
        with pytest.raises(MalformedAnswerError, match="a string of 1 to 64 characters"):
            parse_hello_answer(encode(hello_answer(name, version)))


def test_passing_more_cards_than_asked_is_illegal() -> None:
    pass_obs = passing()
    four = pass_obs.legal.names()[:4]
    with pytest.raises(IllegalAnswerError, match="pass exactly 3 cards, not 4"):
        parse_answer(PASS, encode({"pass": four}), pass_obs)


def test_the_wrong_kind_names_the_first_other_field() -> None:
    obs = passing()
    with pytest.raises(WrongKindError, match=r'not "card"$'):
        parse_answer(PASS, encode({"card": "2C", "expose": []}), obs)


def _off_suit_after_a_discard() -> tuple[Observation, str]:
    """A seat to play after a discard (the trick's last card is not of the led suit), holding
    the led suit and a card of a third suit."""
    for seed in range(200):
        game = Game(Rules(fixed_hands=1), seed=seed)
        while not game.is_over():
            decision = game.pending[0]
            obs = game.observation(decision.seat)
            if decision.kind is PLAY and len(obs.trick) >= 2:
                led, last = suit_of(obs.trick[0][1]), suit_of(obs.trick[-1][1])
                others = [c for c in obs.hand if suit_of(c) not in {led, last}]
                if led is not last and others and obs.hand.of_suit(led):
                    return obs, card_name(others[0])
            game.push(fallback_move(obs))
    raise AssertionError("no such position in 200 games")


def test_a_card_that_does_not_follow_names_the_led_suit() -> None:
    obs, card = _off_suit_after_a_discard()
    led = suit_of(obs.trick[0][1])
    with pytest.raises(IllegalAnswerError, match=f"{card} does not follow {led.plural}"):
        parse_answer(PLAY, encode({"card": card}), obs)
