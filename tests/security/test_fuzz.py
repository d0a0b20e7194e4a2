"""API fuzzing: schemathesis generates requests for every operation of the served OpenAPI
document and sends them to the app in-process (WSGI, no network), with the operator's token on
operator endpoints and a bot owner's token (and that bot's id) on owner endpoints.

Every answer must be no 5xx, carry a status code the operation documents explicitly (or one the
framework answers anywhere: :data:`ANYWHERE`), the documented content type and headers, and a body
matching the documented schema. :data:`EXAMPLES` per operation, derandomized: the same requests
on every run.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from cryptography.fernet import Fernet
from flask import Flask
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from arena.store import Store
from service import Config, create_app
from tests.security.conftest import OPERATOR

EXAMPLES = 25
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
ANYWHERE = {400, 405, 413, 415}
"""Answered before any view runs (a body that is not JSON, a method the path does not have, a
body over 64 KiB, a body that is not ``application/json``): the error shape, documented once in
docs/API.md and by every operation's ``default`` response."""


def served_document() -> dict[str, Any]:
    """The OpenAPI document exactly as the app serves it (no Redis needed to serve it)."""
    config = Config(redis_url="redis://127.0.0.1:1/0", secret_key=Fernet.generate_key().decode())
    document: dict[str, Any] = create_app(config).test_client().get("/api/openapi.json").json
    return document


schema = schemathesis.openapi.from_dict(served_document())


def security_schemes(case: Any) -> set[str]:
    """The security schemes the case's operation names (``operator``, ``owner``)."""
    operation = case.operation.definition.raw
    return {name for requirement in operation.get("security", []) for name in requirement}


def documented_statuses(case: Any) -> set[int]:
    """The status codes the case's operation documents explicitly."""
    return {int(code) for code in case.operation.definition.raw["responses"] if code.isdigit()}


def assert_status_allowed(case: Any, response: Any, allowed: set[int]) -> None:
    assert response.status_code in allowed, (
        f"{case.operation.label} answered {response.status_code}, which it does not document "
        f"(allowed: {sorted(allowed)}): {response.text[:300]}"
    )


@pytest.fixture
def owner(store: Store) -> tuple[str, str]:
    """A registered bot's id and its owner's token."""
    bot, token = store.create_bot(
        name="owned", endpoint="https://bot.example/play", description="", contact="o@x.org",
        version="1", secret="s3cret",
    )  # fmt: skip
    return bot.id, token


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_answers_as_documented(
    case: Any, app: Flask, owner: tuple[str, str], offline: None
) -> None:
    headers = {}
    schemes = security_schemes(case)
    if "operator" in schemes:
        headers["Authorization"] = f"Bearer {OPERATOR}"
    if "owner" in schemes:
        bot_id, token = owner
        headers["Authorization"] = f"Bearer {token}"
        case.path_parameters["bot_id"] = bot_id
    response = case.call_and_validate(checks=CHECKS, headers=headers, app=app)
    documented = documented_statuses(case)
    if case.method.upper() != case.operation.method.upper():  # a probe with another method
        documented = {200} if case.method.upper() == "OPTIONS" else set()
    assert_status_allowed(case, response, documented | ANYWHERE)
