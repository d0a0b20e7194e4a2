"""Every kind of refusal a use case raises is answered with its status, in the one error shape,
from the one map (``service.errors.REFUSALS``)."""

from __future__ import annotations

import pytest
from flask import Flask

from arena import endpoints, errors, human
from service.errors import register, status_of


def _kinds(kind: type[errors.ArenaError]) -> list[type[errors.ArenaError]]:
    """``kind`` and every kind the arena derives from it."""
    found = [kind] + [k for sub in kind.__subclasses__() for k in _kinds(sub)]
    return [k for k in found if k.__module__.startswith("arena.")]


EXPECTED = {
    errors.ArenaError: 409,
    errors.NotAllowedError: 403,
    errors.NotFoundError: 404,
    errors.NameTakenError: 409,
    errors.WrongStateError: 409,
    errors.EmbargoedError: 409,
    errors.AlreadyDisputedError: 409,
    errors.StaleVersionError: 409,
    errors.TooManyError: 429,
    errors.InvalidError: 422,
    endpoints.EndpointError: 422,
    human.NotYourTurnError: 409,
}


def test_every_kind_of_refusal_has_its_status() -> None:
    assert {k: status_of(k) for k in _kinds(errors.ArenaError)} == EXPECTED


@pytest.mark.parametrize("kind", [k for k in EXPECTED if k.__module__ == "arena.errors"])
def test_a_refusal_is_answered_in_the_error_shape(kind: type[errors.ArenaError]) -> None:
    app = Flask(__name__)
    register(app)

    class Later(kind):  # type: ignore[valid-type,misc]
        """A kind the map does not name: the status of the kind it derives from."""

    @app.route("/one")
    def one() -> str:
        raise kind("no such thing", field="thing")

    @app.route("/many")
    def many() -> str:
        raise Later("two problems", errors={"a": ["first"], "b": ["second"]})

    client = app.test_client()
    answer = client.get("/one")
    assert answer.status_code == EXPECTED[kind]
    assert answer.json == {
        "status": EXPECTED[kind],
        "error": kind.code or answer.json["error"],
        "message": "thing: no such thing",
        "errors": {"thing": ["no such thing"]},
    }
    answer = client.get("/many")
    assert answer.status_code == EXPECTED[kind]
    assert answer.json is not None
    assert answer.json["message"] == "two problems"
    assert answer.json["errors"] == {"a": ["first"], "b": ["second"]}
