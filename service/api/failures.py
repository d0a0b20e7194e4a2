"""A tournament's failed matches, queued again by the operator (docs/OPERATIONS.md, "Failed
matches")."""

from __future__ import annotations

from typing import Any

from flask_smorest import Blueprint

from service.api.tournaments import shown, tournament_or_404
from service.auth import operator_only
from service.context import arena, store
from service.errors import ApiError, ErrorSchema
from service.jobs import requeue_matches
from service.schemas import TournamentSchema

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
def requeue_failed(tournament_id: str) -> dict[str, Any]:
    """Play the tournament's failed matches again: each is queued afresh, with all its
    retries, and the tournament is running until they end."""
    tournament_or_404(tournament_id)
    failed = store().failed_matches(tournament_id)
    if not failed:
        raise ApiError(409, f"tournament {tournament_id} has no failed match to queue again")
    # jobs first: a crash in between leaves the matches failed, to be queued again by a retry
    requeue_matches(store().redis, arena().config.queue_name, failed)
    store().unfail_matches(tournament_id, failed)
    return shown(tournament_or_404(tournament_id))
