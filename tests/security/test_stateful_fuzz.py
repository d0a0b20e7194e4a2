"""Stateful API fuzzing with hostile values: schemathesis chains the operations by the links it
infers from the served OpenAPI document (a bot registered, then read, changed, paused, its
secret rotated; a tournament created, started, cancelled; its matches, replays and
verifications), and sends them to the app in-process. Request bodies are generated both as the
schema allows and as it does not (negative mode), and their strings are often replaced by long
ones (up to 20,000 characters) drawn from all of Unicode: NUL, lone surrogates, right-to-left
marks, astral planes.

Every answer must be no 5xx, never HTML, JSON in the one error shape when it is an error, and
what the operation documents. Derandomized: the same sequences on every run.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from flask import Flask
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
)

from arena.store import Store
from tests.security.conftest import OPERATOR
from tests.security.test_fuzz import (
    ANYWHERE,
    assert_status_allowed,
    documented_statuses,
    security_schemes,
    served_document,
)

CHECKS = [not_a_server_error, content_type_conformance, response_schema_conformance]
ANY_CHARACTER = st.characters(exclude_categories=())
HOSTILE_TEXT = st.one_of(
    st.text(ANY_CHARACTER, min_size=1, max_size=64),
    st.text(ANY_CHARACTER, min_size=1000, max_size=20_000),
    st.sampled_from(["\x00", "\ud800", "\udfff", "\u202e", "\U0001f437" * 5000, "é" * 16_384]),
)
"""Short and long strings of any code point, surrogates included, and a few chosen ones: NUL,
both halves of a surrogate pair alone, a right-to-left override, 5,000 pigs (astral plane),
32 KiB of UTF-8 in 16,384 characters."""

# A pull bot's stream is a connection held open (its bot reads requests from it for as long as
# it is connected): an in-process call reads its answer to the end, so it would wait forever.
# The pull tests (tests/workers) cover the stream; the chains leave it out.
schema = schemathesis.openapi.from_dict(served_document()).exclude(path_regex=r"/stream$")
schema.config.generation.update(modes=list(GenerationMode), allow_x00=True, codec="utf-8")


def _hostile(value: Any) -> SearchStrategy[Any]:
    """``value`` with each of its strings kept or replaced by a hostile one."""
    if isinstance(value, str):
        return st.one_of(st.just(value), HOSTILE_TEXT)
    if isinstance(value, dict):
        return st.fixed_dictionaries({key: _hostile(item) for key, item in value.items()})
    if isinstance(value, list):
        return st.tuples(*map(_hostile, value)).map(list)
    return st.just(value)


@schema.hook
def flatmap_body(context: Any, body: Any) -> SearchStrategy[Any]:
    """One body in four made hostile: the others let the chain go on (a bot registered, a
    tournament created) to the operations that need them."""
    made_hostile = st.sampled_from([False, False, False, True])
    return made_hostile.flatmap(lambda hostile: _hostile(body) if hostile else st.just(body))


def _chosen(body: dict[str, Any]) -> bool:
    """Half the bodies, the same half on every run (Python's own hash of a string is not)."""
    return zlib.crc32(repr(sorted(body, key=repr)).encode()) % 2 == 0


def _json_not_html(response: Any, case: Any) -> None:
    """Every answer of the API is JSON (the replay key is PEM), an error in the one shape."""
    kind = next((v[0] for k, v in response.headers.items() if k.lower() == "content-type"), "")
    assert "html" not in kind.lower(), f"{case.operation.label} answered HTML"
    if response.status_code >= 400:
        assert kind.startswith("application/json"), f"{case.operation.label} answered {kind}"
        body = response.json()
        assert isinstance(body, dict) and isinstance(body.get("error"), str), body
        assert isinstance(body.get("message"), str) and body["message"], body


def _documented(response: Any, case: Any) -> None:
    assert_status_allowed(case, response, documented_statuses(case) | ANYWHERE | {429})


@pytest.fixture
def workflow(app: Flask, store: Store, offline: None, problems: list[str]) -> Iterator[type[Any]]:
    """The state machine, calling ``app`` as the operator on operator operations and as the
    bot's owner on owner operations: the owner of the bot the path names when the run
    registered it, else of a bot registered at the start. Each run starts from an empty
    arena, so that the same draws meet the same answers."""
    owners: dict[str, str] = {}
    first: list[str] = []

    class Workflow(schema.as_state_machine()):  # type: ignore[misc]
        def setup(self) -> None:
            store.redis.flushdb()
            owners.clear()
            bot, token = store.create_bot(
                name="owned", endpoint="https://bot.example/play", description="",
                contact="o@x.org", version="1", secret="s3cret",
            )  # fmt: skip
            owners[bot.id] = token
            first[:] = [token]

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            schemes = security_schemes(case)
            headers = {}
            if "operator" in schemes:
                headers["Authorization"] = f"Bearer {OPERATOR}"
            if "owner" in schemes:
                owner = owners.get((case.path_parameters or {}).get("bot_id"), first[0])
                headers["Authorization"] = f"Bearer {owner}"
            return {"app": app, "headers": headers}

        def before_call(self, case: Any) -> None:
            """Half the registrations get an endpoint that is a URL and half the tournaments
            bots that exist, so that the chain gets past them."""
            body = case.body
            if not isinstance(body, dict) or not _chosen(body):
                return
            if case.operation.label == "POST /api/bots" and isinstance(body.get("endpoint"), str):
                body["endpoint"] = f"https://bot{len(owners)}.example/play"
            participants = body.get("participants")
            if case.operation.label == "POST /api/tournaments" and isinstance(participants, list):
                known = sorted(owners)
                body["participants"] = [known[n % len(known)] for n in range(len(participants))]

        def after_call(self, response: Any, case: Any) -> None:
            if response.status_code == 201 and case.operation.label == "POST /api/bots":
                created = response.json()
                owners[created["bot"]["id"]] = created["token"]

        def validate_response(self, response: Any, case: Any, **kwargs: Any) -> None:
            """Collect what fails rather than raise: the test then reports every operation
            that failed (a raised failure would be replayed, and the replay, on an arena with
            new random ids, would not draw the same chain)."""
            try:
                _json_not_html(response, case)
                _documented(response, case)
                case.validate_response(response, checks=CHECKS, transport_kwargs=kwargs)
            except Exception as failure:  # an AssertionError, or schemathesis's FailureGroup
                problems.append(
                    f"{case.operation.label} -> {response.status_code}: {failure}"[:400]
                )

    yield Workflow


@pytest.fixture
def problems() -> list[str]:
    """Every answer that failed a check, as the state machine met it."""
    return []


def test_chained_operations_with_hostile_values_answer_as_documented(
    workflow: type[Any], problems: list[str]
) -> None:
    workflow.run(
        settings=settings(
            max_examples=100,
            stateful_step_count=10,
            derandomize=True,
            phases=[Phase.explicit, Phase.generate],  # failures are collected: no shrinking
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
    )
    assert not problems, f"{len(problems)} answers failed:\n" + "\n".join(problems[:10])
