"""Where a bot lost points: its line of a duplicate deal compared with the other holders of the
same cards (:mod:`replays.divergence`), refused while the deal is embargoed, as its replays
are. Each participant's costliest divergences are indexed by :mod:`arena.divergence_index`.

A comparison reads every rotation's log and walks it through the referee: about half a second
of CPU for a deal of long matches, which a flood of requests would take from every other reader
(``python -m benchmarks.flood``). Its rotations' sealed logs never change, so each web process
keeps the last :data:`KEPT` comparisons it made, by the rotations compared (a rotation recorded
or voided since is another comparison), without the lines' decisions, which it does not show.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from dataclasses import dataclass

from arena import matches
from arena.context import Arena
from arena.divergence_index import deal_logs, deal_rotations
from arena.errors import InvalidError, WrongStateError
from arena.records import Match
from replays.divergence import Report, compare, line_up

KEPT = 256
"""How many comparisons a process keeps (a few kilobytes each)."""


@dataclass(frozen=True)
class Comparison:
    """A match's seat compared with the deal's other rotations at that seat."""

    match: Match
    report: Report


def divergence(
    arena: Arena, match_id: str, *, bot: str, seat: int | None, operator: bool
) -> Comparison:
    """The ``bot``'s line of the match's deal (at ``seat``, needed only when it sat twice)
    against the deal's other recorded rotations: refused while the deal is embargoed, as its
    replay is, unless the ``operator`` asks."""
    match, _ = matches.finished(arena, match_id, operator=operator)
    if match.tournament_id is None or not match.deal_label:
        raise WrongStateError(
            f"match {match_id} is not one of a tournament's rotations of a deal: only those "
            "have other plays of the same cards to compare"
        )
    if match.voided_by is not None:
        raise WrongStateError(
            f"match {match_id} was voided by dispute {match.voided_by}: compare its replay, "
            f"{match.replaced_by}"
        )
    held = _seat_of(match, bot, seat)
    rotations = deal_rotations(arena, match.tournament_id, match.deal_label)
    if len(rotations) < 2:
        raise WrongStateError(
            f"match {match_id} is the only recorded match of deal {match.deal_label}: "
            "there is nothing to compare it with yet"
        )
    key = (rotations, held, match_id)
    report = _kept.get(key)
    if report is None:
        logs = deal_logs(arena, match.tournament_id, match.deal_label)
        lines = line_up(logs)[held]
        mine = next(n for n, log in enumerate(logs) if log.match_id == match_id)
        report = _kept.keep(key, _shown(compare(held, lines, mine)))
    return Comparison(match, report)


def _shown(report: Report) -> Report:
    """``report`` without its lines' decisions: what is shown of it, kept small."""
    lines = tuple(dataclasses.replace(line, decisions={}) for line in report.lines)
    return dataclasses.replace(report, lines=lines)


Key = tuple[tuple[str, ...], int, str]
"""The rotations compared, the seat, and the match whose line it is."""


class _Kept:
    """The last :data:`KEPT` reports made in this process, by :data:`Key`."""

    def __init__(self) -> None:
        self._reports: OrderedDict[Key, Report] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Key) -> Report | None:
        with self._lock:
            found = self._reports.get(key)
            if found is not None:
                self._reports.move_to_end(key)
            return found

    def keep(self, key: Key, report: Report) -> Report:
        with self._lock:
            self._reports[key] = report
            while len(self._reports) > KEPT:
                self._reports.popitem(last=False)
        return report


_kept = _Kept()


def _seat_of(match: Match, bot: str, seat: int | None) -> int:
    seats = [n for n, participant in enumerate(match.seats) if participant == bot]
    if not seats:
        raise InvalidError(
            f"{bot} did not play match {match.id}; its seats were held by {', '.join(match.seats)}",
            field="bot",
        )
    if seat is not None and seat not in seats:
        raise InvalidError(
            f"{bot} did not sit in seat {seat} of match {match.id}: it sat in seat "
            f"{' and '.join(map(str, seats))}",
            field="seat",
        )
    if seat is None and len(seats) > 1:
        raise InvalidError(
            f"{bot} sat in seats {' and '.join(map(str, seats))} of match {match.id}: "
            "say which with seat",
            field="seat",
        )
    return seats[0] if seat is None else seat
