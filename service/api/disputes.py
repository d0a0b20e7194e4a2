"""Disputes (docs/DISPUTES.md): a bot's owner files one on a decision or hand its bot played;
its owner and the operator read it with its evidence; the operator lists the open ones and
rules; anyone reads a tournament's rulings."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView

from arena import disputes
from arena.records import Dispute, DisputeStatus, Page, Remedy
from service.auth import caller, operator_only, owner_or_operator, sent_token
from service.context import arena
from service.errors import ErrorSchema
from service.limits import dispute_limit, limiter, owner_key
from service.schemas import (
    DisputeArgs,
    DisputeCreate,
    DisputeSchema,
    DisputeShownSchema,
    RulingCreate,
    page_of,
)
from service.smorest import Blueprint

blp = Blueprint("disputes", __name__, url_prefix="/api/disputes", description="Disputes")


def _caller() -> str | None:
    """Who asks, if a token is sent (a read needs none for what is public)."""
    return None if sent_token() is None else caller()


@blp.route("")
class Disputes(MethodView):
    @blp.arguments(DisputeArgs, location="query")
    @blp.response(200, page_of(DisputeSchema))
    @blp.alt_response(403, schema=ErrorSchema, description="no tournament named, and no token")
    def get(self, args: dict[str, Any]) -> Page[Dispute]:
        """List disputes, newest first: a tournament's ruled ones (``tournament``, anyone);
        else, with a token, the operator's view (all, or ``status=open``) or a bot owner's
        (every dispute it filed)."""
        return disputes.listing(
            arena(),
            by=_caller(),
            page=args["page"],
            per_page=args["per_page"],
            open_only=args["status"] == "open",
            tournament_id=args["tournament"],
        )

    @owner_or_operator(blp)
    @limiter.limit(dispute_limit, key_func=owner_key)
    @blp.arguments(DisputeCreate)
    @blp.response(201, DisputeSchema)
    @blp.alt_response(403, schema=ErrorSchema, description="not your bot's seat or decision")
    @blp.alt_response(404, schema=ErrorSchema, description="no such match, or not finished")
    @blp.alt_response(409, schema=ErrorSchema, description="already contested, or voided")
    @blp.alt_response(422, schema=ErrorSchema, description="no such hand or decision")
    @blp.alt_response(429, schema=ErrorSchema, description="too many disputes filed")
    def post(self, args: dict[str, Any]) -> Dispute:
        """File a dispute on one decision (or one hand) your bot played, with a short
        statement; the arena builds its evidence report at once, on a worker."""
        return disputes.file(arena(), by=caller(), **args)


@blp.route("/<dispute_id>")
@blp.response(200, DisputeShownSchema)
@blp.alt_response(403, schema=ErrorSchema, description="open, and not yours")
@blp.alt_response(404, schema=ErrorSchema, description="no such dispute")
def get_dispute(dispute_id: str) -> disputes.Shown:
    """A dispute: with its evidence to its bot's owner and the operator; once ruled, its
    statement and sealed ruling to anyone."""
    return disputes.get(arena(), dispute_id, by=_caller())


@blp.route("/<dispute_id>/ruling", methods=["POST"])
@operator_only(blp)
@blp.arguments(RulingCreate)
@blp.response(200, DisputeSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such dispute")
@blp.alt_response(
    409,
    schema=ErrorSchema,
    description="ruled already; not replayable; strike where the answer could not stand",
)
@blp.alt_response(
    422, schema=ErrorSchema, description="no reason; a remedy missing or extra; strike on a hand"
)
def rule(args: dict[str, Any], dispute_id: str) -> Dispute:
    """Rule on an open dispute (the operator): rejected with a reason, or upheld with the
    remedy ``replay`` (the match voided and played again from its deal, with the same seats)
    or ``strike`` (the match voided and continued from the contested decision with its
    recorded answer, where the evidence says that answer could stand); a worker applies it,
    once. The ruling is final and sealed."""
    remedy = None if args["remedy"] is None else Remedy(args["remedy"])
    return disputes.rule(
        arena(),
        dispute_id,
        status=DisputeStatus(args["status"]),
        reason=args["reason"],
        remedy=remedy,
    )


@blp.route("/<dispute_id>/remedy", methods=["POST"])
@operator_only(blp)
@blp.response(202, DisputeShownSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such dispute")
@blp.alt_response(409, schema=ErrorSchema, description="no upheld ruling with a remedy")
def remedy(dispute_id: str) -> disputes.Shown:
    """Queue an upheld ruling's remedy again (the operator, should ``ruling.applied`` stay
    false after a crash): it is applied once however often it runs."""
    return disputes.queue_remedy_again(arena(), dispute_id)
