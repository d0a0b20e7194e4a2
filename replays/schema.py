"""The JSON Schema of the match log, shipped with the package (``replays/schemas/``).

Each log format keeps its own schema file forever (``replay-1.json`` for
``gongzhu-replay/1``), so an old stored log is validated against the schema it was written
under, before :func:`replays.upgrade.read_log` turns it into today's form. The schema checks the
shape of a log (fields, types, card names, four seats, 13 tricks); :func:`replays.verify.verify`
checks that its content is what the rules give.

>>> validate({"format": "gongzhu-replay/6", "match_id": "m1"})
Traceback (most recent call last):
...
replays.schema.InvalidLogError: (top level): 'tournament_id' is a required property
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any

import jsonschema_rs

from replays.log import FORMAT

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

SCHEMAS: Mapping[str, str] = {
    "gongzhu-replay/1": "replay-1.json",
    "gongzhu-replay/2": "replay-2.json",
    "gongzhu-replay/3": "replay-3.json",
    "gongzhu-replay/4": "replay-4.json",
    "gongzhu-replay/5": "replay-5.json",
    "gongzhu-replay/6": "replay-6.json",
}
"""The schema file of each log format."""
_MAX_MESSAGE = 300


class InvalidLogError(ValueError):
    """A log its schema refuses; the text says where (a JSON path) and what is wrong."""


@cache
def load(log_format: str = FORMAT) -> dict[str, Any]:
    """The schema of ``log_format`` as a JSON object."""
    name = SCHEMAS.get(log_format)
    if name is None:
        raise InvalidLogError(f"no schema for log format {log_format!r}; known: {_known()}")
    schema: dict[str, Any] = json.loads(files("replays.schemas").joinpath(name).read_text("utf-8"))
    return schema


@cache
def _validator(log_format: str) -> Draft202012Validator:
    """A validator of the schema with every ``$ref`` replaced by its target: jsonschema resolves
    references on each use, and a log has thousands of them (the schema has no recursion)."""
    # jsonschema is imported only to say why a log is invalid: it takes longer to import than
    # python -m replays verify takes to check a log
    from jsonschema import Draft202012Validator  # noqa: PLC0415

    schema = load(log_format)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(_inline(schema, schema["$defs"]))


def _inline(node: Any, defs: Mapping[str, Any]) -> Any:
    if isinstance(node, list):
        return [_inline(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    inlined = {key: _inline(value, defs) for key, value in node.items() if key != "$defs"}
    ref = inlined.pop("$ref", None)
    if ref is None:
        return inlined
    target = _inline(defs[ref.removeprefix("#/$defs/")], defs)
    return {"allOf": [target], **inlined} if inlined else target


def validate(data: Any) -> None:
    """Raise :class:`InvalidLogError` unless ``data`` matches the schema of its ``format``."""
    if not isinstance(data, dict):
        raise InvalidLogError(f"a match log is a JSON object, not {type(data).__name__}")
    log_format = data.get("format")
    if log_format not in SCHEMAS:
        raise InvalidLogError(f"unknown log format {log_format!r}; known: {_known()}")
    if _accepts(log_format).is_valid(data):
        return
    from jsonschema.exceptions import best_match  # noqa: PLC0415 - as in _validator

    error = best_match(_validator(log_format).iter_errors(data))
    if error is not None:
        raise InvalidLogError(_describe(error))


@cache
def _accepts(log_format: str) -> jsonschema_rs.Draft202012Validator:
    """The schema compiled by jsonschema-rs: whether a log is valid, about 150 times as fast as
    jsonschema, which is asked only why a log is not (for its error, the one reported). Where
    the two could differ, jsonschema-rs is the stricter (``$`` in a pattern matches only at the
    very end, not also before a last newline), so a log either refuses goes to jsonschema."""
    return jsonschema_rs.Draft202012Validator(load(log_format))


def _describe(error: ValidationError) -> str:
    """``"hands/0/deal/2/5: 'XX' does not match ..."``: where, then what."""
    where = "/".join(str(part) for part in error.absolute_path) or "(top level)"
    text = f"{where}: {error.message}"
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."


def _known() -> str:
    return ", ".join(SCHEMAS)
