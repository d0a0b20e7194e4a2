"""A changed log is caught: by the referee's verification (a card, a score, the order, a
status) and, for a sealed log, by its digest and signature (any byte at all)."""

from __future__ import annotations

import base64
import json
import random
import zlib
from collections.abc import Callable
from typing import Any

import pytest

from arena.match_loop import SeatPlayer
from bot_sdk.protocol import fallback_move
from referee import CardSet, Rules
from replays.integrity import IntegrityError, canonical, check, generate_key, pack, seal, unpack
from replays.log import MatchLog, TimeControl
from replays.upgrade import LogReadError, read_log
from replays.verify import Discrepancy, replay, verify
from tests.replays.replay_support import (
    DEAL_SECRET,
    KEY_ID,
    PROFILES,
    PUBLIC_KEYS,
    ScriptedSeat,
    always,
    forfeiting_players,
    house_seat,
    in_turn,
    record,
    reloaded,
    sealed,
)

Data = dict[str, Any]


def _clean() -> MatchLog:
    """Two hands; seats 1 and 3 "over HTTP" (hashed requests), never a fault."""
    players: list[SeatPlayer] = [
        house_seat(0, "t-0"),
        ScriptedSeat(1, always("ok"), seed="t-1"),
        house_seat(2, "t-2"),
        ScriptedSeat(3, always("ok"), seed="t-3"),
    ]
    return record(Rules(fixed_hands=2), 8, players)


def _faulty() -> MatchLog:
    """Early in hand 1, seat 1 commits four kinds of fault, seat 3 is late twice and then
    answers with an HTTP error (five faults would forfeit)."""
    faults = in_turn("ok", "slow", "ok", "timeout", "malformed", "ok", "illegal")
    players: list[SeatPlayer] = [
        house_seat(0, "f-0"),
        ScriptedSeat(1, faults, seed="f-1"),
        house_seat(2, "f-2"),
        ScriptedSeat(3, in_turn("late", "ok", "late", "error"), seed="f-3"),
    ]
    return record(PROFILES["standard"], 9, players)


CLEAN = _clean()
FAULTY = _faulty()


def tampered(log: MatchLog, change: Callable[[Data], object], **options: Any) -> Discrepancy:
    """The discrepancy verify finds after ``change`` to the log's JSON."""
    data = reloaded(log.to_json())
    change(data)
    result = verify(read_log(data), **options)
    assert not result.ok and result.discrepancy is not None
    return result.discrepancy


def decisions(data: Data, hand: int = 1) -> list[Data]:
    found: list[Data] = data["hands"][hand - 1]["decisions"]
    return found


def first(data: Data, hand: int, test: Callable[[Data], bool]) -> int:
    return next(i for i, d in enumerate(decisions(data, hand)) if test(d))


# -- the deal ---------------------------------------------------------------------------------


def swap_deal_card(data: Data, hand: int, a: int, b: int) -> None:
    """Exchange a card between two seats' deals, keeping each in card order."""
    deal = data["hands"][hand - 1]["deal"]
    deal[a][5], deal[b][5] = deal[b][5], deal[a][5]
    deal[a], deal[b] = CardSet.parse(deal[a]).names(), CardSet.parse(deal[b]).names()


def test_a_card_moved_between_two_deals_is_not_the_committed_deal() -> None:
    """With the tournament's revealed secret, the deal itself is checked first."""
    data = reloaded(CLEAN.to_json())
    swap_deal_card(data, 2, 1, 3)
    result = verify(read_log(data), secret=DEAL_SECRET)
    assert result.discrepancy is not None and (result.discrepancy.hand, result.decisions) == (2, 0)
    assert result.discrepancy.message == (
        f"deals: not the deal the committed secret gives for {CLEAN.deals.label!r}"
    )
    assert verify(CLEAN, secret=DEAL_SECRET).deals_checked


def test_a_card_moved_between_two_deals_breaks_the_first_request_it_changes() -> None:
    data = reloaded(CLEAN.to_json())
    expected = first(data, 2, lambda d: d["seat"] in (1, 3))
    found = tampered(CLEAN, lambda d: swap_deal_card(d, 2, 1, 3))
    assert (found.hand, found.decision) == (2, expected)
    assert found.message == "the request rebuilt from the log does not match its SHA-256"


