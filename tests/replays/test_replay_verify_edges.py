"""The verifier's comparisons in both directions: each number of the log moved up and down, a
trick dropped or added, an id that sorts before or after the right one, an answer that is a
lower or a higher legal card; and what a failed verification reports. (A check written as
``<`` where ``!=`` is meant finds only half of these.)"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from referee import Rules
from referee.cards import card_name
from replays.log import MatchLog
from replays.upgrade import read_log
from replays.verify import Discrepancy, replay, verify
from tests.replays.replay_support import DEAL_SECRET, house_seat, record, reloaded
from tests.replays.test_replay_tamper import CLEAN, Data, decisions, first, tampered

HOUSE = 0
"""A seat played in-process: its records carry time fields but no request hash."""


def _house_decision(data: Data) -> int:
    return first(data, 1, lambda d: d["seat"] == HOUSE and d["kind"] == "play")


def _moved(path: tuple[str | int, ...], by: int) -> Callable[[Data], None]:
    def edit(data: Data) -> None:
        *parents, last = path
        node: Any = data
        for key in parents:
            node = node[key]
        node[last] += by

    return edit


@pytest.mark.parametrize("by", [-1, 1])
@pytest.mark.parametrize(
    ("path", "message"),
    [
        (("hands", 1, "result", "totals", 3), "totals: log says"),
        (("hands", 0, "result", "seats", 1, "hearts"), "seat 1 hearts: log says"),
        (("hands", 1, "tricks", 4, "winner"), "trick 5: log says"),
        (("outcome", "totals", 0), "outcome: log says"),
        (("faults", 2), "fault counts: log says"),
        (("hands", 0, "hand_number"), "hands out of order: expected 1"),
    ],
)
def test_a_number_moved_either_way_is_found(
    path: tuple[str | int, ...], by: int, message: str
) -> None:
    if path[-1] == "winner":
        winner = CLEAN.to_json()["hands"][1]["tricks"][4]["winner"]
        by = by if 0 <= winner + by <= 3 else -by * 2
    assert message in tampered(CLEAN, _moved(path, by)).message


@pytest.mark.parametrize("by", [-1, 1])
@pytest.mark.parametrize(
    ("field", "message"),
    [("time_limit_ms", "time limit: the request says"), ("time_bank_ms", "time bank: the")],
)
def test_a_time_field_moved_either_way_is_found(field: str, by: int, message: str) -> None:
    index = _house_decision(reloaded(CLEAN.to_json()))

    def edit(data: Data) -> None:
        decisions(data)[index][field] += by

    found = tampered(CLEAN, edit)
    assert (found.hand, found.decision) == (1, index) and message in found.message


def test_places_changed_either_way_are_found() -> None:
    places = list(CLEAN.places)
    for changed in (places[::-1], places[1:] + places[:1]):

        def edit(data: Data, changed: list[int] = changed) -> None:
            data["places"] = changed

        assert "places: log says" in tampered(CLEAN, edit).message


@pytest.mark.parametrize("digest", ["0" * 64, "f" * 64])
def test_a_request_hash_either_side_of_the_right_one_is_found(digest: str) -> None:
    index = first(reloaded(CLEAN.to_json()), 1, lambda d: d.get("request_sha256"))

    def edit(data: Data) -> None:
        decisions(data)[index]["request_sha256"] = digest

    assert "does not match its SHA-256" in tampered(CLEAN, edit).message


@pytest.mark.parametrize("change", [lambda i: i[:-1], lambda i: i + "0"])
def test_a_decision_id_sorting_before_or_after_is_found(change: Callable[[str], str]) -> None:
    index = _house_decision(reloaded(CLEAN.to_json()))

    def edit(data: Data) -> None:
        decisions(data)[index]["decision_id"] = change(decisions(data)[index]["decision_id"])

    assert "decisions were moved or dropped" in tampered(CLEAN, edit).message


def _answered(log: MatchLog) -> tuple[int, list[str], str]:
    """An ok play answered over "HTTP", its other legal cards, and the card applied."""
    for hand, index, decision, obs in replay(log):
        legal = [card_name(c) for c in obs.legal]
        if hand.hand_number == 1 and decision.answer and decision.kind.value == "play":
            applied = decision.answer.split('"')[3]
            if legal.index(applied) not in (0, len(legal) - 1):
                return index, legal, applied
    raise AssertionError("no play with a lower and a higher legal card")


def test_an_answer_that_is_another_legal_card_either_way_is_found() -> None:
    index, legal, applied = _answered(CLEAN)
    at = legal.index(applied)
    for other in (legal[at - 1], legal[at + 1]):

        def edit(data: Data, other: str = other) -> None:
            decisions(data)[index]["answer"] = f'{{"card": "{other}"}}'

        assert f'answer {{"card": "{other}"}} is not the applied' in tampered(CLEAN, edit).message


def _led_by_seat_1_or_2() -> MatchLog:
    for seed in range(1, 40):
        log = record(Rules(fixed_hands=1), seed, [house_seat(s, f"l-{s}") for s in range(4)])
        if log.hands[0].first_leader in (1, 2):
            return log
    raise AssertionError("no such deal")


def test_a_first_leader_changed_either_way_is_found() -> None:
    log = _led_by_seat_1_or_2()
    leader = log.hands[0].first_leader
    for changed in (leader - 1, leader + 1):

        def edit(data: Data, changed: int = changed) -> None:
            data["hands"][0]["first_leader"] = changed

        message = tampered(log, edit).message
        assert message == f"first leader: log says {changed}, referee says {leader}"


def test_a_trick_dropped_or_added_is_found() -> None:
    def dropped(data: Data) -> None:
        data["hands"][0]["tricks"].pop()

    def added(data: Data) -> None:
        data["hands"][0]["tricks"].append(data["hands"][0]["tricks"][-1])

    assert tampered(CLEAN, dropped).message == "12 tricks logged, 13 played"
    assert tampered(CLEAN, added).message == "14 tricks logged, 13 played"


def test_a_decision_after_the_hand_ended_is_extra() -> None:
    def extra(data: Data) -> None:
        decisions(data, 1).append(dict(decisions(data, 2)[0]))

    found = tampered(CLEAN, extra)
    assert found.message == "the hand was already over: extra decisions"


def test_a_decision_out_of_turn_says_who_was_asked() -> None:
    index = first(reloaded(CLEAN.to_json()), 1, lambda d: d["kind"] == "play")

    def swap(data: Data) -> None:
        moves = decisions(data)
        moves[index], moves[index + 1] = moves[index + 1], moves[index]

    seat = decisions(reloaded(CLEAN.to_json()))[index]["seat"]
    assert f"(seat {seat} play was)" in tampered(CLEAN, swap).message


def test_deals_are_checked_only_with_the_committed_secret() -> None:
    assert verify(CLEAN).ok and not verify(CLEAN).deals_checked  # not revealed yet
    assert verify(CLEAN, secret=DEAL_SECRET).deals_checked
    wrong = verify(CLEAN, secret=bytes(32))
    assert (wrong.ok, wrong.decisions, wrong.requests_checked, wrong.deals_checked) == (
        False,
        0,
        0,
        False,
    )
    assert wrong.discrepancy is not None
    assert wrong.discrepancy.message.startswith("deals: the secret does not match the commitment")


def test_a_failed_verification_says_the_deals_were_not_checked() -> None:
    data = reloaded(CLEAN.to_json())
    data["faults"][0] += 1
    result = verify(read_log(data), secret=DEAL_SECRET)
    assert not result.ok and not result.deals_checked


def test_a_discrepancy_says_where() -> None:
    assert str(Discrepancy(None, None, "m")) == "match: m"
    assert str(Discrepancy(2, None, "m")) == "hand 2: m"
    assert str(Discrepancy(2, 5, "m")) == "hand 2, decision 5: m"
    with pytest.raises(dataclasses.FrozenInstanceError):
        Discrepancy(None, None, "m").message = "n"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        verify(CLEAN).ok = False  # type: ignore[misc]
