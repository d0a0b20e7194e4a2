"""Each participant's index of its divergences (:mod:`arena.divergences`), costliest first,
and the recorded rotations of a deal it is computed from.

The index is derived data, written when a deal's last match is recorded:
:meth:`~arena.store.Store.record_result` notes the deal in the same transaction
(:meth:`~arena.store.Store.deals_to_index`), and :func:`index_recorded_deals`, which
:func:`arena.matches.play` calls after recording, indexes every deal noted and takes it off the
list in one write. Entries are kept under their match and seat, so indexing a deal again
changes nothing. A worker that dies between the record and the index leaves the deal noted:
its match job's retry, finding the match recorded, indexes it, and so does the next match
recorded by any worker. A deal whose matches cannot all be recorded
(a cancelled tournament, a failed match) is not indexed; its comparisons open with the
tournament's end like its replays.
"""

from __future__ import annotations

import logging

from arena.context import Arena
from arena.errors import NotFoundError
from arena.records import HOUSE_PARTICIPANTS, DivergenceEntry, Page
from replays.divergence import compare, line_up
from replays.integrity import unpack
from replays.log import MatchLog
from replays.upgrade import read_log

logger = logging.getLogger(__name__)


def deal_logs(arena: Arena, tournament_id: str, deal_label: str) -> list[MatchLog]:
    """The deal's recorded rotations' logs, by match id (not those a ruling voided)."""
    found = []
    for match_id in deal_rotations(arena, tournament_id, deal_label):
        blob = arena.store.replay_blob(match_id)
        if blob is not None:
            found.append(read_log(unpack(blob)))
    return found


def deal_rotations(arena: Arena, tournament_id: str, deal_label: str) -> tuple[str, ...]:
    """The ids of the deal's recorded rotations, sorted (not those a ruling voided: a
    replacement plays their seats): what :func:`deal_logs` reads."""
    matches = arena.store.deal_matches(tournament_id, deal_label)
    return tuple(sorted(m.id for m in matches if m.result is not None and m.voided_by is None))


def index_recorded_deals(arena: Arena) -> None:
    """Index the divergences of every deal whose last match is recorded (normally the one
    just recorded; also any left by a worker that died before indexing it)."""
    for deal in arena.store.deals_to_index():
        arena.store.index_divergences(deal, _entries(arena, *deal))


def _entries(arena: Arena, tournament_id: str, deal_label: str) -> dict[str, list[DivergenceEntry]]:
    """Every line's divergence of the deal, by participant. A deal that cannot be compared
    (a log the referee refuses) is logged and indexed as having none: it must not stop the
    matches recorded after it."""
    try:
        logs = deal_logs(arena, tournament_id, deal_label)
        seats = line_up(logs) if len(logs) > 1 else ()
    except ValueError:
        logger.exception("deal %s of tournament %s cannot be compared", deal_label, tournament_id)
        return {}
    entries: dict[str, list[DivergenceEntry]] = {}
    for seat, lines in enumerate(seats):
        for n, line in enumerate(lines):
            report = compare(seat, lines, n)
            if report.divergence is None:
                continue
            entry = DivergenceEntry(
                line.match_id,
                seat,
                tournament_id,
                deal_label,
                report.divergence.step.hand,
                report.divergence.step.label,
                report.divergence.decision,
                line.total,
                line.total + report.cost,
                len(lines),
            )
            entries.setdefault(line.participant, []).append(entry)
    return entries


def costliest(arena: Arena, participant: str, *, page: int, per_page: int) -> Page[DivergenceEntry]:
    """The participant's divergences, the costliest first."""
    if participant not in HOUSE_PARTICIPANTS and arena.store.get_bot(participant) is None:
        raise NotFoundError(f"there is no bot {participant}")
    return arena.store.divergences(participant, page=page, per_page=per_page)
