"""A dispute's ruling as a sealed record, and checking an amended result with it
(docs/REPLAYS.md, "Rulings").

A ruling never rewrites the match's log. It is a record of its own, sealed like a log
(:mod:`replays.integrity`: SHA-256 and the arena's Ed25519 signature), which names the log it
rules on by that log's SHA-256, and, when the match was voided and played again, the
replacement match. :func:`check_amended` checks the three together: each seal, that the ruling
is about exactly this log, and that the replacement plays the same deal (label and commitment)
with the same seats and passes the referee; for a struck fault, also that the replacement
continues this log from the contested decision (:mod:`replays.continuation`).

>>> from replays.integrity import generate_key, seal
>>> key = generate_key()
>>> original = seal({"format": "gongzhu-replay/5", "match_id": "m1"}, key, key_id="k")
>>> record = ruling_record(dispute_id="d1", original=original, hand=1, decision=3, bot_id="b",
...     seat=0, statement="s", status="rejected", reason="in time", remedy=None,
...     replacement=None, ruled_at="2026-01-01T00:00:00+00:00")
>>> record["original"]["sha256"] == original["integrity"]["sha256"]
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from replays.continuation import ContinuationError, check_continuation, position
from replays.integrity import IntegrityError, check, digest
from replays.log import MatchLog
from replays.upgrade import LogReadError, read_log
from replays.verify import verify

FORMAT = "gongzhu-ruling/1"


class RulingError(ValueError):
    """The ruling, the log it rules on or the replacement do not check."""


def ruling_record(
    *,
    dispute_id: str,
    original: Mapping[str, Any],
    hand: int,
    decision: int | None,
    bot_id: str,
    seat: int,
    statement: str,
    status: str,
    reason: str,
    remedy: str | None,
    replacement: str | None,
    ruled_at: str,
) -> dict[str, Any]:
    """The ruling's record, before it is sealed: what was contested, the ruling, and the
    sealed log it rules on (by its SHA-256)."""
    integrity = original.get("integrity") or {}
    return {
        "format": FORMAT,
        "dispute_id": dispute_id,
        "match_id": original.get("match_id"),
        "tournament_id": original.get("tournament_id"),
        "original": {"sha256": digest(original), "key_id": integrity.get("key_id")},
        "bot_id": bot_id,
        "seat": seat,
        "hand": hand,
        "decision": decision,
        "statement": statement,
        "ruling": status,
        "reason": reason,
        "remedy": remedy,
        "replacement_match_id": replacement,
        "ruled_at": ruled_at,
    }


@dataclass(frozen=True)
class Amended:
    """What :func:`check_amended` found: the ruling, and the result that now counts."""

    dispute_id: str
    ruling: str
    remedy: str | None
    match_id: str
    counts: str
    """The match whose result counts: the replacement if the match was voided, else it."""


def check_amended(
    ruling: Mapping[str, Any],
    original: Mapping[str, Any],
    replacement: Mapping[str, Any] | None,
    public_keys: Mapping[str, Ed25519PublicKey],
) -> Amended:
    """Check a ruling with the log it rules on and, for a voided match, its replacement's log
    (all three as sealed JSON); :class:`RulingError` names the first thing that does not hold."""
    for name, sealed in (("ruling", ruling), ("original log", original)):
        try:
            check(sealed, public_keys)
        except IntegrityError as error:
            raise RulingError(f"the {name}'s seal: {error}") from None
    if ruling.get("format") != FORMAT:
        raise RulingError(f"not a {FORMAT} record: format is {ruling.get('format')!r}")
    if ruling["original"]["sha256"] != digest(original) or ruling["match_id"] != original.get(
        "match_id"
    ):
        raise RulingError(
            f"the ruling is on match {ruling['match_id']} with SHA-256 "
            f"{ruling['original']['sha256']}, not on this log"
        )
    counts = str(ruling["match_id"])
    wanted = ruling.get("replacement_match_id")
    if ruling.get("remedy") in ("replay", "strike"):
        if replacement is None:
            raise RulingError(f"the match was voided: give its replacement's log ({wanted})")
        _check_replacement(ruling, original, replacement, public_keys)
        counts = str(wanted)
    return Amended(
        dispute_id=str(ruling["dispute_id"]),
        ruling=str(ruling["ruling"]),
        remedy=ruling.get("remedy"),
        match_id=str(ruling["match_id"]),
        counts=counts,
    )


def _check_replacement(
    ruling: Mapping[str, Any],
    original: Mapping[str, Any],
    replacement: Mapping[str, Any],
    public_keys: Mapping[str, Ed25519PublicKey],
) -> None:
    wanted = ruling.get("replacement_match_id")
    try:
        check(replacement, public_keys)
    except IntegrityError as error:
        raise RulingError(f"the replacement's seal: {error}") from None
    try:
        voided, replay = read_log(original), read_log(replacement)
    except LogReadError as error:
        raise RulingError(str(error)) from None
    if replay.match_id != wanted:
        raise RulingError(f"the replacement is match {replay.match_id}, the ruling names {wanted}")
    if (replay.deals.label, replay.deals.commitment) != (
        voided.deals.label,
        voided.deals.commitment,
    ):
        raise RulingError("the replacement does not play the voided match's deal")
    if [s.bot_id for s in replay.seats] != [s.bot_id for s in voided.seats]:
        raise RulingError("the replacement does not seat the voided match's participants")
    if replay.tournament_id != voided.tournament_id:
        raise RulingError("the replacement is of another tournament")
    report = verify(replay)
    if not report.ok:
        raise RulingError(f"the replacement does not pass the referee: {report.discrepancy}")
    if ruling.get("remedy") == "strike":
        _check_struck(ruling, voided, replay, digest(original))
    elif replay.continues is not None:
        raise RulingError("the replacement continues the voided match; the ruling replays it")


def _check_struck(
    ruling: Mapping[str, Any], voided: MatchLog, replay: MatchLog, sha256: str
) -> None:
    """The replacement continues the voided log from exactly the contested decision."""
    try:
        prefix = check_continuation(replay, voided, sha256)
    except ContinuationError as error:
        raise RulingError(f"the replacement: {error}") from None
    hand, decision = ruling.get("hand"), ruling.get("decision")
    if not isinstance(hand, int) or not isinstance(decision, int):
        raise RulingError("a ruling that strikes a fault names the contested decision")
    if prefix != position(voided, hand, decision):
        raise RulingError(
            f"the replacement struck decision {prefix} of the match, the ruling decision "
            f"{decision} of hand {hand}"
        )
