"""Could a faulted decision's recorded answer stand (:mod:`arena.answer_check`)? On the
worked example's log (a bot answering late, malformed, not at all): legal and in time by the
rule, with the round trip measured at the hello granted and not one microsecond more."""

from __future__ import annotations

import dataclasses
import json

from arena.answer_check import check, rtt_us
from bot_sdk.protocol import Status, answer_of
from referee import DECK, Card, Observation, Play
from replays.log import DecisionRecord, MatchLog
from replays.reask import rebuild
from tests.replays.replay_examples import example_log

LOG: MatchLog = example_log()
SEAT = 1
"""The example's scripted bot: ok, late, malformed, ok, then no answer."""


def _decision(status: Status) -> int:
    return next(
        i for i, r in enumerate(LOG.hands[0].decisions) if r.seat == SEAT and r.status is status
    )


def _answer(card: Card) -> str:
    return json.dumps(answer_of(Play(SEAT, card)))


def _late_but_complete(extra_us: int) -> tuple[DecisionRecord, Observation]:
    """The example's timeout, as if the bot's legal answer had come in ``extra_us`` after the
    allowance plus the hello's round trip."""
    index = _decision(Status.TIMEOUT)
    rebuilt = rebuild(LOG, 1, index)
    record = rebuilt.record
    assert record.timing is not None and record.timing.sent_us is not None
    allowed_us = ((record.time_limit_ms or 0) + (record.time_bank_ms or 0)) * 1000
    received = record.timing.sent_us + allowed_us + rtt_us(LOG.seats[SEAT].hello) + extra_us
    timing = dataclasses.replace(record.timing, received_us=received, bytes_received=13)
    late = dataclasses.replace(
        record, answer=_answer(rebuilt.observation.legal.lowest()), timing=timing
    )
    return late, rebuilt.observation


def test_a_legal_answer_late_by_no_more_than_the_hellos_round_trip_could_stand() -> None:
    hello = LOG.seats[SEAT].hello
    assert rtt_us(hello) == 2000
    record, obs = _late_but_complete(0)
    verdict = check(record, obs, hello)
    assert verdict.could_stand and verdict.in_time and verdict.legal
    allowed_us = ((record.time_limit_ms or 0) + (record.time_bank_ms or 0)) * 1000
    assert verdict.bot_us == allowed_us and verdict.network_us == 2000

    record, obs = _late_but_complete(1)
    verdict = check(record, obs, hello)
    assert verdict.legal and verdict.in_time is False and not verdict.could_stand
    assert "late" in verdict.why and "2000 µs round trip" in verdict.why
    # no hello measured: no round trip granted
    record, obs = _late_but_complete(-1000)
    assert not check(record, obs, None).could_stand


def test_a_missing_or_illegal_answer_could_not_stand() -> None:
    hello = LOG.seats[SEAT].hello
    silent = rebuild(LOG, 1, _decision(Status.TIMEOUT))
    verdict = check(silent.record, silent.observation, hello)
    assert not verdict.could_stand and verdict.in_time is None
    assert verdict.why == "no complete answer was received"

    malformed = rebuild(LOG, 1, _decision(Status.INVALID))
    verdict = check(malformed.record, malformed.observation, hello)
    assert not verdict.legal and verdict.in_time is True
    assert "not a legal one" in verdict.why and "'qs' is not a card name" in verdict.why

    record, obs = _late_but_complete(-10_000)
    illegal = next(c for c in DECK if c not in obs.legal)
    theirs = dataclasses.replace(record, answer=_answer(illegal))
    verdict = check(theirs, obs, hello)
    assert verdict.in_time and not verdict.legal and not verdict.could_stand

    fine = rebuild(LOG, 1, _decision(Status.OK))
    assert check(fine.record, fine.observation, hello).why.startswith("no fault")
