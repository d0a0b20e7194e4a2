"""What the store's Redis client answers, and its transactions, typed: the one boundary
between redis-py's annotations and the store's code.

redis-py annotates every command as returning ``ResponseT`` (``Awaitable[Any] | Any``: its sync
and asyncio clients share the annotations), and its string commands as returning ``str`` even
on a client that answers ``bytes``. The store's client is synchronous and answers bytes
(``decode_responses`` off), so each reply is one of the few shapes below; each function checks
its shape and gives it its real type, so that a client of another kind fails at once and
loudly.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TypeVar, cast

import redis
from redis.client import Pipeline, PubSub

T = TypeVar("T")


def blob(reply: object) -> bytes | None:
    """A bulk string (``GET``, ``HGET``): its bytes, None for a missing key or field."""
    if reply is None or isinstance(reply, bytes):
        return reply
    raise _unexpected(reply, "bytes or nil")


def text(reply: object) -> str | None:
    """A bulk string, decoded (None for a missing key or field)."""
    found = blob(reply)
    return None if found is None else found.decode()


def number(reply: object) -> int:
    """An integer reply (``INCR``, ``SCARD``, ``LLEN``, ``ZCARD``, ``HDEL``)."""
    if isinstance(reply, int):
        return reply
    raise _unexpected(reply, "an integer")


def boolean(reply: object) -> bool:
    """A yes or no (``PING``, ``EXISTS``, ``SISMEMBER``, ``HSETNX``: true, or an integer)."""
    return bool(number(reply))


def blobs(reply: object) -> list[bytes | None]:
    """An array of bulk strings (``LRANGE``, ``MGET``, ``HMGET``: nil for a missing one)."""
    return [blob(item) for item in _array(reply)]


def texts(reply: object) -> list[str]:
    """An array or set of members (``SMEMBERS``, ``ZREVRANGE``, ``ZINTER``), decoded."""
    return [_bytes(item).decode() for item in _array(reply)]


def scores(reply: object) -> list[float | None]:
    """A ``ZMSCORE`` reply: each member's score, None for one not in the set."""
    found = []
    for item in _array(reply):
        if item is not None and not isinstance(item, float | int):
            raise _unexpected(item, "a score or nil")
        found.append(None if item is None else float(item))
    return found


def pubsub(client: redis.Redis) -> PubSub:
    """A new pub/sub connection of ``client`` (redis-py leaves ``Redis.pubsub`` unannotated)."""
    return cast(Callable[[], PubSub], client.pubsub)()


def fields(reply: object) -> dict[str, str]:
    """An ``HGETALL`` reply, decoded (empty for a missing key)."""
    if not isinstance(reply, dict):
        raise _unexpected(reply, "a hash")
    return {_bytes(k).decode(): _bytes(v).decode() for k, v in reply.items()}


def transaction(client: redis.Redis, func: Callable[[Pipeline], T], *watched: str) -> T:
    """``func``'s value, ``func`` run on a pipeline watching ``watched``: it reads, then queues
    its writes after ``pipe.multi()``; it runs again from the start whenever a watched key
    changed before the writes were applied (``Redis.transaction``, whose annotations take a
    ``func`` returning None and give back the EXEC reply, not ``func``'s value)."""
    run = cast(Callable[[Pipeline], None], func)
    return cast(T, client.transaction(run, *watched, value_from_callable=True))


def watch(pipe: Pipeline, *keys: str) -> None:
    """``WATCH`` on ``pipe`` (redis-py leaves ``Pipeline.watch`` unannotated)."""
    cast(Callable[..., None], pipe.watch)(*keys)


def _array(reply: object) -> Collection[object]:
    if isinstance(reply, list | set | tuple):
        return reply
    raise _unexpected(reply, "an array")


def _bytes(reply: object) -> bytes:
    if isinstance(reply, bytes):
        return reply
    raise _unexpected(reply, "bytes")


def _unexpected(reply: object, wanted: str) -> TypeError:
    return TypeError(
        f"Redis answered {type(reply).__name__} where the store reads {wanted}: the store needs"
        " a synchronous client that answers bytes (decode_responses off)"
    )
