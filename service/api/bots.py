"""Bots: registration (pending), the endpoint's verification (the signed hello that makes a bot
active), the owner's view and changes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import Schema

from arena.doctor import examine
from arena.errors import NameTakenError, NotFoundError, WrongStateError
from arena.records import BotStatus, RegisteredBot
from arena.store import new_secret
from arena.transport import HelloError, handshake
from service.api import views
from service.auth import owner_only
from service.context import arena, store
from service.endpoints import EndpointError, check_public, check_url
from service.errors import ApiError, ErrorSchema, field_error
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

blp = Blueprint("bots", __name__, url_prefix="/api/bots", description="Registered bots")


def _checked_url(url: str) -> str:
    """``url`` if the arena may call it (well-formed; public unless private endpoints are
    allowed), else a 422 on ``endpoint`` saying why."""
    try:
        check_url(url)
        if not arena().config.allow_private_endpoints:
            check_public(url)
    except EndpointError as error:
        raise field_error(422, "endpoint", str(error)) from None
    return url


def _endpoint_checked(url: str, secrets: list[str]) -> str:
    """The bot's version from a signed handshake with ``url``, or a 422 saying exactly why
    not."""
    config = arena().config
    _checked_url(url)
    try:
        with handshake_slot():
            info = handshake(
                url,
                secrets,
                timeout_s=config.handshake_timeout_s,
                allow_private=config.allow_private_endpoints,
            )
    except HelloError as error:
        raise field_error(422, "endpoint", str(error), error="handshake_failed") from None
    return info.version


def _owned(bot_id: str) -> RegisteredBot:
    bot = store().get_bot(bot_id)
    if bot is None:  # a token's bot always exists; kept so a broken index is a 404, not a 500
        raise ApiError(404, f"there is no bot {bot_id}")
    return bot


@blp.route("")
class Bots(MethodView):
    @blp.arguments(PageArgs, location="query")
    @blp.response(200, page_of(BotPublicSchema))
    def get(self, args: dict[str, Any]) -> dict[str, Any]:
        """List registered bots (public fields only), newest first."""
        found = store().list_bots(page=args["page"], per_page=args["per_page"])
        return views.page(found, [views.bot(b) for b in found.items])

    @limiter.limit(register_limit, methods=["POST"])
    @blp.arguments(BotRegistration)
    @blp.response(201, BotCredentials)
    @blp.alt_response(422, schema=ErrorSchema, description="invalid field")
    @blp.alt_response(409, schema=ErrorSchema, description="the name is taken")
    @blp.alt_response(429, schema=ErrorSchema, description="too many registrations")
    def post(self, args: dict[str, Any]) -> dict[str, Any]:
        """Register a bot, ``pending``: serve it with the signing secret, then verify its
        endpoint (``POST /api/bots/{id}/verify-endpoint``) to make it active.

        The answer holds the management token and the signing secret: they are shown only
        this once. Nothing is sent to the endpoint yet."""
        secret = new_secret()
        try:
            bot, token = store().create_bot(
                name=args["name"],
                endpoint=_checked_url(args["endpoint"]),
                description=args["description"],
                contact=args["contact"],
                version="",
                secret=secret,
                status=BotStatus.PENDING,
            )
        except NameTakenError as error:
            raise field_error(409, "name", str(error), error="conflict") from None
        return {"bot": views.bot(bot), "token": token, "signing_secret": secret}


@blp.route("/<bot_id>")
class BotById(MethodView):
    @owner_only(blp)
    @blp.response(200, BotSchema)
    def get(self, bot_id: str) -> dict[str, Any]:
        """The bot as its owner sees it."""
        return views.bot(_owned(bot_id))

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
    def patch(self, args: dict[str, Any], bot_id: str) -> dict[str, Any]:
        """Change the endpoint (checked with a new handshake; a pending bot's only checked as
        a URL, its verification comes after), description or contact, or allow or refuse
        human games (``allow_human_games``)."""
        if not args:
            raise ApiError(
                422,
                "nothing to change: send endpoint, description, contact or allow_human_games",
            )
        current = _owned(bot_id)
        if current.status is BotStatus.RETIRED:
            raise ApiError(409, f"bot {bot_id} is retired: a retired bot cannot be changed")
        changes = dict(args)
        if "endpoint" in changes and current.status is BotStatus.PENDING:
            _checked_url(changes["endpoint"])
        elif "endpoint" in changes:
            changes["version"] = _endpoint_checked(
                changes["endpoint"], store().signing_secrets(bot_id)
            )
        with _refusals():
            return views.bot(store().update_bot(bot_id, **changes))


@contextmanager
def _refusals() -> Iterator[None]:
    """The store's refusals as API errors."""
    try:
        yield
    except WrongStateError as error:
        raise ApiError(409, str(error)) from None
    except NotFoundError as error:
        raise ApiError(404, str(error)) from None


