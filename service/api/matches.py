"""Matches: listing, results, the sealed replay log, its verification, the arena's public key."""

from __future__ import annotations

import hashlib
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from flask import Response

from arena.records import Match, Page
from replays.integrity import (
    IntegrityError,
    check,
    key_id_of,
    public_key_pem,
    unpack,
    unpacked_json,
)
from replays.log import FORMAT
from replays.upgrade import LogReadError, read_log
from replays.verify import verify
from service.auth import is_operator
from service.context import arena, store
from service.errors import ErrorSchema
from service.limits import limiter, verify_limit
from service.schemas import MatchArgs, MatchSchema, VerificationSchema, page_of
from service.smorest import Blueprint, abort

blp = Blueprint("matches", __name__, url_prefix="/api", description="Matches and replays")
EMBARGOED = (
    "embargoed: the match's deal is still being played by another match of its tournament "
    "(error `embargoed`); the operator's token is served"
)


def _finished(match_id: str) -> tuple[Match, bytes]:
    """The match and its stored log, if the log may be shown: the match has finished, and its
    deal is not under embargo (docs/REPLAYS.md, fair deals) unless the operator asks."""
    match = _match(match_id)
    blob = store().replay_blob(match_id)
    if blob is None:
        abort(404, message=f"match {match_id} has no replay yet: it has not finished")
    embargo = store().embargo(match)
    if embargo is not None and not is_operator():
        abort(409, message=embargo.message, error="embargoed")
    return match, blob


def _match(match_id: str) -> Match:
    match = store().get_match(match_id)
    if match is None:
        abort(404, message=f"there is no match {match_id}")
    return match


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
    return _match(match_id)


@blp.route("/matches/<match_id>/replay")
@blp.response(200, description=f"the sealed match log ({FORMAT}, docs/REPLAYS.md)")
@blp.alt_response(404, schema=ErrorSchema, description="no such match, or not finished")
@blp.alt_response(409, schema=ErrorSchema, description=EMBARGOED)
def replay(match_id: str) -> Response:
    """The match's sealed log: every decision, its integrity block and the arena's signature."""
    # the stored canonical JSON as it is: nothing to parse and encode again
    return Response(unpacked_json(_finished(match_id)[1]), mimetype="application/json")


@blp.route("/matches/<match_id>/verify", methods=["POST"])
@limiter.limit(verify_limit, exempt_when=is_operator)
@blp.response(200, VerificationSchema)
@blp.alt_response(404, schema=ErrorSchema, description="no such match, or not finished")
@blp.alt_response(409, schema=ErrorSchema, description=EMBARGOED)
@blp.alt_response(429, schema=ErrorSchema, description="too many verifications from here")
def verify_match(match_id: str) -> dict[str, Any]:
    """Check the log's seal, then re-run the referee over it (and check its deals against the
    tournament's secret once it is revealed); the first discrepancy, if any. A sealed log never
    changes, so each verification is stored and answered again from the store: the referee
    runs once per log, key and revealed secret, however often it is asked."""
    match, blob = _finished(match_id)
    public = arena().replay_key().public_key()
    secret = _revealed_secret(match.tournament_id)
    fingerprint = hashlib.sha256(
        b"|".join([blob, key_id_of(public).encode(), secret or b""])
    ).hexdigest()
    stored = store().verification(match_id, fingerprint)
    if stored is not None:
        return stored
    report = _verification(unpack(blob), public, secret)
    store().keep_verification(match_id, fingerprint, report)
    return report


def _verification(
    sealed: dict[str, Any], public: Ed25519PublicKey, secret: bytes | None
) -> dict[str, Any]:
    integrity = "ok"
    try:
        check(sealed, {key_id_of(public): public})
    except IntegrityError as error:
        integrity = str(error)
    try:
        log = read_log(sealed)
    except LogReadError as error:
        return {"ok": False, "integrity": integrity, "discrepancy": str(error)}
    report = verify(log, secret=secret)
    return {
        "ok": report.ok and integrity == "ok",
        "integrity": integrity,
        "hands": report.hands,
        "decisions": report.decisions,
        "requests_checked": report.requests_checked,
        "deals_checked": report.deals_checked,
        "discrepancy": None if report.discrepancy is None else str(report.discrepancy),
    }


def _revealed_secret(tournament_id: str | None) -> bytes | None:
    """The deal secret of the match's tournament, if the tournament is over (revealed)."""
    tournament = None if tournament_id is None else store().get_tournament(tournament_id)
    return None if tournament is None else store().revealed_secret(tournament)


@blp.route("/replays/public-key")
@blp.response(200, description="the PEM of the Ed25519 key that checks replay seals")
def public_key() -> Response:
    """The arena's Ed25519 public key (PEM): anyone can check a replay's seal with it."""
    public = arena().replay_key().public_key()
    response = Response(public_key_pem(public), mimetype="application/x-pem-file")
    response.headers["X-Key-Id"] = key_id_of(public)
    return response
