"""Hostile input at the edge: bodies beyond the limits, cross-site forms, and the security
headers on every kind of answer. Each gets the one JSON error shape, never a 500."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from arena.store import Store
from tests.service.service_support import operator, register

PLAY = {"opponents": ["house:easy"] * 3, "rules": {"fixed_hands": 1}}
HOSTILE_BODIES = {
    "nested 5,000 deep": b'{"opponents": ' + b"[" * 5000 + b"]" * 5000 + b"}",
    "nested 33 deep": b'{"rules": ' + b"[" * 33 + b"]" * 33 + b"}",
    "a 5,000-digit number": b'{"seat": ' + b"7" * 5000 + b"}",
    "a float beyond the doubles": b'{"seat": 1e999}',
    "NaN": b'{"seat": NaN}',
    "a lone surrogate": b'{"opponents": ["house:easy", "house:easy", "house:easy"], '
    b'"seed": "\\ud800"}',
    "a lone surrogate as a key": b'{"\\udfff": 1}',
}


@pytest.mark.parametrize("body", list(HOSTILE_BODIES.values()), ids=list(HOSTILE_BODIES))
@pytest.mark.parametrize("path", ["/api/play", "/api/bots", "/api/tournaments"])
def test_a_body_beyond_the_limits_is_a_400_in_the_error_shape(
    client: FlaskClient, path: str, body: bytes
) -> None:
    response = client.post(path, data=body, content_type="application/json", headers=operator())
    assert response.status_code == 400, response.get_data(as_text=True)[:300]
    error = response.json
    assert error["status"] == 400 and error["error"] == "bad_request"
    assert error["message"].startswith("the request body is refused: ")


def test_the_limits_leave_ordinary_bodies_alone(client: FlaskClient) -> None:
    body = {**PLAY, "seed": "草花10 ♣ ünïcode", "seat": 2}
    assert client.post("/api/play", json=body).status_code == 201


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]
)
def test_a_cross_site_form_cannot_start_a_game_or_register(
    client: FlaskClient, store: Store, content_type: str
) -> None:
    """What a form on another site can send without a preflight: refused, nothing created."""
    body = b'{"opponents": ["house:easy", "house:easy", "house:easy"]}'
    for path in ("/api/play", "/api/bots"):
        response = client.post(path, data=body, content_type=content_type)
        assert response.status_code == 415, (path, response.json)
        assert response.json["error"] == "unsupported_media_type"
        assert "Content-Type: application/json" in response.json["message"]
    assert list(store.redis.scan_iter("gz:play:*")) == []
    assert store.list_bots(page=1, per_page=10).total == 0


def test_a_body_without_a_content_type_is_refused_and_no_body_needs_none(
    client: FlaskClient, bot_url: str
) -> None:
    refused = client.post("/api/play", data=b'{"opponents": []}', content_type="")
    assert refused.status_code == 415
    assert refused.json["message"].endswith("(this request says nothing)")
    typed = client.post("/api/play", content_type="text/plain")  # no body, but not JSON
    assert typed.status_code == 415
    assert typed.json["message"].endswith("(this request says text/plain)")
    # only state-changing API calls are checked: a read, or a page, may say what it likes
    read = client.get("/api/ladder", data=b"x", content_type="text/plain")
    assert read.status_code == 200
    page = client.post("/nope", data=b"x", content_type="text/plain")
    assert page.status_code == 404
    bot_id = register(client, bot_url)["bot"]["id"]
    made = client.post(
        "/api/tournaments", json={"name": "c", "participants": [bot_id]}, headers=operator()
    )
    started = client.post(f"/api/tournaments/{made.json['id']}/start", headers=operator())
    assert started.status_code == 202  # a POST without a body is not a form


@pytest.mark.parametrize(
    "path", ["/", "/api/ladder", "/api/matches/nope", "/nope", "/play", "/assets/pages.css"]
)
def test_every_answer_carries_the_security_headers(client: FlaskClient, path: str) -> None:
    response = client.get(path)
    headers = response.headers
    policy = headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in policy and "script-src 'self'" in policy
    assert "'unsafe-inline'" not in policy
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["X-Frame-Options"] == "DENY"
    assert headers["Referrer-Policy"] == "same-origin"


def test_only_the_api_docs_page_may_run_its_inline_start_up_script(client: FlaskClient) -> None:
    docs = client.get("/api/docs")
    assert docs.status_code == 200 and b"<script>" in docs.data
    policy = docs.headers["Content-Security-Policy"]
    assert "script-src 'self' 'unsafe-inline'" in policy and "frame-ancestors 'none'" in policy
