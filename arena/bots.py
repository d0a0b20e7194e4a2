"""Bots, from registration to retirement: register (``pending``), verify the endpoint with the
signed ``hello`` (``active``), change it, the doctor's report, rotate the signing secret,
pause, resume and retire. A pull bot (:class:`~arena.records.Transport`) has no endpoint: its
``hello`` and the doctor's requests go through the stream it holds open (:mod:`arena.pull`).

A check that calls the bot's endpoint runs inside the caller's ``slot`` (a context-manager
factory): the web process gives one of its few handshake slots, so that slow endpoints cannot
pile up handshakes in it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence, Set
from contextlib import AbstractContextManager
from dataclasses import dataclass

from arena.context import Arena
from arena.doctor import Report, examine, examine_pull
from arena.endpoints import check_callable
from arena.errors import InvalidError, NotFoundError, WrongStateError
from arena.pull_transport import PullTransport
from arena.records import BotStatus, Page, RegisteredBot, Transport
from arena.store import BotChanges, new_secret
from arena.transport import HelloError, handshake, with_secret_hint
from bot_sdk.protocol import hello_request

Slot = Callable[[], AbstractContextManager[object]]
"""Where an endpoint check may run: entered around each call to the bot's endpoint."""


@dataclass(frozen=True)
class Registration:
    """A new bot and its credentials, shown this once."""

    bot: RegisteredBot
    token: str
    signing_secret: str


@dataclass(frozen=True)
class RotatedSecret:
    """The new signing secret (shown once), and how long the old one still signs requests."""

    signing_secret: str
    previous_valid_for_s: float


def register(
    arena: Arena,
    *,
    name: str,
    endpoint: str | None,
    description: str,
    contact: str,
    transport: Transport = Transport.PUSH,
    ladder: bool = False,
    max_concurrent: int = 1,
) -> Registration:
    """Store a bot, ``pending`` until it is verified; nothing is sent to it yet (its owner has
    no secret to answer with). A push bot needs an endpoint; a pull bot has none."""
    if transport is Transport.PULL and endpoint:
        raise InvalidError(
            "a pull bot has no endpoint: it connects to the arena (leave endpoint out, or "
            'register a push bot with "transport": "push")',
            field="endpoint",
        )
    if transport is Transport.PUSH and not endpoint:
        raise InvalidError(
            "a push bot needs the endpoint the arena calls; a bot that cannot be reached (behind "
            'NAT or a firewall) registers with "transport": "pull" and connects out',
            field="endpoint",
        )
    secret = new_secret()
    bot, token = arena.store.create_bot(
        name=name,
        endpoint=_callable(arena, endpoint) if endpoint else "",
        description=description,
        contact=contact,
        version="",
        secret=secret,
        status=BotStatus.PENDING,
        transport=transport,
        ladder=ladder,
        max_concurrent=max_concurrent,
    )
    return Registration(bot, token, secret)


def get(arena: Arena, bot_id: str) -> RegisteredBot:
    """The bot as shown, with whether a pull bot is connected now."""
    found = arena.store.get_bot(bot_id)
    if found is None:  # a token's bot always exists; kept so a broken index is a 404, not a 500
        raise NotFoundError(f"there is no bot {bot_id}")
    return with_presence(arena, [found])[0]


def listed(arena: Arena, *, page: int, per_page: int) -> Page[RegisteredBot]:
    """A page of the registered bots, with whether each pull bot is connected now."""
    found = arena.store.list_bots(page=page, per_page=per_page)
    return dataclasses.replace(found, items=with_presence(arena, found.items))


def with_presence(arena: Arena, bots: Sequence[RegisteredBot]) -> list[RegisteredBot]:
    """``bots``, each pull bot with whether its stream is open now (one round trip)."""
    pulled = [b.id for b in bots if b.transport is Transport.PULL]
    now = arena.store.mailbox.connected(pulled)
    return [
        b if b.transport is Transport.PUSH else dataclasses.replace(b, connected=b.id in now)
        for b in bots
    ]


def change(
    arena: Arena,
    bot_id: str,
    *,
    slot: Slot,
    endpoint: str | None = None,
    description: str | None = None,
    contact: str | None = None,
    allow_human_games: bool | None = None,
    ladder: bool | None = None,
    max_concurrent: int | None = None,
) -> RegisteredBot:
    """Change what is given. A new endpoint of a verified bot is checked with a handshake (its
    version is updated); a pending bot's is only checked as a URL, its verification comes
    after."""
    changes = BotChanges()
    if description is not None:
        changes["description"] = description
    if contact is not None:
        changes["contact"] = contact
    if allow_human_games is not None:
        changes["allow_human_games"] = allow_human_games
    if ladder is not None:
        changes["ladder"] = ladder
    if max_concurrent is not None:
        changes["max_concurrent"] = max_concurrent
    if endpoint is None and not changes:
        raise InvalidError(
            "nothing to change: send endpoint, description, contact, allow_human_games, "
            "ladder or max_concurrent"
        )
    current = arena.store.changeable(bot_id)
    if endpoint is not None:
        if current.transport is Transport.PULL:
            raise InvalidError(
                "a pull bot has no endpoint: it connects to the arena", field="endpoint"
            )
        changes["endpoint"] = endpoint
        if current.status is BotStatus.PENDING:
            _callable(arena, endpoint)
        else:
            changes["version"] = _answered_version(arena, bot_id, endpoint, slot)
    return arena.store.update_bot(bot_id, **changes)


