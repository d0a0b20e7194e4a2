"""The JSON Schemas (draft 2020-12) of ``gongzhu-bot/1`` and ``gongzhu-bot/2``, shipped with
the package.

One schema per request type (``<type>_request``), one per answer (``<kind>_answer`` and
``hello_answer``), ``observation`` and the ``common`` definitions they share. A request of
``gongzhu-bot/2`` has its own schema where it differs (``<type>_request_2``, and
``observation_2``, the current hand, which ``observation`` extends with the earlier results);
the hello and the answers are the same in both. Request schemas allow fields they do not name,
so that an arena adding a field (which the versioning policy allows) does not break an older
bot.

>>> validate_request({"protocol": "gongzhu-bot/1", "type": "hello"})
Traceback (most recent call last):
...
bot_sdk.schemas.InvalidMessageError: (top level): 'arena' is a required property
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry, Resource

from bot_sdk.protocol import SPOKEN, MessageType, ProtocolVersion

if TYPE_CHECKING:  # the class is public, its module is not
    from referencing._core import Resolver

NAMES = (
    "common",
    "observation",
    "observation_2",
    "hello_request",
    "decision_request",
    "decision_request_2",
    "hand_end_request",
    "hand_end_request_2",
    "match_end_request",
    "match_end_request_2",
    "hello_answer",
    "play_answer",
    "expose_answer",
    "pass_answer",
)
_MAX_MESSAGE = 300


class InvalidMessageError(ValueError):
    """A message that its schema refuses; the text names the field and the problem."""


@cache
def load(name: str) -> dict[str, Any]:
    """The schema ``name`` (one of :data:`NAMES`) as a JSON object."""
    if name not in NAMES:
        raise KeyError(f"no schema {name!r}; known: {', '.join(NAMES)}")
    schema: dict[str, Any] = json.loads(files(__name__).joinpath(f"{name}.json").read_text("utf-8"))
    return schema


@cache
def _registry() -> Registry[Any]:
    return Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in map(load, NAMES)
    )


@cache
def bundled(name: str) -> dict[str, Any]:
    """The schema ``name`` as one self-contained document: every ``$ref`` replaced by its
    target (the schemas have no recursion). It validates about three times faster."""
    schema = load(name)
    flat = _inline(schema, _registry().resolver(schema["$id"]))
    return {"$schema": schema["$schema"], "$id": schema["$id"], **flat}


def _inline(node: Any, resolver: Resolver[Any]) -> Any:
    if isinstance(node, list):
        return [_inline(item, resolver) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = resolver.lookup(node["$ref"])
        inlined = _inline(target.contents, target.resolver)
        rest = {key: _inline(value, resolver) for key, value in node.items() if key != "$ref"}
        return {"allOf": [inlined], **rest} if rest else inlined
    return {
        key: _inline(value, resolver)
        for key, value in node.items()
        if key not in ("$schema", "$id", "$defs")
    }


@cache
def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(bundled(name))


def validate(name: str, instance: Any) -> None:
    """Raise :class:`InvalidMessageError` unless ``instance`` matches the schema ``name``."""
    checker = validator(name)
    if checker.is_valid(instance):
        return
    error = best_match(checker.iter_errors(instance))
    if error is not None:
        raise InvalidMessageError(describe(error))


def validate_request(message: Any) -> MessageType:
    """Check a request the arena sent and return its type; the protocol version is checked
    first so that a version mismatch is reported as such."""
    if not isinstance(message, dict):
        raise InvalidMessageError(f"a request is a JSON object, not {type(message).__name__}")
    protocol = message.get("protocol")
    if protocol not in SPOKEN:
        spoken = " and ".join(SPOKEN)
        raise InvalidMessageError(f"this bot speaks {spoken}, the request says {protocol!r}")
    try:
        kind = MessageType(str(message.get("type")))
    except ValueError:
        known = ", ".join(t.value for t in MessageType)
        raise InvalidMessageError(
            f"unknown request type {message.get('type')!r}; known: {known}"
        ) from None
    validate(request_schema(kind, ProtocolVersion(protocol)), message)
    return kind


def request_schema(kind: MessageType, protocol: ProtocolVersion) -> str:
    """The name of the schema of a request of ``kind`` in ``protocol`` (a ``hello`` is written
    in ``gongzhu-bot/1`` only: its schema says so).

    >>> request_schema(MessageType.DECISION, ProtocolVersion.V2)
    'decision_request_2'
    """
    if protocol is ProtocolVersion.V1 or kind is MessageType.HELLO:
        return f"{kind.value}_request"
    return f"{kind.value}_request_2"


def describe(error: ValidationError) -> str:
    """``"observation/hand/0: 'XX' does not match ..."``: where, then what."""
    where = "/".join(str(part) for part in error.absolute_path) or "(top level)"
    text = f"{where}: {error.message}"
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."
