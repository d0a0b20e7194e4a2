"""The ladder: every rated participant by conservative rating, and each one's history."""

from __future__ import annotations

from typing import Any

from arena import bots
from arena.records import Page, Rating
from service.context import arena, store
from service.errors import ErrorSchema
from service.schemas import PageArgs, RatingHistorySchema, RatingSchema, page_of
from service.smorest import Blueprint

blp = Blueprint("ladder", __name__, url_prefix="/api", description="The rated ladder")


@blp.route("/ladder")
@blp.arguments(PageArgs, location="query")
@blp.response(200, page_of(RatingSchema))
def ladder(args: dict[str, Any]) -> Page[tuple[int, Rating]]:
    """Ratings best first: mean, uncertainty and the conservative rating mu - 3 sigma."""
    return store().ladder(page=args["page"], per_page=args["per_page"])


@blp.route("/bots/<bot_id>/rating-history")
@blp.response(200, RatingHistorySchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such participant on the ladder")
def rating_history(bot_id: str) -> dict[str, Any]:
    """The participant's rating after each of its rated matches, oldest first."""
    return {"bot_id": bot_id, "history": bots.rating_history(arena(), bot_id)}
