"""Where a bot lost points: a match's seat against the other rotations of its deal, and a
bot's costliest divergences (the use cases: :mod:`arena.divergences`)."""

from __future__ import annotations

from typing import Any

from arena import divergence_index, divergences
from arena.records import DivergenceEntry, Page
from service.api.matches import EMBARGOED
from service.auth import is_operator
from service.context import arena
from service.errors import ErrorSchema
from service.limits import EXPENSIVE_READS, expensive_read
from service.schemas import (
    DivergenceArgs,
    DivergenceEntrySchema,
    DivergenceSchema,
    PageArgs,
    page_of,
)
from service.smorest import Blueprint

blp = Blueprint("divergences", __name__, url_prefix="/api", description="Where a bot lost points")


@blp.route("/matches/<match_id>/divergence")
@expensive_read
@blp.arguments(DivergenceArgs, location="query")
@blp.response(200, DivergenceSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such match, or not finished")
@blp.alt_response(409, schema=ErrorSchema, description=f"{EMBARGOED}; or nothing to compare")
@blp.alt_response(422, schema=ErrorSchema, description="the bot did not sit there")
@blp.alt_response(429, schema=ErrorSchema, description=EXPENSIVE_READS)
def divergence(args: dict[str, Any], match_id: str) -> divergences.Comparison:
    """The bot's line of the match's deal against the deal's other rotations at the same seat:
    each line's points, and the first decision where the bot chose what no other line chose,
    with its seat's view there (its own hand only)."""
    return divergences.divergence(
        arena(), match_id, bot=args["bot"], seat=args.get("seat"), operator=is_operator()
    )


@blp.route("/bots/<bot_id>/divergences")
@blp.arguments(PageArgs, location="query")
@blp.response(200, page_of(DivergenceEntrySchema))
@blp.alt_response(404, schema=ErrorSchema, description="no such participant")
def costliest(args: dict[str, Any], bot_id: str) -> Page[DivergenceEntry]:
    """The bot's divergences on duplicate deals, the costliest first: where each was, and the
    points its line scored against the other lines' average."""
    return divergence_index.costliest(arena(), bot_id, page=args["page"], per_page=args["per_page"])