def test_a_card_moved_between_two_deals_is_found_without_request_hashes() -> None:
    found = tampered(CLEAN, lambda d: swap_deal_card(d, 2, 0, 2), check_requests=False)
    assert found.hand == 2
    assert found.message.startswith(("illegal", "trick", "scores", "exposed"))


def test_a_card_dealt_twice_is_not_a_deal() -> None:
    def duplicate(data: Data) -> None:
        deal = data["hands"][0]["deal"]
        deal[0][0] = deal[1][0]

    found = tampered(CLEAN, duplicate)
    assert (found.hand, found.decision) == (None, None)
    assert found.message.startswith("the deals are not valid")


# -- decisions ----------------------------------------------------------------------------------


def test_an_applied_card_the_seat_does_not_hold_is_illegal() -> None:
    data = reloaded(CLEAN.to_json())
    moves = decisions(data)
    index = next(
        i
        for i, d in enumerate(moves[:-1])
        if d["kind"] == moves[i + 1]["kind"] == "play" and d["seat"] in (0, 2)
    )
    others = moves[index + 1]["applied"]["play"]  # the next seat holds it now

    def change(data: Data) -> None:
        decisions(data)[index]["applied"] = {"play": others}

    found = tampered(CLEAN, change)
    assert (found.hand, found.decision) == (1, index)
    assert found.message.startswith(f"illegal {{'play': '{others}'}}")


def _another_legal_card(log: MatchLog) -> tuple[int, str]:
    """A play of seat 0 (in-process, no hash) that had another legal card, and that card."""
    for hand, index, decision, obs in replay(log):
        assert obs.decision is not None
        choices = obs.decision.choices.names()
        if decision.seat == 0 and decision.kind.value == "play" and len(choices) > 1:
            played = decision.applied.to_json()["play"]
            return index, next(card for card in choices if card != played)
        assert hand.hand_number == 1
    raise AssertionError("no choice")


def test_another_legal_card_is_found_by_the_next_request_or_the_tricks() -> None:
    index, card = _another_legal_card(CLEAN)

    def change(data: Data) -> None:
        decisions(data)[index]["applied"] = {"play": card}

    found = tampered(CLEAN, change)
    assert found.hand == 1 and found.decision is not None and found.decision > index
    found = tampered(CLEAN, change, check_requests=False)
    assert found.hand == 1
    assert found.message.startswith(("trick", "illegal", "seat"))


def test_an_answer_that_plays_another_legal_card_is_not_the_applied_one() -> None:
    """In the canonical form that verification judges without decoding it, too."""
    index, decision, choices = next(
        (index, decision, obs.legal.names())
        for _, index, decision, obs in replay(CLEAN)
        if decision.answer is not None and decision.kind.value == "play" and len(obs.legal) > 1
    )
    played = decision.applied.to_json()["play"]
    other = next(card for card in choices if card != played)
    answer = canonical({"card": other}).decode()
    assert decision.answer == canonical({"card": played}).decode()
    found = tampered(CLEAN, set_field(index, "answer", answer))
    assert (found.hand, found.decision) == (1, index)
    assert found.message == f"answer {answer} is not the applied {{'play': '{played}'}}"


def test_an_answer_and_applied_card_the_seat_does_not_hold_are_judged_as_the_answer() -> None:
    """The answer is judged again as the arena judged it (the SDK's words), before the referee
    refuses the applied card, in the canonical form too."""
    data = reloaded(CLEAN.to_json())
    moves = decisions(data)
    index = next(
        i
        for i, d in enumerate(moves[:-1])
        if d["kind"] == moves[i + 1]["kind"] == "play" and d["answer"] is not None
    )
    others = moves[index + 1]["applied"]["play"]  # the next seat holds it now

    def change(data: Data) -> None:
        decisions(data)[index].update(
            applied={"play": others}, answer=canonical({"card": others}).decode()
        )

    found = tampered(CLEAN, change)
    assert (found.hand, found.decision) == (1, index)
    assert found.message.startswith(f"status ok, but the answer is not: you do not hold {others}")


def test_two_plays_swapped_are_out_of_turn() -> None:
    data = reloaded(CLEAN.to_json())
    index = first(data, 1, lambda d: d["kind"] == "play")

    def swap(data: Data) -> None:
        moves = decisions(data)
        moves[index], moves[index + 1] = moves[index + 1], moves[index]

    found = tampered(CLEAN, swap)
    assert (found.hand, found.decision) == (1, index)
    assert "not pending" in found.message


