"""The protocol's small parts at their edges: the fault names, a decision request built once,
and the note an answer may carry."""

from __future__ import annotations

import dataclasses

import pytest

from bot_sdk.protocol import (
    FALLBACK_NOTE,
    MAX_NOTE,
    DecisionRequest,
    Fault,
    Status,
    body_sha256,
    decision_request,
    encode,
    is_fallback_note,
    read_note,
)
from tests.bot_sdk.bot_sdk_support import play_obs


def test_each_status_says_whether_it_is_a_fault_and_each_fault_its_status() -> None:
    assert [s for s in Status if s.is_fault] == [
        Status.TIMEOUT, Status.ERROR, Status.INVALID, Status.ILLEGAL,
    ]  # fmt: skip
    assert Fault.MALFORMED.status is Status.INVALID and Fault.ILLEGAL.status is Status.ILLEGAL


def test_a_decision_request_is_built_once_and_cannot_change() -> None:
    obs = play_obs()
    request = DecisionRequest(obs, "m1", "d1", time_limit_ms=300, time_bank_ms=1200)
    message = decision_request(
        obs, match_id="m1", decision_id="d1", time_limit_ms=300, time_bank_ms=1200
    )
    assert request.message == message and request.message is request.message
    assert request.body == encode(message) and request.body is request.body
    assert request.sha256 == body_sha256(encode(message))
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.decision_id = "d2"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("body", "note"),
    [
        (b'{"card": "QS", "note": ""}', None),
        (b'{"card": "QS", "note": 7}', None),
        (b'{"card": "QS", "note": ["x"]}', None),
        (b'["not", "an", "object"]', None),
        (b"not json", None),
        (b'{"card": "QS", "note": "' + b"n" * (MAX_NOTE + 1) + b'"}', "n" * MAX_NOTE),
    ],
    ids=["empty", "a number", "a list", "not an object", "not JSON", "too long"],
)
def test_a_note_is_a_short_string_or_nothing(body: bytes, note: str | None) -> None:
    assert read_note(body) == note


def test_only_a_note_that_says_fallback_is_a_fallback() -> None:
    assert is_fallback_note(FALLBACK_NOTE + "the bot raised KeyError")
    assert not is_fallback_note(None) and not is_fallback_note("ducking the pig")
