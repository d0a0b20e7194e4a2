"""A match log as text for people: the ``show`` command of ``python -m replays``.

Per hand: the deal, the passes and exposures, every trick with who played what and who won,
each fault where it happened (status, latency, what was wrong, the fallback played) and each
note a bot sent with its answer, the score
breakdown per seat and the running totals; then the final ranking. Decisions are numbered as
in :func:`replays.verify.verify`'s discrepancies and the ``export`` and ``reask`` commands: by
their index in the hand, from 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot_sdk.protocol import Status
from referee import SCORING_CARDS, CardSet, DecisionKind, Expose, Pass, Play, card_name
from replays.log import DecisionRecord, HandRecord, MatchLog

FAULT_MARK = "!"
LATE_MARK = "~"
AUTOPLAY_MARK = "+"
NOTE_MARK = "*"


def render_match(log: MatchLog, hand_number: int | None = None) -> str:
    """The whole match, or only hand ``hand_number`` (from 1) after the match's header."""
    lines = _header(log)
    hands = log.hands if hand_number is None else [log.hands[hand_number - 1]]
    for hand in hands:
        lines += ["", *_hand(log, hand)]
    if hand_number is None:
        lines += ["", *_ranking(log)]
    return "\n".join(lines) + "\n"


def _header(log: MatchLog) -> list[str]:
    rules = log.rules
    context = [f"tournament {log.tournament_id}"] if log.tournament_id else []
    context += [f"table {log.table_id}"] if log.table_id else []
    context.append("rated" if log.rated else "unrated")
    variants = ", ".join(sorted(v.value for v in rules.variants)) or "standard"
    length = f"at most {count(rules.max_hands, 'hand')}"
    if rules.fixed_hands:
        length = count(rules.fixed_hands, "hand")
    tc = log.time_control
    lines = [
        f"match {log.match_id} ({', '.join(context)})",
        f"rules: {variants}; losing threshold {rules.losing_threshold}; {length}"
        + (f"; passing {rules.pass_direction.value}" if rules.passing else ""),
        f"time: {tc.decision_ms} ms a decision, {tc.bank_ms} ms bank; "
        f"forfeit at {tc.fault_limit} faults",
    ]
    if log.started_at or log.finished_at:
        lines.append(f"played: {log.started_at or '?'} to {log.finished_at or '?'}")
    if log.continues is not None:
        taken = log.continues
        lines.append(
            f"continues match {taken.match_id} (SHA-256 {taken.sha256}): its first "
            f"{count(taken.prefix, 'decision')} re-enacted, its decision {taken.prefix}'s "
            "recorded answer taken without fault, then played"
        )
    rows = [[str(s.seat), s.name, s.version, s.kind, s.protocol.value, s.bot_id] for s in log.seats]
    lines += ["", *_table(["seat", "bot", "version", "kind", "protocol", "id"], rows)]
    return lines


def _hand(log: MatchLog, hand: HandRecord) -> list[str]:
    title = f"hand {hand.hand_number} of {len(log.hands)}: first leader seat {hand.first_leader}"
    if hand.dealer is not None:
        title += f", dealer seat {hand.dealer}"
    lines = [title, "=" * len(title), "deal"]
    lines += [f"  seat {seat}: {cards}" for seat, cards in enumerate(hand.deal)]
    indexed = list(enumerate(hand.decisions))
    passes = [(i, d) for i, d in indexed if d.kind is DecisionKind.PASS]
    exposures = [(i, d) for i, d in indexed if d.kind is DecisionKind.EXPOSE]
    plays = [(i, d) for i, d in indexed if d.kind is DecisionKind.PLAY]
    if passes:
        offset = log.rules.pass_direction.offset(hand.hand_number)
        lines.append(f"passes ({log.rules.pass_direction.value})")
        for index, record in passes:
            assert isinstance(record.applied, Pass)
            to = (record.seat + offset) % 4
            lines.append(
                f"  seat {record.seat} to seat {to}: {record.applied.cards}{_mark(record)}"
            )
            lines += _notes(index, record)
    if exposures:
        lines.append("exposures")
        for index, record in exposures:
            assert isinstance(record.applied, Expose)
            shown = record.applied.cards or "nothing"
            lines.append(f"  seat {record.seat}: {shown}{_mark(record)}")
            lines += _notes(index, record)
    lines += ["tricks", *_tricks(hand, plays), "score", *_scores(hand)]
    return lines


def _tricks(hand: HandRecord, plays: list[tuple[int, DecisionRecord]]) -> list[str]:
    header = ["#", "lead", "seat 0", "seat 1", "seat 2", "seat 3", "winner", "scoring cards"]
    rows: list[list[str]] = []
    notes: dict[int, list[str]] = {}
    for number, trick in enumerate(hand.tricks, start=1):
        cells = ["", "", "", ""]
        for position, (seat, card) in enumerate(trick.plays()):
            index, record = plays[(number - 1) * 4 + position]
            assert isinstance(record.applied, Play) and record.applied.card == card
            cells[seat] = card_name(card) + _mark(record)
            notes.setdefault(number, []).extend(_notes(index, record))
        taken = CardSet.of(trick.cards) & SCORING_CARDS
        rows.append([str(number), str(trick.leader), *cells, str(trick.winner), str(taken)])
    lines = _table(header, rows)
    out = lines[:1]
    for number, line in enumerate(lines[1:], start=1):
        out += [line, *notes.get(number, [])]
    return out


