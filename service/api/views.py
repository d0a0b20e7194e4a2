"""Dataclasses to the dicts the response schemas dump: the one place views shape records."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from arena.records import Match, Page, Rating, RatingPoint, RegisteredBot, Standing, Tournament


def page(found: Page[Any], items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"items": items, "total": found.total, "page": found.page, "per_page": found.per_page}


def bot(record: RegisteredBot) -> dict[str, Any]:
    return asdict(record)


def tournament(record: Tournament, deal_secret: bytes | None = None) -> dict[str, Any]:
    """``deal_secret``: the revealed secret (:meth:`~arena.store.Store.revealed_secret`)."""
    spec = record.spec
    return {
        "id": record.id,
        "name": spec.name,
        "participants": list(spec.participants),
        "format": {"kind": "round_robin", **asdict(spec.format)},
        "rules": spec.rules,
        "time_control": spec.time_control.to_json(),
        "rated": spec.rated,
        "status": record.status.value,
        "progress": {"done": record.done, "failed": len(record.failures), "total": record.total},
        "failures": [asdict(f) for f in record.failures],
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "schedule_id": record.schedule_id,
        "deal_commitment": record.deal_commitment,
        "deal_secret": None if deal_secret is None else deal_secret.hex(),
    }


def match(record: Match) -> dict[str, Any]:
    return asdict(record)


def standing(record: Standing) -> dict[str, Any]:
    return {
        **asdict(record),
        "average_placement": round(record.average_placement, 3),
        "points_per_hand": round(record.points_per_hand, 3),
    }


def rating(rank: int, record: Rating) -> dict[str, Any]:
    return {
        "rank": rank,
        "bot_id": record.bot_id,
        "mu": record.mu,
        "sigma": record.sigma,
        "rating": record.conservative,
        "matches": record.matches,
        "points_per_hand": round(record.points_per_hand, 3),
        "fault_rate": round(record.fault_rate, 4),
    }


def rating_point(point: RatingPoint) -> dict[str, Any]:
    return {**asdict(point), "rating": point.conservative}