F = TypeVar("F", bound=Callable[..., Any])


def _endpoint_check(action: str, schema: type[Schema], refused: str) -> Callable[[F], F]:
    """An owner's ``POST /api/bots/{id}/{action}`` that calls the bot's endpoint: counted in
    the owner's endpoint checks, and run in one of the process's handshake slots."""

    def decorate(view: F) -> F:
        for status, why in (
            (422, refused),
            (429, "too many endpoint checks"),
            (503, "too many endpoint checks at once"),
        ):
            view = blp.alt_response(status, schema=ErrorSchema, description=why)(view)
        view = blp.response(200, schema)(view)
        view = limiter.limit(endpoint_check_limit, key_func=owner_key)(view)
        view = owner_only(blp)(view)
        routed: F = blp.route(f"/<bot_id>/{action}", methods=["POST"])(view)
        return routed

    return decorate


@_endpoint_check("verify-endpoint", BotSchema, "the handshake failed: the message says why")
@blp.alt_response(409, schema=ErrorSchema, description="the bot is retired")
def verify_endpoint(bot_id: str) -> dict[str, Any]:
    """Send the endpoint the protocol's hello, signed with the bot's secret: when it answers,
    a pending bot becomes active (and any bot's version is updated)."""
    current = _owned(bot_id)
    if current.status is BotStatus.RETIRED:
        raise ApiError(409, f"bot {bot_id} is retired: a retired bot cannot be changed")
    version = _endpoint_checked(current.endpoint, store().signing_secrets(bot_id))
    with _refusals():
        return views.bot(store().endpoint_verified(bot_id, version))


@_endpoint_check("doctor", DoctorReportSchema, "the endpoint is not one the arena calls")
def doctor(bot_id: str) -> dict[str, Any]:
    """Probe the bot's endpoint the way the arena calls it (``gongzhu doctor``): the report
    card, each check with ``ok`` and what was found. A failing check is a 200 with
    ``ok: false``."""
    current = _owned(bot_id)
    config = arena().config
    _checked_url(current.endpoint)
    with handshake_slot():
        report = examine(
            current.endpoint,
            store().signing_secrets(bot_id),
            allow_private=config.allow_private_endpoints,
            hello_timeout_s=config.handshake_timeout_s,
        )
    return report.to_json()


@blp.route("/<bot_id>/rotate-secret", methods=["POST"])
@owner_only(blp)
@blp.response(200, SecretSchema)
@blp.alt_response(409, schema=ErrorSchema, description="the bot is retired")
def rotate_secret(bot_id: str) -> dict[str, Any]:
    """Issue a new signing secret (shown once); the old one still signs requests for a grace
    period, so that matches in flight verify."""
    secret = new_secret()
    grace = arena().config.secret_grace_s
    with _refusals():
        store().rotate_secret(bot_id, secret, grace_s=grace)
    return {"signing_secret": secret, "previous_valid_for_s": grace}


def _status_view(name: str, status: BotStatus, allowed_from: set[BotStatus], doc: str) -> None:
    def change(bot_id: str) -> dict[str, Any]:
        current = _owned(bot_id)
        if current.status not in allowed_from:
            allowed = " or ".join(sorted(s.value for s in allowed_from))
            raise ApiError(
                409,
                f"bot {bot_id} is {current.status.value}; it can be {name}d only when {allowed}",
            )
        with _refusals():
            return views.bot(store().set_bot_status(bot_id, status))

    change.__name__ = name
    change.__doc__ = doc
    view = blp.alt_response(409, schema=ErrorSchema, description="not allowed from this status")(
        blp.response(200, BotSchema)(owner_only(blp)(change))
    )
    blp.route(f"/<bot_id>/{name}", methods=["POST"])(view)


_status_view(
    "pause",
    BotStatus.PAUSED,
    {BotStatus.ACTIVE},
    "Keep the bot out of new tournaments until resumed.",
)
_status_view("resume", BotStatus.ACTIVE, {BotStatus.PAUSED}, "Make a paused bot active again.")
_status_view(
    "retire",
    BotStatus.RETIRED,
    {BotStatus.PENDING, BotStatus.ACTIVE, BotStatus.PAUSED},
    "Retire the bot for good: it plays no more and cannot be changed.",
)
