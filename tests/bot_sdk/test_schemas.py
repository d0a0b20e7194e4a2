"""The JSON Schemas: shipped with the package, valid, complete, and matching real messages."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from bot_sdk.protocol import (
    PROTOCOL,
    SPOKEN,
    Message,
    ProtocolVersion,
    answer_of,
    encode,
    fallback_move,
    hello_answer,
    hello_request,
    parse_answer,
    read_decision,
)
from bot_sdk.schemas import (
    NAMES,
    InvalidMessageError,
    bundled,
    load,
    request_schema,
    validate,
    validate_request,
)
from referee import DecisionKind, Game, Observation, RandomPlayer, Rules
from tests.bot_sdk.bot_sdk_support import VARIANT_PROFILES, record_match

ROOT = Path(__file__).resolve().parents[2]


def strict(schema: Any) -> Any:
    """The schema with ``additionalProperties: false`` on every object that names properties:
    a message with a field the schema does not document then fails."""
    if isinstance(schema, list):
        return [strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: strict(value) for key, value in schema.items()}
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


@cache
def strict_validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(strict(bundled(name)))


def check_strictly(name: str, instance: Any) -> None:
    errors = list(strict_validator(name).iter_errors(instance))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}"[:300] for e in errors]


def sample(messages: list[Message]) -> list[Message]:
    """Every notice and non-play decision, and every 5th play (the suite stays fast)."""
    return [
        m
        for i, m in enumerate(messages)
        if m["type"] != "decision" or m["kind"] != "play" or i % 5 == 0
    ]


def test_every_schema_is_shipped_as_package_data_and_is_a_valid_2020_12_schema() -> None:
    shipped = {p.name for p in files("bot_sdk.schemas").iterdir() if p.name.endswith(".json")}
    assert shipped == {f"{name}.json" for name in NAMES}
    for name in NAMES:
        schema = load(name)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        Draft202012Validator.check_schema(schema)
        Draft202012Validator.check_schema(bundled(name))
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    assert "*.json" in config["tool"]["setuptools"]["package-data"]["bot_sdk.schemas"]


def test_request_schemas_require_every_field_they_name() -> None:
    """Every documented field is always sent (null when it does not apply); an answer's
    ``note`` alone is optional, and a hello's ``protocols``, which an arena that speaks
    ``gongzhu-bot/1`` only does not send."""

    def walk(schema: Any) -> None:
        if isinstance(schema, dict):
            if "properties" in schema:
                named = set(schema["properties"]) - {"note", "protocols"}
                assert set(schema["required"]) == named, schema.get("title")
            for value in schema.values():
                walk(value)
        elif isinstance(schema, list):
            for item in schema:
                walk(item)

    for name in NAMES:
        walk(bundled(name))


@pytest.mark.parametrize("protocol", SPOKEN)
@pytest.mark.parametrize("profile", sorted(VARIANT_PROFILES))
def test_real_requests_of_every_variant_match_the_schemas_exactly(
    profile: str, protocol: ProtocolVersion
) -> None:
    rules = VARIANT_PROFILES[profile]
    match_id = f"schema-{profile}"
    messages = list(record_match(rules, seed=11, match_id=match_id, protocol=protocol))
    kinds = {m["kind"] for m in messages if m["type"] == "decision"}
    assert "play" in kinds and ("pass" in kinds) == rules.passing
    assert {m["type"] for m in messages} == {"decision", "hand_end", "match_end"}
    check_strictly("hello_request", hello_request(match_id="m", seat=0, rules=rules))
    observation = "observation" if protocol is ProtocolVersion.V1 else "observation_2"
    for message in sample(messages):
        kind = validate_request(message)
        assert kind.value == message["type"]
        check_strictly(request_schema(kind, protocol), message)
        if message["type"] == "decision":
            check_strictly(observation, message["observation"])
            obs = read_decision(message)
            check_strictly(f"{message['kind']}_answer", answer_of(fallback_move(obs)))


def test_random_answers_match_the_answer_schemas() -> None:
    game = Game(Rules.with_variants("pass_3", fixed_hands=1), seed=5)
    players = [RandomPlayer(s) for s in range(4)]
    while not game.is_over():
        for decision in game.pending:
            move = players[decision.seat].decide(decision)
            check_strictly(f"{decision.kind.value}_answer", answer_of(move))
            game.push(move)
    check_strictly("hello_answer", hello_answer("random", "1"))


@pytest.mark.parametrize(
    ("name", "answer"),
    [
        ("play_answer", {"card": "qs"}),
        ("play_answer", {"card": "10S"}),
        ("play_answer", {"card": 39}),
        ("play_answer", {"expose": []}),
        ("expose_answer", {"expose": ["AH", "AH"]}),
        ("expose_answer", {"expose": "AH"}),
        ("pass_answer", {"pass": []}),
        ("hello_answer", {"protocol": "gongzhu-bot/3", "name": "x", "version": "1"}),
        ("hello_answer", {"protocol": PROTOCOL, "name": "", "version": "1"}),
    ],
)
def test_the_answer_schemas_refuse_what_parse_answer_calls_malformed(
    name: str, answer: Any
) -> None:
    with pytest.raises(InvalidMessageError):
        validate(name, answer)


def decision(obs: Observation) -> Message:
    return {
        "protocol": PROTOCOL,
        "type": "decision",
        "match_id": "m",
        "hand_number": 1,
        "trick_number": 0,
        "decision_id": "m:1:0",
        "seat": obs.seat,
        "kind": "expose",
        "time_limit_ms": 1000,
        "time_bank_ms": 30_000,
        "observation": obs.to_json(),
    }


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda m: m.update(protocol="gongzhu-bot/3"), "speaks gongzhu-bot/1 and gongzhu-bot/2"),
        (lambda m: m.update(protocol="gongzhu-bot/2"), "'last_result' is a required property"),
        (lambda m: m.update(type="chat"), "unknown request type 'chat'"),
        (lambda m: m.pop("decision_id"), "'decision_id' is a required property"),
        (lambda m: m.update(seat=4), "seat: 4 is greater than the maximum of 3"),
        (lambda m: m.update(time_limit_ms=-1), "time_limit_ms: -1 is less than the minimum"),
        (lambda m: m["observation"]["hand"].__setitem__(0, "1X"), "hand/0: '1X' does not"),
        (lambda m: m["observation"]["rules"].update(variants=["chess"]), "observation/rules"),
    ],
)
def test_invalid_requests_are_refused_with_the_field_and_the_problem(
    change: Any, message: str
) -> None:
    request = decision(Game(seed=1).observation(3))
    validate_request(request)
    change(request)
    with pytest.raises(InvalidMessageError, match=message):
        validate_request(request)


def test_parse_answer_and_the_schema_agree_on_a_valid_answer() -> None:
    obs = Game(seed=1).observation(3)
    answer = {"expose": ["JD", "AH"]}
    validate("expose_answer", answer)
    assert answer_of(parse_answer(DecisionKind.EXPOSE, encode(answer), obs)) == answer
