"""The JSON Schema of the current log format: shipped with the package, valid, and precise enough to
refuse a log with a wrong shape (the referee's verification judges the content)."""

from __future__ import annotations

import copy
import random
import tomllib
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from replays import schema
from replays.log import FORMAT
from replays.schema import SCHEMAS, InvalidLogError, load, validate
from tests.replays.replay_support import (
    PROFILES,
    every_log,
    forfeiting_players,
    record,
    reloaded,
    sealed,
)

ROOT = Path(__file__).resolve().parents[2]
Data = dict[str, Any]


def _log() -> Data:
    data: Data = reloaded(sealed(record(PROFILES["pass_next"], 4, forfeiting_players(4))))
    return data


LOG = _log()


def test_the_schema_is_package_data_and_a_valid_draft_2020_12_schema() -> None:
    assert files("replays.schemas").joinpath(SCHEMAS[FORMAT]).is_file()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    assert pyproject["tool"]["setuptools"]["package-data"]["replays.schemas"] == ["*.json"]
    schema = load()
    Draft202012Validator.check_schema(schema)
    assert schema["properties"]["format"] == {"const": FORMAT}


def test_sealed_and_unsealed_logs_are_valid() -> None:
    validate(LOG)
    validate({k: v for k, v in LOG.items() if k != "integrity"})
    for log in list(every_log().values())[::5]:
        validate(reloaded(log.to_json()))


def _decision(data: Data, status: str) -> Data:
    return next(d for hand in data["hands"] for d in hand["decisions"] if d["status"] == status)


def _set(path: str, value: object) -> Callable[[Data], None]:
    """Set the value at ``a/0/b`` in the log."""

    def change(data: Data) -> None:
        *parents, last = (int(p) if p.isdigit() else p for p in path.split("/"))
        node: Any = data
        for key in parents:
            node = node[key]
        node[last] = value

    return change


def _drop(key: str) -> Callable[[Data], None]:
    return lambda data: data.pop(key)


def _fault_without_detail(data: Data) -> None:
    _decision(data, "invalid")["fault"] = None


def _autoplay_with_latency(data: Data) -> None:
    _decision(data, "forfeit-autoplay")["latency_ms"] = 12


def _ok_with_fault(data: Data) -> None:
    _decision(data, "ok")["fault"] = "late"


def _play_with_cards(data: Data) -> None:
    decision = next(d for d in data["hands"][0]["decisions"] if d["kind"] == "play")
    decision["applied"] = {"pass": ["2C", "3C", "4C"]}


BROKEN: dict[str, tuple[Callable[[Data], None], str]] = {
    "card name": (_set("hands/0/deal/2/5", "10S"), "hands/0/deal/2/5: '10S' does not match"),
    "lowercase card": (_set("hands/0/tricks/3/cards/1", "qs"), "hands/0/tricks/3/cards/1"),
    "three seats": (_set("faults", [0, 0, 0]), "faults: [0, 0, 0] is too short"),
    "five places": (_set("places", [1, 2, 3, 4, 4]), "places: [1, 2, 3, 4, 4] is too long"),
    "a deal of 12": (_set("hands/0/deal/0", ["2C"] * 12), "hands/0/deal/0"),
    "unknown status": (_set("hands/0/decisions/0/status", "late"), "'late' is not one of"),
    "unknown kind": (_set("hands/0/decisions/0/kind", "bid"), "'bid' is not one of"),
    "unknown variant": (_set("rules/variants", ["jokers"]), "rules/variants/0"),
    "seats in the wrong order": (
        _set("seats/0/seat", 1),
        "seats/0/seat: 0 was expected",
    ),
    "a missing field": (_drop("outcome"), "'outcome' is a required property"),
    "an unknown field": (_set("comment", "hi"), "Additional properties are not allowed"),
    "a pass of two": (
        _set("hands/0/decisions/0/applied", {"pass": ["2C", "3C"]}),
        "hands/0/decisions/0/applied/pass",
    ),
    "a play applied as a pass": (_play_with_cards, "applied"),
    "a fault without detail": (_fault_without_detail, "fault: None is not of type 'string'"),
    "an auto-play with a latency": (_autoplay_with_latency, "12 is not of type 'null'"),
    "ok with a fault": (_ok_with_fault, "'late' is not of type 'null'"),
    "a bad hash": (_set("hands/0/decisions/0/request_sha256", "abc"), "request_sha256"),
    "a bad signature": (_set("integrity/signature", "not base64!"), "integrity/signature"),
    "a wrong format": (_set("format", "gongzhu-replay/9"), "unknown log format"),
    "a multiplier of 3": (_set("hands/0/result/seats/0/multiplier", 3), "multiplier"),
    "13 tricks": (
        lambda data: data["hands"][0]["tricks"].pop(),
        "hands/0/tricks: [",
    ),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_a_wrong_shape_is_refused_with_where_and_what(name: str) -> None:
    change, message = BROKEN[name]
    data = reloaded(LOG)
    change(data)
    with pytest.raises(InvalidLogError) as refused:
        validate(data)
    assert message in str(refused.value)


def test_not_an_object() -> None:
    with pytest.raises(InvalidLogError, match="a match log is a JSON object, not list"):
        validate([])


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(node, dict):
        return [p for key, value in node.items() for p in _leaves(value, (*path, key))]
    if isinstance(node, list):
        return [p for i, value in enumerate(node) for p in _leaves(value, (*path, i))]
    return [path]


def test_the_fast_check_accepts_no_log_that_jsonschema_refuses() -> None:
    """jsonschema-rs says whether a log is valid, jsonschema why not: a log the first accepts
    must be one the second accepts (it is never asked then)."""
    rng = random.Random(5)
    fast = schema._accepts(FORMAT)
    slow = Draft202012Validator(load(FORMAT))
    refused = 0
    for path in rng.sample(_leaves(LOG), 150):
        for value in rng.sample([None, True, 0, 1.0, -1, 2**70, "", "QS", "0" * 64 + "\n", []], 3):
            changed = copy.deepcopy(LOG)
            where = changed
            for key in path[:-1]:
                where = where[key]
            where[path[-1]] = value
            valid = slow.is_valid(changed)
            assert fast.is_valid(changed) <= valid, (path, value)
            refused += not valid
    assert refused > 100
