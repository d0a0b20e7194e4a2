"""Matches: listing, results, the sealed replay log, its verification, the arena's public key."""

from __future__ import annotations

from typing import Any

from flask import Response

from arena import matches
from arena.records import Match, Page
from replays.integrity import (
    key_id_of,
    public_key_pem,
    unpacked_json,
)
from replays.log import FORMAT
from service.auth import is_operator
from service.context import arena, store
from service.errors import ErrorSchema
from service.limits import EXPENSIVE_READS, expensive_read, limiter, verify_limit
from service.schemas import MatchArgs, MatchSchema, VerificationSchema, page_of
from service.smorest import Blueprint

blp = Blueprint("matches", __name__, url_prefix="/api", description="Matches and replays")
EMBARGOED = (
    "embargoed: the match's deal is still being played by another match of its tournament "
    "(error `embargoed`); the operator's token is served"
)

ARCHIVE_UNAVAILABLE = (
    "the log cannot be read from the arena's archive just now (unreachable, or its copy "
    "missing or damaged: never served); try again later"
)


@blp.route("/matches")
@blp.arguments(MatchArgs, location="query")
@blp.response(200, page_of(MatchSchema))
def list_matches(args: dict[str, Any]) -> Page[Match]:
    """Matches newest first, optionally of one tournament and/or one bot."""
    return store().list_matches(
        page=args["page"],
        per_page=args["per_page"],
        tournament_id=args.get("tournament"),
        bot_id=args.get("bot"),
    )


@blp.route("/matches/<match_id>")
@blp.response(200, MatchSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such match")
def get_match(match_id: str) -> Match:
    """One match, with its result once it has finished."""
    return matches.get(arena(), match_id)


@blp.route("/matches/<match_id>/replay")
@expensive_read
@blp.response(200, description=f"the sealed match log ({FORMAT}, docs/REPLAYS.md)")
@blp.alt_response(404, schema=ErrorSchema, description="no such match, or not finished")
@blp.alt_response(409, schema=ErrorSchema, description=EMBARGOED)
@blp.alt_response(429, schema=ErrorSchema, description=EXPENSIVE_READS)
@blp.alt_response(503, schema=ErrorSchema, description=ARCHIVE_UNAVAILABLE)
def replay(match_id: str) -> Response:
    """The match's sealed log: every decision, its integrity block and the arena's signature."""
    # the stored canonical JSON as it is: nothing to parse and encode again
    _, blob = matches.finished(arena(), match_id, operator=is_operator())
    return Response(unpacked_json(blob), mimetype="application/json")


@blp.route("/matches/<match_id>/verify", methods=["POST"])
@limiter.limit(verify_limit, exempt_when=is_operator)
@blp.response(200, VerificationSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such match, or not finished")
@blp.alt_response(409, schema=ErrorSchema, description=EMBARGOED)
@blp.alt_response(429, schema=ErrorSchema, description="too many verifications from here")
@blp.alt_response(503, schema=ErrorSchema, description=ARCHIVE_UNAVAILABLE)
def verify_match(match_id: str) -> dict[str, Any]:
    """Check the log's seal, then re-run the referee over it (and check its deals against the
    tournament's secret once it is revealed); the first discrepancy, if any. A sealed log never
    changes, so each verification is kept and answered again: the referee runs once per log,
    key and revealed secret, however often it is asked."""
    return matches.verification(arena(), match_id, operator=is_operator())


@blp.route("/replays/public-key")
@blp.response(200, description="the PEM of the Ed25519 key that checks replay seals")
def public_key() -> Response:
    """The arena's Ed25519 public key (PEM): anyone can check a replay's seal with it."""
    public = arena().replay_key().public_key()
    response = Response(public_key_pem(public), mimetype="application/x-pem-file")
    response.headers["X-Key-Id"] = key_id_of(public)
    return response