def _mark(record: DecisionRecord) -> str:
    if record.status is Status.OK:
        return LATE_MARK if _overage(record) else ""
    return AUTOPLAY_MARK if record.status is Status.FORFEIT_AUTOPLAY else FAULT_MARK


def _overage(record: DecisionRecord) -> int:
    """The time a decision took beyond its limit, which came out of the seat's bank."""
    if record.latency_ms is None or record.time_limit_ms is None:
        return 0
    return max(0, record.latency_ms - record.time_limit_ms)


def _notes(index: int, record: DecisionRecord) -> list[str]:
    """A fault's line under the row it happened in, or a late answer's (auto-play after a
    forfeit is only marked), then what the bot noted about it."""
    said = (
        []
        if record.note is None
        else [f"    {NOTE_MARK} decision {index}, seat {record.seat} notes: {record.note}"]
    )
    return _status_notes(index, record) + said


def _status_notes(index: int, record: DecisionRecord) -> list[str]:
    if record.status is Status.OK and _overage(record):
        return [
            f"    {LATE_MARK} decision {index}, seat {record.seat}: late ({record.latency_ms} ms): "
            f"{_overage(record)} ms from the bank, which had {record.time_bank_ms} ms"
        ]
    if not record.status.is_fault:
        return []
    latency = "no latency" if record.latency_ms is None else f"{record.latency_ms} ms"
    line = (
        f"    {FAULT_MARK} decision {index}, seat {record.seat}: {record.status.value} "
        f"({latency}): {record.fault}"
    )
    if record.answer is not None:
        line += f"; answered {record.answer}"
    return [f"{line}; fallback {_move(record)}"]


def _move(record: DecisionRecord) -> str:
    move = record.applied
    if isinstance(move, Play):
        return card_name(move.card)
    return str(move.cards) or "nothing"


def _scores(hand: HandRecord) -> list[str]:
    header = ["seat", "taken", "hearts", "pig", "goat", "TC+", "x", "QD+", "capped", "score"]
    header.append("total")
    rows = [
        [
            str(seat),
            str(s.taken) or "-",
            str(s.hearts),
            str(s.pig),
            str(s.goat),
            str(s.transformer_bonus),
            str(s.multiplier),
            str(s.qd_bonus),
            "yes" if s.capped else "",
            str(s.score),
            str(hand.result.totals[seat]),
        ]
        for seat, s in enumerate(hand.result.seats)
    ]
    exposed = f"  exposed: {hand.result.exposed}" if hand.result.exposed else "  nothing exposed"
    return [*_table(header, rows), exposed]


def _ranking(log: MatchLog) -> list[str]:
    outcome = log.outcome
    played = count(outcome.hands_played, "hand")
    title = f"final ranking ({outcome.termination.value} after {played})"
    latencies: list[list[int]] = [[], [], [], []]
    for hand in log.hands:
        for record in hand.decisions:
            if record.latency_ms is not None:
                latencies[record.seat].append(record.latency_ms)
    rows = []
    for seat in sorted(range(4), key=lambda s: (log.places[s], s)):
        notes = [note for note, yes in _NOTES if yes(log, seat)]
        slowest = str(max(latencies[seat])) if latencies[seat] else ""
        rows.append(
            [
                str(log.places[seat]),
                str(seat),
                log.seats[seat].name,
                str(outcome.totals[seat]),
                str(log.faults[seat]),
                slowest,
                ", ".join(notes),
            ]
        )
    header = ["place", "seat", "bot", "total", "faults", "slowest ms", ""]
    legend = (
        f"{FAULT_MARK} a fault (the fallback was played), {LATE_MARK} late but within the bank, "
        f"{AUTOPLAY_MARK} auto-played after a forfeit, {NOTE_MARK} the bot's note"
    )
    return [title, "=" * len(title), *_table(header, rows), legend]


_NOTES: tuple[tuple[str, Callable[[MatchLog, int], bool]], ...] = (
    ("forfeited", lambda log, seat: seat in log.forfeited),
    ("out", lambda log, seat: seat in log.outcome.out),
    ("winner", lambda log, seat: log.places[seat] == 1),
)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Columns padded to their widest cell; numbers are right-aligned."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]
    numeric = [
        all(_is_number(row[i]) or not row[i] for row in rows) and any(row[i] for row in rows)
        for i in range(len(header))
    ]

    def line(cells: Sequence[str]) -> str:
        padded = [
            cell.rjust(width) if right else cell.ljust(width)
            for cell, width, right in zip(cells, widths, numeric, strict=True)
        ]
        return ("  " + "  ".join(padded)).rstrip()

    return [line(header), *(line(row) for row in rows)]


def _is_number(cell: str) -> bool:
    return cell.lstrip("-").isdigit()


def count(number: int, noun: str) -> str:
    """``1 hand``, ``2 hands``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"
