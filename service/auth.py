"""Who may call what: the operator (one configured token) and each bot's owner (its token).

Both send ``Authorization: Bearer <token>``. No token: 401. A token that is not the operator's
on an operator endpoint, or that manages another bot: 403. A token that manages no bot: 401.
"""

from __future__ import annotations

import functools
import hmac
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

from flask import request

from arena.records import OPERATOR
from arena.store import hash_token
from service.context import arena, store
from service.errors import ErrorSchema
from service.smorest import Blueprint, abort

F = TypeVar("F", bound=Callable[..., Any])

SECURITY_SCHEMES = {
    "operator": {"type": "http", "scheme": "bearer", "description": "GONGZHU_OPERATOR_TOKEN"},
    "owner": {"type": "http", "scheme": "bearer", "description": "the bot's management token"},
}
_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="gongzhu-arena"'}


def sent_token() -> str | None:
    """The request's bearer token, if it sends one."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def bearer_token() -> str:
    """The request's bearer token, or a 401."""
    token = sent_token()
    if token is None:
        abort(
            401,
            message="this endpoint needs a token: send the header Authorization: Bearer <token>",
            headers=_CHALLENGE,
        )
    return token


def is_operator() -> bool:
    """Whether the request carries the operator's token (no token: not the operator)."""
    expected, token = arena().config.operator_token, sent_token()
    if not expected or token is None:
        return False
    return hmac.compare_digest(token.encode(), expected.encode())


def operator_only(blp: Blueprint) -> Callable[[F], F]:
    """Only the operator may call the view."""

    def decorate(view: F) -> F:
        @functools.wraps(view)
        def checked(*args: Any, **kwargs: Any) -> Any:
            if not arena().config.operator_token:
                abort(
                    403,
                    message="operator endpoints are off: the arena has no GONGZHU_OPERATOR_TOKEN",
                )
            bearer_token()  # no token: 401
            if not is_operator():
                abort(403, message="this token is not the operator's: use the operator token")
            return view(*args, **kwargs)

        return _documented(blp, cast(F, checked), "operator", "the operator token")

    return decorate


OWNER_KEPT_S = 5.0
"""How long this process remembers which bot a token manages: a pull bot sends its token with
every answer, and a token never changes bot, so the lookup is made once every few seconds."""
_owners: dict[str, tuple[str, float]] = {}
_OWNERS_KEPT = 10_000


def owned_bot(token: str) -> str | None:
    """The bot ``token`` manages (:meth:`Store.bot_for_token`), remembered for
    :data:`OWNER_KEPT_S` when found."""
    now = time.monotonic()
    key = hash_token(token)
    found = _owners.get(key)
    if found is not None and now - found[1] < OWNER_KEPT_S:
        return found[0]
    owned = store().bot_for_token(token)
    if owned is not None:
        if len(_owners) >= _OWNERS_KEPT:
            _owners.clear()
        _owners[key] = (owned, now)
    return owned


def owner_only(blp: Blueprint) -> Callable[[F], F]:
    """Only the owner of the bot named by the ``bot_id`` path argument may call the view."""

    def decorate(view: F) -> F:
        @functools.wraps(view)
        def checked(*args: Any, bot_id: str, **kwargs: Any) -> Any:
            owned = owned_bot(bearer_token())
            if owned is None:
                abort(
                    401,
                    message="this token manages no bot: use the token you were given at "
                    "registration",
                    headers=_CHALLENGE,
                )
            if owned != bot_id:
                abort(403, message=f"this token manages another bot, not {bot_id}")
            return view(*args, bot_id=bot_id, **kwargs)

        return _documented(blp, cast(F, checked), "owner", "this bot's management token")

    return decorate


def caller() -> str:
    """Who is asking, by the request's token: :data:`~arena.records.OPERATOR` or the bot the
    token manages; a 401 for no token or one that is neither."""
    token = bearer_token()
    if is_operator():
        return OPERATOR
    owned = owned_bot(token)
    if owned is None:
        abort(
            401,
            message="this token manages no bot: use the token you were given at registration",
            headers=_CHALLENGE,
        )
    return owned


def owner_or_operator(blp: Blueprint) -> Callable[[F], F]:
    """Any bot's owner or the operator may call the view (it checks which, :func:`caller`);
    the token is checked before the request's body."""

    def decorate(view: F) -> F:
        @functools.wraps(view)
        def checked(*args: Any, **kwargs: Any) -> Any:
            caller()
            return view(*args, **kwargs)

        why = "no token, or one the arena does not know"
        refused: F = blp.alt_response(401, schema=ErrorSchema, description=why)(cast(F, checked))
        documented: F = blp.doc(security=[{"owner": []}, {"operator": []}])(refused)
        return documented

    return decorate


def _documented(blp: Blueprint, view: F, scheme: str, whose: str) -> F:
    """``view`` documented with its security scheme and its two refusals."""
    for status, why in ((401, "no token, or one the arena does not know"), (403, f"not {whose}")):
        view = blp.alt_response(status, schema=ErrorSchema, description=why)(view)
    documented: F = blp.doc(security=[{scheme: []}])(view)
    return documented
