"""The API's one error shape, for every error the service returns::

    {"status": 404, "error": "not_found", "message": "…", "errors": {"field": ["…"]}}

``errors`` is present for validation errors only. Never an HTML page, never a stack trace.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final

from flask import Flask, Response, jsonify, request
from marshmallow import Schema, fields
from werkzeug.exceptions import HTTPException

from arena.errors import (
    UNAVAILABLE,
    ArchiveError,
    ArenaError,
    InvalidError,
    NameTakenError,
    NotAllowedError,
    NotFoundError,
    StaleVersionError,
    TooManyError,
    WrongStateError,
)

logger = logging.getLogger(__name__)

SLUGS = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_large",
    415: "unsupported_media_type",
    422: "invalid",
    429: "rate_limited",
    431: "headers_too_large",
    500: "internal",
    501: "not_implemented",
    503: "unavailable",
}


class ErrorSchema(Schema):
    """The error shape, for the OpenAPI document."""

    status = fields.Integer(required=True, metadata={"description": "the HTTP status"})
    error = fields.String(required=True, metadata={"description": "a stable machine name"})
    message = fields.String(required=True, metadata={"description": "what to do about it"})
    errors = fields.Dict(
        keys=fields.String(),
        values=fields.List(fields.String()),
        metadata={"description": "validation messages per field"},
    )


def error_response(
    status: int,
    message: str,
    *,
    errors: Mapping[str, Sequence[str]] | None = None,
    error: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """The error shape: ``error`` defaults to the status's own name; ``errors`` is left out
    when there are none."""
    body: dict[str, Any] = {
        "status": status,
        "error": error or SLUGS.get(status, "error"),
        "message": message,
    }
    if errors:
        body["errors"] = {field: list(messages) for field, messages in errors.items()}
    response = jsonify(body)
    response.status_code = status
    response.headers.update(headers or {})
    return response


REFUSALS: Final[Mapping[type[ArenaError], int]] = {
    NotAllowedError: 403,
    NotFoundError: 404,
    NameTakenError: 409,
    WrongStateError: 409,
    StaleVersionError: 409,
    TooManyError: 429,
    InvalidError: 422,
    ArenaError: 409,
}
"""The status of each kind of refusal of the arena's use cases: the one place they are mapped.
A kind not named has the status of the nearest kind it derives from."""


def status_of(kind: type[ArenaError]) -> int:
    """The status a refusal of ``kind`` is answered with."""
    return next(REFUSALS[k] for k in kind.__mro__ if k in REFUSALS)


def refused(exc: ArenaError) -> Response:
    """A use case's refusal in the error shape, with the status of its kind; a refusal of one
    field names it in the message and in ``errors``."""
    status = status_of(type(exc))
    if exc.field is not None and not exc.errors:
        message, errors = f"{exc.field}: {exc.message}", {exc.field: [exc.message]}
        return error_response(status, message, errors=errors, error=exc.code)
    return error_response(status, exc.message, errors=exc.errors, error=exc.code)


def handle_http_exception(exc: HTTPException) -> Response:
    """The error shape for a werkzeug exception: flask-smorest's ``abort`` (what it was given
    is in ``exc.data``), a webargs validation failure (its messages are in ``exc.data``), a
    404 route, a 405, a 413, a 429."""
    status = exc.code or 500
    data = getattr(exc, "data", None) or {}
    headers = {name: value for name, value in exc.get_headers() if name.lower() != "content-type"}
    headers.update(data.get("headers") or {})
    if "messages" in data:
        errors = _flatten(data["messages"])
        names = ", ".join(sorted(errors))
        if status == 400:
            message = "the request body is not valid JSON: send a JSON object"
        else:
            message = f"the request has invalid fields: {names}; see errors for each"
        return error_response(status, message, errors=errors, headers=headers)
    if "message" in data:
        message = data["message"]
    else:
        message = _fill(_MESSAGES.get(status) or exc.description or exc.name)
    return error_response(
        status, message, errors=data.get("errors"), error=data.get("error"), headers=headers
    )


_MESSAGES = {
    404: "there is nothing at {method} {path}: see /api/docs for the API's paths",
    405: "{method} is not allowed on {path}: see /api/docs for the methods it takes",
    413: "the request body is too large: API requests are small JSON objects",
    415: "send the request body as JSON with Content-Type: application/json",
}


def _fill(message: str) -> str:
    return message.replace("{method}", request.method).replace("{path}", request.path)


def _flatten(messages: Mapping[str, Any]) -> dict[str, list[str]]:
    """webargs' ``{location: {field: [msg]}}`` as ``{field: [msg]}`` (nested fields dotted)."""
    flat: dict[str, list[str]] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping):
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            flat.setdefault(prefix or "_request", []).extend(value)
        else:
            flat.setdefault(prefix or "_request", []).append(str(value))

    for location_errors in messages.values():
        walk("", location_errors)
    return flat


RETRY_AFTER_S = 5
"""What a ``503`` asks clients to wait: about the time a restarted Redis takes to answer."""


def unavailable(exc: Exception) -> Response:
    """Redis is down or restarting (loading its data), or the archive cannot return a log
    (``ArchiveError``: unreachable, or the blob missing or damaged, never served): a ``503``,
    which a client may retry, not a ``500``."""
    if isinstance(exc, ArchiveError):
        logger.error("archive failed on %s %s: %s", request.method, request.path, exc)
        message = (
            "the arena cannot read this match's log from its archive just now (the operator "
            "is told): try again later"
        )
    else:
        logger.warning("Redis unreachable on %s %s: %s", request.method, request.path, exc)
        message = "the arena's database is unreachable: try again in a few seconds"
    return error_response(503, message, headers={"Retry-After": str(RETRY_AFTER_S)})


def register(app: Flask) -> None:
    """Install the handlers; call after flask-smorest's ``Api`` so they take precedence."""
    app.register_error_handler(HTTPException, handle_http_exception)
    app.register_error_handler(ArenaError, refused)
    for kind in UNAVAILABLE:
        app.register_error_handler(kind, unavailable)

    @app.errorhandler(Exception)
    def unexpected(exc: Exception) -> Response:
        logger.exception("unhandled error on %s %s", request.method, request.path)
        return error_response(
            500, "the arena failed to handle this request; it was logged: try again"
        )
