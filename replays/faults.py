"""The fault book: each seat's time bank and faults in one match, and the seats that forfeited.

One rule, kept by the match as it is played (``arena.match_loop``) and checked by the verifier
against the log (:mod:`replays.verify`): time beyond a decision's limit comes out of its seat's
bank, each fault is counted, and a seat forfeits at its ``fault_limit``-th fault.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from replays.log import DecisionRecord, TimeControl


@dataclass
class FaultBook:
    time_control: TimeControl
    banks: list[int]
    faults: list[int]
    forfeited: set[int]

    @classmethod
    def fresh(cls, time_control: TimeControl) -> FaultBook:
        return cls(time_control, [time_control.bank_ms] * 4, [0, 0, 0, 0], set())

    @classmethod
    def from_records(
        cls, time_control: TimeControl, records: Iterable[DecisionRecord]
    ) -> FaultBook:
        """The book after ``records`` (a match played in steps, such as a human game)."""
        book = cls.fresh(time_control)
        for record in records:
            book.enter(record)
        return book

    def charge(self, seat: int, latency_ms: int) -> bool:
        """Take what a decision answered in ``latency_ms`` took beyond its limit from ``seat``'s
        bank; whether the limit and the bank were both spent (a timeout)."""
        self.banks[seat], timed_out = self.time_control.charge(self.banks[seat], latency_ms)
        return timed_out

    def count(self, record: DecisionRecord) -> None:
        """Count ``record``'s fault, if it is one; the seat forfeits at the limit."""
        if record.status.is_fault:
            self.faults[record.seat] += 1
            if self.faults[record.seat] >= self.time_control.fault_limit:
                self.forfeited.add(record.seat)

    def enter(self, record: DecisionRecord) -> bool:
        """Enter a logged decision: its time charged (if it was asked) and its fault counted;
        whether its answer came too late."""
        timed_out = record.latency_ms is not None and self.charge(record.seat, record.latency_ms)
        self.count(record)
        return timed_out
