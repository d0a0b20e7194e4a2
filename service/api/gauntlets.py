"""Gauntlets: a bot's owner (or the operator) starts one, anyone reads them, the one who started
it (or the operator) cancels it."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView

from arena import gauntlets
from arena.records import Page
from service.auth import caller, is_operator, owned_bot, owner_or_operator
from service.context import arena
from service.errors import ErrorSchema
from service.limits import gauntlet_limit, limiter, owner_key
from service.schemas import (
    GauntletArgs,
    GauntletCreate,
    GauntletSchema,
    GauntletSummarySchema,
    page_of,
)
from service.smorest import Blueprint, abort

blp = Blueprint("gauntlets", __name__, url_prefix="/api/gauntlets", description="Gauntlets")


@blp.route("")
class Gauntlets(MethodView):
    @blp.arguments(GauntletArgs, location="query")
    @blp.response(200, page_of(GauntletSummarySchema))
    def get(self, args: dict[str, Any]) -> Page[gauntlets.Progress]:
        """List gauntlets, newest first (``bot``: one bot's, as candidate or baseline)."""
        return gauntlets.listing(
            arena(), page=args["page"], per_page=args["per_page"], bot_id=args["bot"]
        )

    @owner_or_operator(blp)
    @limiter.limit(gauntlet_limit, key_func=owner_key, exempt_when=is_operator)
    @blp.arguments(GauntletCreate)
    @blp.response(201, GauntletSchema)
    @blp.alt_response(403, schema=ErrorSchema, description="a bot that is not yours")
    @blp.alt_response(422, schema=ErrorSchema, description="invalid field")
    @blp.alt_response(429, schema=ErrorSchema, description="too many gauntlets started or live")
    def post(self, args: dict[str, Any]) -> gauntlets.Progress:
        """Start a gauntlet: the candidate (your bot) against the baseline on duplicate deals,
        until the sequential test says better, worse or no difference, or the cap is reached
        (docs/GAUNTLETS.md)."""
        started_by = caller()  # the operator, or the bot the token manages
        manages = [started_by]
        if args["baseline_token"] is not None:
            baseline = owned_bot(args["baseline_token"])
            if baseline is None or baseline != args["baseline"]:
                abort(
                    403,
                    message=f"baseline_token does not manage {args['baseline']}: send that "
                    "bot's own management token",
                )
            manages.append(baseline)
        opponents = args["opponents"]
        request = gauntlets.Request(
            candidate=args["candidate"],
            baseline=args["baseline"],
            opponents=None if opponents is None else (opponents[0], opponents[1]),
            delta=args["delta"],
            alpha=args["alpha"],
            beta=args["beta"],
            max_deals=args["max_deals"],
            hands=args["hands"],
            rules=args["rules"],
        )
        return gauntlets.create(arena(), request, started_by=started_by, manages=manages)


@blp.route("/<gauntlet_id>")
@blp.response(200, GauntletSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such gauntlet")
def get_gauntlet(gauntlet_id: str) -> gauntlets.Progress:
    """A gauntlet as it stands: each deal's difference, the test after each deal and now, and
    the verdict once it has stopped."""
    return gauntlets.progress(arena(), gauntlet_id)


@blp.route("/<gauntlet_id>/cancel", methods=["POST"])
@owner_or_operator(blp)
@blp.response(200, GauntletSchema)
@blp.alt_response(403, schema=ErrorSchema, description="started by another bot's owner")
@blp.alt_response(404, schema=ErrorSchema, description="no such gauntlet")
@blp.alt_response(409, schema=ErrorSchema, description="already over")
def cancel(gauntlet_id: str) -> gauntlets.Progress:
    """Stop a gauntlet (whoever started it, or the operator): no more deals; what was played
    stays."""
    return gauntlets.cancel(arena(), gauntlet_id, by=caller())
