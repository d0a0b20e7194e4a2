"""A tournament's failed matches, queued again by the operator (docs/OPERATIONS.md, "Failed
matches")."""

from __future__ import annotations

from arena import tournaments
from service.api.tournaments import shown
from service.auth import operator_only
from service.context import arena
from service.errors import ErrorSchema
from service.schemas import TournamentSchema
from service.smorest import Blueprint

blp = Blueprint(
    "failed-matches",
    __name__,
    url_prefix="/api/tournaments",
    description="Tournaments: failed matches",
)


@blp.route("/<tournament_id>/requeue-failed", methods=["POST"])
@operator_only(blp)
@blp.response(202, TournamentSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such tournament")
@blp.alt_response(409, schema=ErrorSchema, description="the tournament has no failed match")
def requeue_failed(tournament_id: str) -> tournaments.Shown:
    """Play the tournament's failed matches again: each is queued afresh, with all its
    retries, and the tournament is running until they end."""
    return shown(tournaments.requeue_failed(arena(), tournament_id))
