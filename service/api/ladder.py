"""The rated ladder: its rows with their provisional marks and versions, the matchmaker's
status and tables, and a participant's versions, rating history and head-to-head figures."""

from __future__ import annotations

from typing import Any

from arena import ladder, tournaments
from arena.records import HeadToHead, Page, Rating
from service.context import arena, store
from service.errors import ErrorSchema
from service.limits import EXPENSIVE_READS, expensive_read
from service.schemas import (
    HeadToHeadSchema,
    LadderRowSchema,
    LadderStatusSchema,
    PageArgs,
    RatingHistoryArgs,
    RatingHistorySchema,
    RatingSchema,
    TournamentSchema,
    page_of,
)
from service.smorest import Blueprint

blp = Blueprint("ladder", __name__, url_prefix="/api", description="The rated ladder")


@blp.route("/ladder")
@blp.arguments(PageArgs, location="query")
@blp.response(200, page_of(LadderRowSchema))
def rows(args: dict[str, Any]) -> Page[ladder.Row]:
    """Participants best first by conservative rating (mu - 3 sigma), each with its latest
    version, and marked provisional while its sigma is above the threshold."""
    return ladder.standings(arena(), page=args["page"], per_page=args["per_page"])


@blp.route("/ladder/status")
@blp.response(200, LadderStatusSchema)
def status() -> ladder.Status:
    """The matchmaker's settings, its last round, the open tables, the rating scale's anchor
    and the provisional threshold."""
    return ladder.status(arena())


@blp.route("/ladder/tables")
@blp.arguments(PageArgs, location="query")
@blp.response(200, page_of(TournamentSchema))
def tables(args: dict[str, Any]) -> Page[tournaments.Shown]:
    """The tables the matchmaker seated, newest first: each a tournament of four rotations
    (``GET /api/tournaments/{id}`` shows one with its matches and standings)."""
    found = store().list_tournaments(page=args["page"], per_page=args["per_page"], ladder=True)
    shown = [tournaments.shown(arena(), t) for t in found.items]
    return Page(shown, found.total, found.page, found.per_page)


@blp.route("/bots/<bot_id>/versions")
@blp.arguments(PageArgs, location="query")
@blp.response(200, page_of(RatingSchema))
@blp.alt_response(404, schema=ErrorSchema, description="no such participant")
def versions(args: dict[str, Any], bot_id: str) -> Page[Rating]:
    """Every rated version of the participant with its figures, the one played latest first."""
    every = ladder.versions(arena(), bot_id)
    return Page.of(every, page=args["page"], per_page=args["per_page"])


@blp.route("/bots/<bot_id>/rating-history")
@blp.arguments(RatingHistoryArgs, location="query")
@blp.response(200, RatingHistorySchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such participant")
def rating_history(args: dict[str, Any], bot_id: str) -> dict[str, Any]:
    """One version's rating after each of its rated matches, oldest first (default: the
    version played latest): mu, sigma and the conservative rating."""
    version, history = ladder.rating_history(arena(), bot_id, args.get("version"))
    return {"bot_id": bot_id, "version": version, "history": history}


@blp.route("/bots/<bot_id>/head-to-head")
@expensive_read
@blp.arguments(PageArgs, location="query")
@blp.response(200, page_of(HeadToHeadSchema))
@blp.alt_response(404, schema=ErrorSchema, description="no such participant")
@blp.alt_response(429, schema=ErrorSchema, description=EXPENSIVE_READS)
def head_to_head(args: dict[str, Any], bot_id: str) -> Page[HeadToHead]:
    """Its figures against each opponent of its rated matches, most matches first."""
    return ladder.head_to_head(arena(), bot_id, page=args["page"], per_page=args["per_page"])