def test_two_simultaneous_exposures_swapped_are_found_by_their_ids() -> None:
    data = reloaded(CLEAN.to_json())
    assert [d["kind"] for d in decisions(data)[:2]] == ["expose", "expose"]

    def swap(data: Data) -> None:
        moves = decisions(data)
        moves[0], moves[1] = moves[1], moves[0]

    found = tampered(CLEAN, swap)
    assert (found.hand, found.decision) == (1, 0)
    assert found.message.endswith("is due: decisions were moved or dropped")


@pytest.mark.parametrize("kind", ["expose", "play"])
def test_a_dropped_decision_is_found_where_it_was(kind: str) -> None:
    data = reloaded(CLEAN.to_json())
    index = first(data, 1, lambda d: d["kind"] == kind)
    found = tampered(CLEAN, lambda d: decisions(d).pop(index))
    assert (found.hand, found.decision) == (1, index)
    assert "not pending" in found.message or "decisions were moved or dropped" in found.message


def test_a_dropped_last_decision_leaves_the_hand_unfinished() -> None:
    found = tampered(CLEAN, lambda d: decisions(d, 2).pop())
    assert (found.hand, found.decision) == (2, None)
    assert found.message.startswith("the hand stops after")


# -- scores -------------------------------------------------------------------------------------


def test_a_changed_seat_score_contradicts_the_hand_scores() -> None:
    data = reloaded(CLEAN.to_json())
    data["hands"][0]["result"]["seats"][0]["score"] += 10
    with pytest.raises(LogReadError, match=r"^hands/0/result/scores/0: the log says -?\d+, but"):
        read_log(data)


def test_a_changed_score_is_not_what_the_referee_gives() -> None:
    def change(data: Data) -> None:
        result = data["hands"][0]["result"]
        result["seats"][2]["score"] += 10
        result["scores"][2] += 10

    found = tampered(CLEAN, change)
    assert (found.hand, found.decision) == (1, None)
    assert found.message.startswith("scores: log says")


def _up(value: int) -> int:
    return value + 10


def _next(value: int) -> int:
    return value % 4 + 1


@pytest.mark.parametrize(
    ("path", "change", "message"),
    [
        (("hands", 1, "result", "totals", 3), _up, "totals: log says"),
        (("hands", 0, "result", "seats", 1, "hearts"), _up, "seat 1 hearts: log says"),
        (("hands", 1, "tricks", 4, "winner"), _next, "trick 5: log says"),
        (("outcome", "totals", 0), _up, "outcome: log says"),
        (("places", 0), _next, "places: log says"),
        (("faults", 2), _next, "fault counts: log says"),
    ],
)
def test_a_changed_number_is_found(
    path: tuple[str | int, ...], change: Callable[[int], int], message: str
) -> None:
    def edit(data: Data) -> None:
        *parents, last = path
        node: Any = data
        for key in parents:
            node = node[key]
        node[last] = change(node[last]) % 4 if last == "winner" else change(node[last])

    found = tampered(CLEAN, edit)
    assert message in found.message


# -- statuses and faults --------------------------------------------------------------------------


def _status(data: Data, status: str, **where: object) -> int:
    return first(
        data, 1, lambda d: d["status"] == status and all(d[k] == v for k, v in where.items())
    )


def set_field(index: int, field: str, value: object) -> Callable[[Data], None]:
    def change(data: Data) -> None:
        decisions(data)[index][field] = value

    return change


def test_a_slow_answer_called_ok_is_a_timeout() -> None:
    data = reloaded(FAULTY.to_json())
    index = next(
        i for i, d in enumerate(decisions(data)) if d["status"] == "timeout" and d["answer"]
    )

    def change(data: Data) -> None:
        decisions(data)[index].update(status="ok", fault=None)

    found = tampered(FAULTY, change)
    assert (found.hand, found.decision) == (1, index)
    assert found.message.endswith("which is a timeout")


def test_a_timeout_without_answer_called_ok_changes_the_fault_count() -> None:
    data = reloaded(FAULTY.to_json())
    index = next(
        i for i, d in enumerate(decisions(data)) if d["status"] == "timeout" and not d["answer"]
    )

    def change(data: Data) -> None:
        decisions(data)[index].update(status="ok", fault=None, deadline=None)

    found = tampered(FAULTY, change)
    assert (found.hand, found.decision) == (None, None)
    assert found.message == "fault counts: log says [0, 4, 0, 1], the decisions give [0, 3, 0, 1]"


