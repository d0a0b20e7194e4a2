"""Tournaments (created, started and cancelled by the operator; read by anyone) and their
standings."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from referee import Rules
from replays.log import TimeControl
from service.api import views
from service.auth import operator_only
from service.context import arena, store
from service.errors import ApiError, ErrorSchema
from service.jobs import cancel_tournament_job, enqueue_tournament
from service.schemas import (
    PageArgs,
    StandingsSchema,
    TournamentCreate,
    TournamentSchema,
    page_of,
)
from workers.records import (
    HOUSE_BOTS,
    BotStatus,
    Format,
    Tournament,
    TournamentSpec,
    TournamentStatus,
)
from workers.store import NotFound, WrongState

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


def _check_participants(participants: list[str]) -> None:
    bots = [p for p in participants if p not in HOUSE_BOTS]
    found = store().get_bots(bots)
    problems = [f"{p} is not a registered bot" for p in bots if p not in found]
    problems += [
        f"{p} is {found[p].status.value}, not active"
        for p in bots
        if p in found and found[p].status is not BotStatus.ACTIVE
    ]
    if not bots:
        problems.append("name at least one registered bot (house bots fill the other seats)")
    if problems:
        raise ApiError(
            422,
            "participants: " + "; ".join(problems),
            errors={"participants": problems},
        )


def tournament_or_404(tournament_id: str) -> Tournament:
    found = store().get_tournament(tournament_id)
    if found is None:
        raise ApiError(404, f"there is no tournament {tournament_id}")
    return found


def shown(record: Tournament) -> dict[str, Any]:
    """The tournament as the API shows it: with its deal secret once it is over."""
    return views.tournament(record, store().revealed_secret(record))


def _move(tournament_id: str, to: TournamentStatus, allowed: list[TournamentStatus]) -> Tournament:
    try:
        return store().move_tournament(tournament_id, to, allowed_from=allowed)
    except NotFound:
        raise ApiError(404, f"there is no tournament {tournament_id}") from None
    except WrongState as error:
        raise ApiError(409, str(error)) from None


@blp.route("")
class Tournaments(MethodView):
    @blp.arguments(PageArgs, location="query")
    @blp.response(200, page_of(TournamentSchema))
    def get(self, args: dict[str, Any]) -> dict[str, Any]:
        """List tournaments, newest first."""
        found = store().list_tournaments(page=args["page"], per_page=args["per_page"])
        return views.page(found, [shown(t) for t in found.items])

    @operator_only(blp)
    @blp.arguments(TournamentCreate)
    @blp.response(201, TournamentSchema)
    @blp.alt_response(422, schema=ErrorSchema, description="invalid field")
    def post(self, args: dict[str, Any]) -> dict[str, Any]:
        """Create a tournament (it starts when asked to)."""
        _check_participants(args["participants"])
        spec = spec_from(args, tuple(args["participants"]))
        return shown(tournament_or_404(store().create_tournament(spec)))


@blp.route("/<tournament_id>")
@blp.response(200, TournamentSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such tournament")
def get_tournament(tournament_id: str) -> dict[str, Any]:
    """A tournament with its progress (matches done / total)."""
    return shown(tournament_or_404(tournament_id))


@blp.route("/<tournament_id>/start", methods=["POST"])
@operator_only(blp)
@blp.response(202, TournamentSchema)
@blp.alt_response(409, schema=ErrorSchema, description="already started, finished or cancelled")
@blp.alt_response(404, schema=ErrorSchema, description="no such tournament")
def start(tournament_id: str) -> dict[str, Any]:
    """Queue the tournament for the workers."""
    tournament = _move(tournament_id, TournamentStatus.QUEUED, [TournamentStatus.CREATED])
    config = arena().config
    enqueue_tournament(store().redis, config.queue_name, tournament_id)
    return shown(tournament)


@blp.route("/<tournament_id>/cancel", methods=["POST"])
@operator_only(blp)
@blp.response(200, TournamentSchema)
@blp.alt_response(409, schema=ErrorSchema, description="already finished or cancelled")
@blp.alt_response(404, schema=ErrorSchema, description="no such tournament")
def cancel(tournament_id: str) -> dict[str, Any]:
    """Stop the tournament: no more of its matches are played; recorded ones stay. (Also
    ends a tournament done with failures whose failed matches will not be played again.)"""
    live = [
        TournamentStatus.CREATED,
        TournamentStatus.QUEUED,
        TournamentStatus.RUNNING,
        TournamentStatus.DONE_WITH_FAILURES,
    ]
    tournament = _move(tournament_id, TournamentStatus.CANCELLED, live)
    cancel_tournament_job(store().redis, tournament_id)
    return shown(tournament)


@blp.route("/<tournament_id>/standings")
@blp.response(200, StandingsSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such tournament")
def standings(tournament_id: str) -> dict[str, Any]:
    """Rank, matches, wins, average placement, points per hand and faults of each entrant."""
    tournament_or_404(tournament_id)
    return {
        "tournament_id": tournament_id,
        "standings": [views.standing(s) for s in store().standings(tournament_id)],
    }