def verify_endpoint(arena: Arena, bot_id: str, *, slot: Slot) -> RegisteredBot:
    """The signed ``hello`` to the bot (at its endpoint, or through its stream): when it
    answers, a pending bot becomes active (and any bot's version is updated)."""
    current = arena.store.changeable(bot_id)
    if current.transport is Transport.PULL:
        version = _pulled_version(arena, current, slot)
    else:
        version = _answered_version(arena, bot_id, current.endpoint, slot)
    return arena.store.endpoint_verified(bot_id, version)


def doctor(arena: Arena, bot_id: str, *, slot: Slot) -> Report:
    """The doctor's report card on the bot (:mod:`arena.doctor`), at its endpoint or through
    its stream; a failing check is in the report, not a refusal."""
    current = get(arena, bot_id)
    config = arena.config
    if current.transport is Transport.PULL:
        with slot():
            return examine_pull(
                arena.store.mailbox,
                bot_id,
                arena.store.signing_secrets(bot_id),
                hello_timeout_s=config.handshake_timeout_s,
                secret_hint=secret_hint(bot_id),
            )
    _callable(arena, current.endpoint)
    with slot():
        return examine(
            current.endpoint,
            arena.store.signing_secrets(bot_id),
            allow_private=config.allow_private_endpoints,
            hello_timeout_s=config.handshake_timeout_s,
            secret_hint=secret_hint(bot_id),
        )


def rotate_secret(arena: Arena, bot_id: str) -> RotatedSecret:
    """Sign with a new secret; the old one still signs for ``secret_grace_s``, so that matches
    in flight verify."""
    secret = new_secret()
    grace = arena.config.secret_grace_s
    arena.store.rotate_secret(bot_id, secret, grace_s=grace)
    return RotatedSecret(secret, grace)


def pause(arena: Arena, bot_id: str) -> RegisteredBot:
    """Keep an active bot out of new tournaments until resumed."""
    return _move(arena, bot_id, "pause", BotStatus.PAUSED, {BotStatus.ACTIVE})


def resume(arena: Arena, bot_id: str) -> RegisteredBot:
    return _move(arena, bot_id, "resume", BotStatus.ACTIVE, {BotStatus.PAUSED})


def retire(arena: Arena, bot_id: str) -> RegisteredBot:
    """For good: a retired bot plays no more and cannot be changed (a pull bot's stream is
    closed)."""
    retired = _move(
        arena,
        bot_id,
        "retire",
        BotStatus.RETIRED,
        {BotStatus.PENDING, BotStatus.ACTIVE, BotStatus.PAUSED},
    )
    if retired.transport is Transport.PULL:
        arena.store.mailbox.close_stream(bot_id, "retired")
    return retired


def _move(
    arena: Arena, bot_id: str, verb: str, status: BotStatus, allowed_from: Set[BotStatus]
) -> RegisteredBot:
    current = get(arena, bot_id)
    if current.status not in allowed_from:
        allowed = " or ".join(sorted(s.value for s in allowed_from))
        raise WrongStateError(
            f"bot {bot_id} is {current.status.value}; it can be {verb}d only when {allowed}"
        )
    return arena.store.set_bot_status(bot_id, status)


def _callable(arena: Arena, url: str) -> str:
    return check_callable(url, allow_private=arena.config.allow_private_endpoints)


def _answered_version(arena: Arena, bot_id: str, url: str, slot: Slot) -> str:
    """The version the bot at ``url`` says in a handshake signed with its secrets, or an
    :class:`InvalidError` on ``endpoint`` saying exactly why not."""
    config = arena.config
    secrets = arena.store.signing_secrets(bot_id)
    _callable(arena, url)
    try:
        with slot():
            info = handshake(
                url,
                secrets,
                timeout_s=config.handshake_timeout_s,
                allow_private=config.allow_private_endpoints,
            )
    except HelloError as error:
        raise InvalidError(
            with_secret_hint(error, secret_hint(bot_id)), field="endpoint", code="handshake_failed"
        ) from None
    return info.version


def _pulled_version(arena: Arena, bot: RegisteredBot, slot: Slot) -> str:
    """The version a pull bot says in a ``hello`` through its stream, or an
    :class:`InvalidError` saying why not (most often: it is not connected)."""
    channel = PullTransport(arena.store.mailbox, bot.id, arena.store.signing_secrets(bot.id))
    try:
        with slot():
            info = channel.hello(hello_request(), arena.config.handshake_timeout_s)
    except HelloError as error:
        raise InvalidError(
            with_secret_hint(error, secret_hint(bot.id)), code="handshake_failed"
        ) from None
    return info.version


def secret_hint(bot_id: str) -> str:
    """What to do when the bot ``bot_id`` refuses the arena's signature: which secret the arena
    signs with, where the bot reads it, how to replace a lost one (never the secret itself)."""
    return (
        f"The arena signs with bot {bot_id}'s signing secret, shown once when the bot was "
        "registered (or its secret last rotated); the bot must check signatures with it: a bot "
        "the SDK serves reads it from GONGZHU_BOT_SECRET (or the variables --secret-env names) "
        f"when it starts. Lost it? `gongzhu bots rotate-secret {bot_id} --token TOKEN` (POST "
        f"/api/bots/{bot_id}/rotate-secret) gives a new one: serve the bot with that"
    )
