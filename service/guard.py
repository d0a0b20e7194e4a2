"""What a request must be before any view sees it: a state-changing API call sends JSON (so no
cross-site form can make one), and a JSON body stays within limits the views can take.

>>> check_json(b'{"seed": "x", "seat": 2}')
>>> check_json(b"[" * 40 + b"]" * 40)
Traceback (most recent call last):
...
service.guard.BodyError: the JSON is nested 40 deep; at most 32 levels are accepted
>>> check_json(b'{"seat": ' + b"9" * 50 + b"}")
Traceback (most recent call last):
...
service.guard.BodyError: a number of 50 digits; numbers are at most 30 digits long
>>> check_json(b'{"seed": "\\\\ud800"}')
Traceback (most recent call last):
...
service.guard.BodyError: a string holds a lone surrogate (\\ud800): send valid Unicode text
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any, Final, NoReturn

from flask import request

from service.smorest import abort

MAX_DEPTH: Final = 32
"""The deepest nesting of arrays and objects accepted (the API's own bodies need 3)."""
MAX_DIGITS: Final = 30
"""The longest number accepted (the API's numbers are far shorter)."""
WRITES: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})
JSON_TYPE: Final = "application/json"


class BodyError(ValueError):
    """A JSON body beyond the limits; the message says which."""


def check_json(body: bytes) -> None:
    """Raise :class:`BodyError` if ``body`` is JSON nested too deep, with a number too long or
    a string that is not valid Unicode (malformed JSON is left to the views' parser)."""
    depth = _depth(body)
    if depth > MAX_DEPTH:
        raise BodyError(f"the JSON is nested {depth} deep; at most {MAX_DEPTH} levels are accepted")
    try:
        value = json.loads(
            body, parse_int=_number, parse_float=_number, parse_constant=_no_constant
        )
    except (ValueError, RecursionError) as error:
        if isinstance(error, BodyError):
            raise
        return  # not JSON at all: the views answer that
    for text in json_strings(value):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:
            lone = text[error.start]
            raise BodyError(
                f"a string holds a lone surrogate (\\u{ord(lone):04x}): send valid Unicode text"
            ) from None


def _depth(body: bytes) -> int:
    """The deepest nesting of ``[`` and ``{`` outside strings, in one pass."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return deepest


def _number(text: str) -> float | int:
    digits = sum(c.isdigit() for c in text)
    if digits > MAX_DIGITS:
        raise BodyError(
            f"a number of {digits} digits; numbers are at most {MAX_DIGITS} digits long"
        )
    if not any(c in text for c in ".eE"):
        return int(text)
    number = float(text)
    if not math.isfinite(number):
        raise BodyError(f"{text} is too large for a JSON number here")
    return number


def _no_constant(name: str) -> NoReturn:
    raise BodyError(f"{name} is not a JSON number: send a number or null")


def json_strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value, keys included, without recursion."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def check_request() -> None:
    """Before every request: a state-changing API call carries JSON or nothing, and its JSON
    is within the limits."""
    if request.method not in WRITES or not request.path.startswith("/api/"):
        return
    has_body = bool(request.content_length) or "chunked" in request.headers.get(
        "Transfer-Encoding", ""
    )
    sent_type = request.headers.get("Content-Type")
    if (sent_type is not None or has_body) and request.mimetype != JSON_TYPE:
        abort(
            415,
            message=f"send the request body as JSON with Content-Type: {JSON_TYPE} "
            f"(this request says {sent_type or 'nothing'})",
        )
    if has_body:
        try:
            check_json(request.get_data(cache=True))
        except BodyError as error:
            abort(400, message=f"the request body is refused: {error}")
