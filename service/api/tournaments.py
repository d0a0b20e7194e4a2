"""Tournaments (created, started and cancelled by the operator; read by anyone) and their
standings."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView

from arena import tournaments
from arena.records import (
    Format,
    Page,
    Tournament,
    TournamentSpec,
)
from referee import Rules
from replays.log import TimeControl
from service.auth import operator_only
from service.context import arena, store
from service.errors import ErrorSchema
from service.schemas import (
    PageArgs,
    StandingsSchema,
    TournamentCreate,
    TournamentSchema,
    page_of,
)
from service.smorest import Blueprint

blp = Blueprint("tournaments", __name__, url_prefix="/api/tournaments", description="Tournaments")


def spec_from(args: dict[str, Any], participants: tuple[str, ...]) -> TournamentSpec:
    """The validated request as a spec (shared with schedules)."""
    fmt, tc = args["format"], args["time_control"]
    rules: Rules = args["rules"]
    return TournamentSpec(
        name=args["name"],
        participants=participants,
        format=Format(fmt["duplicate"], fmt["matches_per_table"], fmt["hands"]),
        rules=rules,
        time_control=TimeControl(tc["decision_ms"], tc["bank_ms"], tc["fault_limit"]),
        rated=args["rated"],
    )


def shown(record: Tournament) -> tournaments.Shown:
    return tournaments.shown(arena(), record)


@blp.route("")
class Tournaments(MethodView):
    @blp.arguments(PageArgs, location="query")
    @blp.response(200, page_of(TournamentSchema))
    def get(self, args: dict[str, Any]) -> Page[tournaments.Shown]:
        """List tournaments, newest first."""
        found = store().list_tournaments(page=args["page"], per_page=args["per_page"])
        return Page([shown(t) for t in found.items], found.total, found.page, found.per_page)

    @operator_only(blp)
    @blp.arguments(TournamentCreate)
    @blp.response(201, TournamentSchema)
    @blp.alt_response(422, schema=ErrorSchema, description="invalid field")
    def post(self, args: dict[str, Any]) -> tournaments.Shown:
        """Create a tournament (it starts when asked to)."""
        return shown(tournaments.create(arena(), spec_from(args, tuple(args["participants"]))))


@blp.route("/<tournament_id>")
@blp.response(200, TournamentSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such tournament")
def get_tournament(tournament_id: str) -> tournaments.Shown:
    """A tournament with its progress (matches done / total)."""
    return shown(tournaments.get(arena(), tournament_id))


@blp.route("/<tournament_id>/start", methods=["POST"])
@operator_only(blp)
@blp.response(202, TournamentSchema)
@blp.alt_response(409, schema=ErrorSchema, description="already started, finished or cancelled")
@blp.alt_response(404, schema=ErrorSchema, description="no such tournament")
def start(tournament_id: str) -> tournaments.Shown:
    """Queue the tournament for the workers."""
    return shown(tournaments.start(arena(), tournament_id))


@blp.route("/<tournament_id>/cancel", methods=["POST"])
@operator_only(blp)
@blp.response(200, TournamentSchema)
@blp.alt_response(409, schema=ErrorSchema, description="already finished or cancelled")
@blp.alt_response(404, schema=ErrorSchema, description="no such tournament")
def cancel(tournament_id: str) -> tournaments.Shown:
    """Stop the tournament: no more of its matches are played; recorded ones stay. (Also
    ends a tournament done with failures whose failed matches will not be played again.)"""
    return shown(tournaments.cancel(arena(), tournament_id))


@blp.route("/<tournament_id>/standings")
@blp.response(200, StandingsSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such tournament")
def standings(tournament_id: str) -> dict[str, Any]:
    """Rank, matches, wins, average placement, points per hand and faults of each entrant."""
    return {
        "tournament_id": tournament_id,
        "standings": tournaments.standings(arena(), tournament_id),
    }