@pytest.mark.parametrize(
    ("status", "to", "message"),
    [
        ("illegal", "invalid", "status invalid, but the answer is illegal"),
        ("invalid", "illegal", "status illegal, but the answer is invalid"),
        ("invalid", "ok", "status ok, but the answer is not"),
    ],
)
def test_a_refused_answer_is_judged_again(status: str, to: str, message: str) -> None:
    data = reloaded(FAULTY.to_json())
    index = _status(data, status)
    found = tampered(FAULTY, set_field(index, "status", to))
    assert (found.hand, found.decision) == (1, index)
    assert found.message.startswith(message)


def test_a_canonical_answer_of_the_fallback_called_a_fault_is_a_legal_move() -> None:
    """The fallback was applied, as a fault requires, but the answer was the same legal card."""
    index = next(
        index
        for _, index, decision, obs in replay(CLEAN)
        if decision.answer is not None and decision.applied == fallback_move(obs)
    )
    found = tampered(CLEAN, set_field(index, "status", "illegal"))
    assert (found.hand, found.decision) == (1, index)
    assert found.message.startswith("status illegal, but the answer {") and found.message.endswith(
        "is a legal move"
    )


def test_a_note_the_answer_does_not_carry_is_found() -> None:
    data = reloaded(CLEAN.to_json())
    index = first(data, 1, lambda d: d["answer"] is not None and d["kind"] == "play")
    found = tampered(CLEAN, set_field(index, "note", "ducking"))
    assert (found.hand, found.decision) == (1, index)
    assert found.message == "the note 'ducking' is not the answer's note None"


def test_an_answer_called_a_fault_must_have_been_refused() -> None:
    data = reloaded(FAULTY.to_json())
    index = first(data, 1, lambda d: d["status"] == "ok" and d["seat"] == 3 and d["answer"])
    found = tampered(FAULTY, set_field(index, "status", "illegal"))
    assert (found.hand, found.decision) == (1, index)
    assert found.message.startswith("status illegal")


def test_a_changed_latency_is_found_by_the_time_bank() -> None:
    data = reloaded(FAULTY.to_json())
    seat_3 = [i for i, d in enumerate(decisions(data)) if d["seat"] == 3]
    index, nxt = seat_3[:2]
    assert decisions(data)[index]["latency_ms"] > FAULTY.time_control.decision_ms
    found = tampered(FAULTY, set_field(index, "latency_ms", 5))
    assert (found.hand, found.decision) == (1, nxt)
    assert found.message.startswith("time bank: the request says")


def test_a_timeout_s_deadline_is_the_one_its_bank_gives() -> None:
    data = reloaded(FAULTY.to_json())
    index = _status(data, "timeout")
    assert decisions(data)[index]["deadline"] == "bank"
    found = tampered(FAULTY, set_field(index, "deadline", "limit"))
    assert (found.hand, found.decision) == (1, index)
    assert found.message.startswith("deadline: the log says limit, but")


def test_only_a_timeout_has_a_deadline() -> None:
    data = reloaded(FAULTY.to_json())
    index = _status(data, "error")
    found = tampered(FAULTY, set_field(index, "deadline", "bank"))
    assert (found.hand, found.decision) == (1, index)
    assert found.message.endswith("so the deadline is None")


def test_a_request_timed_before_the_answer_before_it_is_a_discrepancy() -> None:
    data = reloaded(FAULTY.to_json())
    index = first(data, 1, lambda d: d["seat"] == 3 and d["timing"]["sent_us"] > 0)

    def change(data: Data) -> None:
        decisions(data)[index]["timing"]["sent_us"] = 0

    found = tampered(FAULTY, change)
    assert (found.hand, found.decision) == (1, index)
    assert found.message.startswith("timing: sent at 0 us, before the answer before it")


def test_an_answer_timed_before_its_request_is_a_discrepancy() -> None:
    data = reloaded(FAULTY.to_json())
    index = first(data, 1, lambda d: d["seat"] == 3)

    def change(data: Data) -> None:
        timing = decisions(data)[index]["timing"]
        timing["received_us"] = timing["sent_us"] - 1

    found = tampered(FAULTY, change)
    assert (found.hand, found.decision) == (1, index)
    assert found.message.startswith("timing: received at")


