"""Bots: registration (pending), the endpoint's verification (the signed hello that makes a bot
active), the owner's view and changes (the use cases: :mod:`arena.bots`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from flask.views import MethodView
from marshmallow import Schema

from arena import bots
from arena.context import Arena
from arena.doctor import Report
from arena.records import Page, RegisteredBot
from service.auth import owner_only
from service.context import arena
from service.errors import ErrorSchema
from service.limits import (
    changes_no_endpoint,
    endpoint_check_limit,
    handshake_slot,
    limiter,
    owner_key,
    register_limit,
)
from service.schemas import (
    BotCredentials,
    BotPublicSchema,
    BotRegistration,
    BotSchema,
    BotUpdate,
    DoctorReportSchema,
    PageArgs,
    SecretSchema,
    page_of,
)
from service.smorest import Blueprint

blp = Blueprint("bots", __name__, url_prefix="/api/bots", description="Registered bots")
P = ParamSpec("P")
R = TypeVar("R")


@blp.route("")
class Bots(MethodView):
    @blp.arguments(PageArgs, location="query")
    @blp.response(200, page_of(BotPublicSchema))
    def get(self, args: dict[str, Any]) -> Page[RegisteredBot]:
        """List registered bots (public fields only), newest first."""
        return bots.listed(arena(), page=args["page"], per_page=args["per_page"])

    @limiter.limit(register_limit, methods=["POST"])
    @blp.arguments(BotRegistration)
    @blp.response(201, BotCredentials)
    @blp.alt_response(422, schema=ErrorSchema, description="invalid field")
    @blp.alt_response(409, schema=ErrorSchema, description="the name is taken")
    @blp.alt_response(429, schema=ErrorSchema, description="too many registrations")
    def post(self, args: dict[str, Any]) -> bots.Registration:
        """Register a bot, ``pending``: serve it with the signing secret (a push bot), or
        connect it (a pull bot: ``"transport": "pull"``, no endpoint), then verify it
        (``POST /api/bots/{id}/verify-endpoint``) to make it active.

        The answer holds the management token and the signing secret: they are shown only
        this once. Nothing is sent to the bot yet."""
        return bots.register(
            arena(),
            name=args["name"],
            endpoint=args["endpoint"],
            description=args["description"],
            contact=args["contact"],
            transport=args["transport"],
            ladder=args["ladder"],
            max_concurrent=args["max_concurrent"],
        )


@blp.route("/<bot_id>")
class BotById(MethodView):
    @owner_only(blp)
    @blp.response(200, BotSchema)
    def get(self, bot_id: str) -> RegisteredBot:
        """The bot as its owner sees it."""
        return bots.get(arena(), bot_id)

    @owner_only(blp)
    @limiter.limit(
        endpoint_check_limit,
        key_func=owner_key,
        methods=["PATCH"],
        exempt_when=changes_no_endpoint,
    )
    @blp.arguments(BotUpdate)
    @blp.response(200, BotSchema)
    @blp.alt_response(409, schema=ErrorSchema, description="the bot is retired")
    @blp.alt_response(429, schema=ErrorSchema, description="too many endpoint changes")
    @blp.alt_response(503, schema=ErrorSchema, description="too many endpoint checks at once")
    def patch(self, args: dict[str, Any], bot_id: str) -> RegisteredBot:
        """Change the endpoint (checked with a new handshake; a pending bot's only checked as
        a URL, its verification comes after), description or contact, or allow or refuse
        human games (``allow_human_games``)."""
        return bots.change(
            arena(),
            bot_id,
            slot=handshake_slot,
            endpoint=args.get("endpoint"),
            description=args.get("description"),
            contact=args.get("contact"),
            allow_human_games=args.get("allow_human_games"),
            ladder=args.get("ladder"),
            max_concurrent=args.get("max_concurrent"),
        )


def _endpoint_check(
    action: str, schema: type[Schema], refused: str
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """An owner's ``POST /api/bots/{id}/{action}`` that calls the bot's endpoint: counted in
    the owner's endpoint checks, and run in one of the process's handshake slots."""

    def decorate(view: Callable[P, R]) -> Callable[P, R]:
        for status, why in (
            (422, refused),
            (429, "too many endpoint checks"),
            (503, "too many endpoint checks at once"),
        ):
            view = blp.alt_response(status, schema=ErrorSchema, description=why)(view)
        view = blp.response(200, schema)(view)
        view = limiter.limit(endpoint_check_limit, key_func=owner_key)(view)
        view = owner_only(blp)(view)
        return blp.route(f"/<bot_id>/{action}", methods=["POST"])(view)

    return decorate


@_endpoint_check("verify-endpoint", BotSchema, "the handshake failed: the message says why")
@blp.alt_response(409, schema=ErrorSchema, description="the bot is retired")
def verify_endpoint(bot_id: str) -> RegisteredBot:
    """Send the endpoint the protocol's hello, signed with the bot's secret: when it answers,
    a pending bot becomes active (and any bot's version is updated)."""
    return bots.verify_endpoint(arena(), bot_id, slot=handshake_slot)


@_endpoint_check("doctor", DoctorReportSchema, "the endpoint is not one the arena calls")
def doctor(bot_id: str) -> Report:
    """Probe the bot's endpoint the way the arena calls it (``gongzhu doctor``): the report
    card, each check with ``ok`` and what was found. A failing check is a 200 with
    ``ok: false``."""
    return bots.doctor(arena(), bot_id, slot=handshake_slot)


@blp.route("/<bot_id>/rotate-secret", methods=["POST"])
@owner_only(blp)
@blp.response(200, SecretSchema)
@blp.alt_response(409, schema=ErrorSchema, description="the bot is retired")
def rotate_secret(bot_id: str) -> bots.RotatedSecret:
    """Issue a new signing secret (shown once); the old one still signs requests for a grace
    period, so that matches in flight verify."""
    return bots.rotate_secret(arena(), bot_id)


def _status_view(name: str, use_case: Callable[[Arena, str], RegisteredBot], doc: str) -> None:
    """``POST /api/bots/{id}/{name}``: the owner moves the bot to another status."""

    def change(bot_id: str) -> RegisteredBot:
        return use_case(arena(), bot_id)

    change.__name__ = name
    change.__doc__ = doc
    view = blp.alt_response(409, schema=ErrorSchema, description="not allowed from this status")(
        blp.response(200, BotSchema)(owner_only(blp)(change))
    )
    blp.route(f"/<bot_id>/{name}", methods=["POST"])(view)


_status_view("pause", bots.pause, "Keep the bot out of new tournaments until resumed.")
_status_view("resume", bots.resume, "Make a paused bot active again.")
_status_view(
    "retire", bots.retire, "Retire the bot for good: it plays no more and cannot be changed."
)
