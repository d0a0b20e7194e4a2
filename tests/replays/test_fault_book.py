"""The fault book's rule at its edge: a seat forfeits at its ``fault_limit``-th fault, not one
sooner and not one later; ok answers and decisions auto-played for it are not faults."""

from __future__ import annotations

import pytest

from bot_sdk.protocol import Status
from referee import Play
from referee.cards import parse_card
from replays.faults import FaultBook
from replays.log import DecisionKind, DecisionRecord, TimeControl


def _record(seat: int, status: Status) -> DecisionRecord:
    return DecisionRecord(seat, DecisionKind.PLAY, Play(seat, parse_card("2C")), status)


@pytest.mark.parametrize("limit", [1, 2, 5])
def test_a_seat_forfeits_at_its_fault_limit_exactly(limit: int) -> None:
    book = FaultBook.fresh(TimeControl(decision_ms=100, bank_ms=0, fault_limit=limit))
    for n in range(1, limit):
        book.count(_record(1, Status.ERROR))
        book.count(_record(1, Status.OK))
        book.count(_record(1, Status.FORFEIT_AUTOPLAY))
        assert book.faults == [0, n, 0, 0] and book.forfeited == set()
    book.count(_record(1, Status.TIMEOUT))
    assert book.faults == [0, limit, 0, 0] and book.forfeited == {1}