# -- the seal -------------------------------------------------------------------------------------


def test_a_changed_status_that_the_referee_cannot_judge_breaks_the_seal() -> None:
    data = sealed(FAULTY)
    index = _status(data, "error")
    decision = decisions(data)[index]
    decision.update(status="timeout", deadline=TimeControl.deadline(decision["time_bank_ms"]).value)
    assert verify(read_log(data)).ok  # an error and a timeout have the same fallback
    with pytest.raises(IntegrityError, match="SHA-256 mismatch"):
        check(data, PUBLIC_KEYS)


@pytest.mark.parametrize("field", ["applied", "score", "order", "fault"])
def test_any_change_breaks_the_seal(field: str) -> None:
    data = sealed(CLEAN)
    hand = data["hands"][0]
    if field == "applied":
        hand["decisions"][10]["applied"] = {"play": "2C"}
    elif field == "score":
        hand["result"]["seats"][0]["score"] += 1
    elif field == "order":
        hand["decisions"].reverse()
    else:
        hand["decisions"][0]["fault"] = "x"
    with pytest.raises(IntegrityError, match="SHA-256 mismatch"):
        check(data, PUBLIC_KEYS)


def test_a_recomputed_digest_without_the_key_breaks_the_signature() -> None:
    data = sealed(CLEAN)
    data["places"] = [1, 2, 3, 4]
    forged = seal(data, generate_key(), key_id=KEY_ID)  # right digest, wrong key
    with pytest.raises(IntegrityError, match="not sealed by the arena"):
        check(forged, PUBLIC_KEYS)


def test_a_changed_signature_is_refused() -> None:
    data = sealed(CLEAN)
    signature = bytearray(base64.b64decode(data["integrity"]["signature"]))
    signature[0] ^= 1
    data["integrity"]["signature"] = base64.b64encode(signature).decode()
    with pytest.raises(IntegrityError, match="not sealed by the arena"):
        check(data, PUBLIC_KEYS)


def test_an_unknown_key_is_refused() -> None:
    data = seal(CLEAN.to_json(), generate_key(), key_id="somebody")
    with pytest.raises(IntegrityError, match="no public key for key id 'somebody'"):
        check(data, PUBLIC_KEYS)


def test_one_changed_byte_of_the_sealed_json_is_found() -> None:
    text = canonical(sealed(CLEAN)).decode()
    rng = random.Random(1)
    changed = 0
    for position in rng.sample(range(len(text)), 400):
        old = text[position]
        if not old.isalnum():
            continue
        new = "7" if old.isalpha() else "A"
        try:
            data = json.loads(text[:position] + new + text[position + 1 :])
        except ValueError:
            continue
        with pytest.raises(IntegrityError):
            check(data, PUBLIC_KEYS)
        changed += 1
    assert changed > 200


def test_one_changed_byte_of_the_packed_log_is_found() -> None:
    blob = pack(sealed(CLEAN))
    rng = random.Random(2)
    for position in rng.sample(range(len(blob)), 50):
        broken = bytearray(blob)
        broken[position] ^= 1 << rng.randrange(8)
        with pytest.raises((zlib.error, ValueError, IntegrityError)):
            check(unpack(bytes(broken)), PUBLIC_KEYS)


# -- forfeits -----------------------------------------------------------------------------------

FORFEITED = record(Rules(fixed_hands=2), 21, forfeiting_players(21))


def test_a_log_that_hides_a_forfeit_is_refused() -> None:
    """The forfeited seat ranked by its points instead of last: everything else is left as the
    arena wrote it, so only the comparison of the logged forfeits with the faults can tell."""
    assert FORFEITED.forfeited == (2,)

    def hide(data: Data) -> None:
        data["forfeited"] = []
        data["places"] = list(data["outcome"]["places"])

    found = tampered(FORFEITED, hide)
    assert (found.hand, found.decision) == (None, None)
    assert found.message == "forfeits: log says [], the faults give [2]"


def test_a_log_that_invents_a_forfeit_is_refused() -> None:
    def invent(data: Data) -> None:
        data["forfeited"] = [1, 2]

    found = tampered(FORFEITED, invent)
    assert found.message == "forfeits: log says [1, 2], the faults give [2]"
