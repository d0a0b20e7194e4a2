"""flask-smorest, typed: the parts of it the service uses, with their signatures, so that
``mypy --strict`` checks every route. flask-smorest publishes no types (pyproject.toml says why
its third-party stubs are not used); each decorator here keeps the signature of the view it
decorates, as flask-smorest's do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NoReturn, Protocol, TypeVar

import flask_smorest
from marshmallow import Schema

F = TypeVar("F", bound=Callable[..., Any])
SchemaArg = Schema | type[Schema]


class Blueprint(flask_smorest.Blueprint):  # type: ignore[misc]  # an untyped base
    """flask-smorest's Blueprint with typed decorators."""

    def route(self, rule: str, **options: Any) -> Callable[[F], F]:
        decorate: Callable[[F], F] = super().route(rule, **options)
        return decorate

    def arguments(self, schema: SchemaArg, *, location: str = "json") -> Callable[[F], F]:
        decorate: Callable[[F], F] = super().arguments(schema, location=location)
        return decorate

    def response(
        self, status_code: int, schema: SchemaArg | None = None, *, description: str | None = None
    ) -> Callable[[F], F]:
        decorate: Callable[[F], F] = super().response(status_code, schema, description=description)
        return decorate

    def alt_response(
        self, status_code: int, *, schema: SchemaArg, description: str
    ) -> Callable[[F], F]:
        decorate: Callable[[F], F] = super().alt_response(
            status_code, schema=schema, description=description
        )
        return decorate

    @staticmethod
    def doc(**kwargs: Any) -> Callable[[F], F]:
        decorate: Callable[[F], F] = flask_smorest.Blueprint.doc(**kwargs)
        return decorate


class Api(flask_smorest.Api):  # type: ignore[misc]  # an untyped base
    """flask-smorest's Api, registering typed blueprints."""

    def register_blueprint(self, blp: Blueprint) -> None:
        super().register_blueprint(blp)


class Abort(Protocol):
    def __call__(
        self,
        http_status_code: int,
        *,
        message: str,
        errors: Mapping[str, Sequence[str]] = ...,
        error: str = ...,
        headers: Mapping[str, str] = ...,
    ) -> NoReturn: ...


abort: Abort = flask_smorest.abort
"""flask-smorest's ``abort``: an error in the API's shape (service/errors.py). ``message`` says
what to do; ``errors``, messages by field; ``error``, the machine name when it is not the
status's own (``embargoed``); ``headers``, added to the answer."""
