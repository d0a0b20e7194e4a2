"""Auth: tokens stored only hashed and secrets only encrypted; tokens compared in constant time;
every owner-only and operator-only endpoint, read from the served OpenAPI document (so a new one
cannot be forgotten), refuses everyone else with the one error shape; bots can verify the arena's
signature, and a rotated-out secret only within its grace period."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import re
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from arena.store import Store
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.server import make_app
from bot_sdk.signing import SignatureError, sign, verify
from service import Config, create_app
from service.auth import is_operator, sent_token
from tests.bot_sdk.bot_sdk_support import running
from tests.security.conftest import OPERATOR
from tests.service.service_support import bearer

PUBLIC_WRITES = {
    "POST /api/bots": "registration: anyone may register a bot (rate-limited)",
    "POST /api/matches/{match_id}/verify": "re-checks a stored log, changes nothing",
    "POST /api/play": "starts a human game; the game's random id is its capability",
    "POST /api/play/{game_id}/move": "the game's random id is its capability",
    "POST /api/play/{game_id}/next-hand": "the game's random id is its capability",
    "POST /api/play/{game_id}/difficulty": "the game's random id is its capability",
}
"""The only operations that change something without a token, each with the reason."""
ERROR_KEYS = {"status", "error", "message"}


def _document(client: FlaskClient) -> dict[str, Any]:
    document: dict[str, Any] = client.get("/api/openapi.json").json
    return document


def _operations(client: FlaskClient) -> list[tuple[str, str, set[str]]]:
    """Every operation of the served document: method, path, security schemes."""
    found = []
    for path, item in _document(client)["paths"].items():
        for method, operation in item.items():
            if method in {"get", "post", "put", "patch", "delete"}:
                schemes = {name for r in operation.get("security", []) for name in r}
                found.append((method.upper(), path, schemes))
    return found


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def bots(store: Store) -> dict[str, tuple[str, str]]:
    """Two bots: name -> (id, owner token)."""
    made = {}
    for name in ("mine", "theirs"):
        bot, token = store.create_bot(
            name=name, endpoint="https://bot.example/", description="", contact="a@x.org",
            version="1", secret=f"secret-of-{name}",
        )  # fmt: skip
        made[name] = (bot.id, token)
    return made


WEBSOCKET = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13"}
"""What a WebSocket client sends: the only requests the WebSocket route answers."""


def _call(client: FlaskClient, method: str, path: str, token: str | None) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    if path.endswith("/ws"):
        headers.update(WEBSOCKET)
    return client.open(path, method=method, headers=headers, json={})


def _refusal(response: Any, status: int) -> None:
    assert response.status_code == status, (response.status_code, response.json)
    body = response.json
    assert ERROR_KEYS <= set(body) <= ERROR_KEYS | {"errors"}
    assert body["status"] == status
    assert body["error"] == {401: "unauthorized", 403: "forbidden"}[status]
    if status == 401:
        assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_every_write_is_guarded_or_listed_as_public(client: FlaskClient, app: Flask) -> None:
    """From the URL map: every /api route that changes something is in the document, and is
    either token-guarded or one of :data:`PUBLIC_WRITES`."""
    documented = {f"{m} {p}": s for m, p, s in _operations(client)}
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/"):
            continue
        path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule)
        for method in sorted((rule.methods or set()) - {"GET", "HEAD", "OPTIONS"}):
            key = f"{method} {path}"
            assert key in documented, f"{key} is served but not in the OpenAPI document"
            assert documented[key] or key in PUBLIC_WRITES, f"{key} changes data without a token"
    assert set(PUBLIC_WRITES) <= set(documented), "a public write listed here no longer exists"
    for key, schemes in documented.items():
        assert schemes <= {"owner", "operator"}, f"{key}: unknown security scheme {schemes}"
        assert not (schemes and key in PUBLIC_WRITES)


def test_owner_endpoints_refuse_everyone_but_the_owner(
    client: FlaskClient, bots: dict[str, tuple[str, str]]
) -> None:
    (mine, my_token), (their_bot, theirs) = bots["mine"], bots["theirs"]
    # a bot's own endpoints (those any owner or the operator may call check whose bots they
    # name themselves: tests/service/test_gauntlets_api.py)
    owner_ops = [(m, p) for m, p, s in _operations(client) if s == {"owner"}]
    assert len(owner_ops) >= 6  # read, change, rotate, pause, resume, retire
    for method, template in owner_ops:
        path = template.replace("{bot_id}", mine)
        _refusal(_call(client, method, path, None), 401)
        _refusal(_call(client, method, path, "gzt_not-a-token"), 401)
        _refusal(_call(client, method, path, "x" * 5000), 401)
        _refusal(_call(client, method, path, OPERATOR), 401)  # the operator owns no bot
        _refusal(_call(client, method, path, theirs), 403)
        # and the other way round (whichever of the two ids sorts first)
        _refusal(_call(client, method, template.replace("{bot_id}", their_bot), my_token), 403)
        upgrade = WEBSOCKET if path.endswith("/ws") else {}
        for header in ("Basic dXNlcjpwYXNz", "Bearer", "Bearer    ", "bearer\t"):
            headers = {"Authorization": header, **upgrade}
            _refusal(client.open(path, method=method, headers=headers), 401)


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer abc", "abc"),
        ("bearer  abc ", "abc"),
        ("BEARER abc", "abc"),
        ("Basic abc", None),  # a scheme sorting before bearer
        ("Token abc", None),  # and one after
        ("Bearer    ", None),
        ("Bearerabc", None),
        ("", None),
    ],
)
def test_only_a_bearer_token_is_a_token(app: Flask, header: str, token: str | None) -> None:
    with app.test_request_context(headers={"Authorization": header} if header else {}):
        assert sent_token() == token


def test_only_the_operators_token_makes_the_operator(config: Config) -> None:
    app = create_app(config)
    for header, expected in ((None, False), ("x", False), (OPERATOR, True)):
        headers = {"Authorization": f"Bearer {header}"} if header else {}
        with app.test_request_context(headers=headers):
            assert is_operator() is expected
    off = create_app(dataclasses.replace(config, operator_token=""))
    with off.test_request_context(headers={"Authorization": "Bearer x"}):
        assert is_operator() is False  # no operator configured: nobody is the operator


def test_guarded_operations_document_their_token_and_refusals(client: FlaskClient) -> None:
    for path, item in _document(client)["paths"].items():
        for method, operation in item.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            schemes = {name for r in operation.get("security", []) for name in r}
            if not schemes:
                continue
            assert operation.get("summary"), f"{method} {path} lost its view's docstring"
            for status in ("401", "403"):
                response = operation["responses"][status]
                assert response["description"], (method, path, status)
                schema = response["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/Error"}, (method, path, status)


def test_operator_endpoints_refuse_everyone_but_the_operator(
    client: FlaskClient, config: Config, bots: dict[str, tuple[str, str]]
) -> None:
    _, owner_token = bots["mine"]
    operator_ops = [(m, p) for m, p, s in _operations(client) if s == {"operator"}]
    assert (
        len(operator_ops) >= 6
    )  # tournaments: create, start, cancel; schedules: list, add, delete
    off = create_app(dataclasses.replace(config, operator_token="")).test_client()
    for method, template in operator_ops:
        path = re.sub(r"\{\w+\}", "x_1", template)
        _refusal(_call(client, method, path, None), 401)
        _refusal(_call(client, method, path, "not-the-operator"), 403)
        _refusal(_call(client, method, path, OPERATOR[:-1]), 403)  # a prefix is not enough
        _refusal(_call(client, method, path, owner_token), 403)
        for anyone in (None, "", OPERATOR):  # no operator token configured: all off (API.md)
            _refusal(_call(off, method, path, anyone), 403)


def test_tokens_are_stored_hashed_and_secrets_encrypted(config: Config, store: Store) -> None:
    """Register through the API and rotate the secret; then read every raw value in Redis: no
    token and no secret appears in clear, the token's SHA-256 does."""
    client = create_app(dataclasses.replace(config, allow_private_endpoints=True)).test_client()
    with running(make_app(LowestCard, None, verify_signatures=False)) as url:
        body = {"name": "stored", "endpoint": url, "contact": "me@x.org"}
        registered = client.post("/api/bots", json=body).json
    token, first = registered["token"], registered["signing_secret"]
    path = f"/api/bots/{registered['bot']['id']}/rotate-secret"
    second = client.post(path, headers={"Authorization": f"Bearer {token}"}).json
    raw = b"\n".join(_raw_values(redis.Redis.from_url(config.redis_url)))
    for clear in (token, first, second["signing_secret"]):
        assert clear.encode() not in raw
    assert hashlib.sha256(token.encode()).hexdigest().encode() in raw
    assert store.signing_secrets(registered["bot"]["id"]) == [second["signing_secret"], first]


def _raw_values(client: redis.Redis) -> list[bytes]:
    """Every key and every value, whatever its type."""
    values: list[bytes] = []
    for key in client.scan_iter():
        values.append(key)
        kind = client.type(key).decode()
        if kind == "string":
            values.append(client.get(key) or b"")
        elif kind == "hash":
            values.extend(b"%s=%s" % pair for pair in client.hgetall(key).items())
        elif kind in {"set", "zset", "list"}:
            members = {
                "set": client.smembers,
                "zset": lambda k: client.zrange(k, 0, -1),
                "list": lambda k: client.lrange(k, 0, -1),
            }[kind](key)
            values.extend(members)
        elif kind == "stream":
            values.extend(repr(entry).encode() for entry in client.xrange(key))
    return values


def test_tokens_are_compared_in_constant_time_and_owner_tokens_looked_up_by_hash(
    client: FlaskClient,
    bots: dict[str, tuple[str, str]],
    config: Config,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Watched while requests are served: every token check goes through
    ``hmac.compare_digest`` (the operator token against the configured one; an owner token's
    SHA-256 against the stored hash), and Redis is only ever asked for an owner token's hash,
    never for the token. (That ``compare_digest`` itself takes constant time is Python's
    promise; timing it here would measure the machine's noise, not the code.)"""
    compared: list[tuple[bytes | str, bytes | str]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    keys: list[str] = []
    real_get = redis.Redis.get

    def get(self: redis.Redis, name: Any) -> Any:
        keys.append(name if isinstance(name, str) else name.decode())
        return real_get(self, name)

    monkeypatch.setattr(redis.Redis, "get", get)
    wrong = "not-the-operator-token"
    assert client.post("/api/tournaments", json={}, headers=bearer(wrong)).status_code == 403
    assert (wrong.encode(), OPERATOR.encode()) in compared
    compared.clear()
    bot_id, token = bots["mine"]
    changed = client.patch(f"/api/bots/{bot_id}", json={"description": "x"}, headers=bearer(token))
    assert changed.status_code == 200
    digest = hashlib.sha256(token.encode()).hexdigest()
    assert compared and all(digest in pair for pair in compared)
    assert f"gz:token:{digest}" in keys
    assert not any(token in key for key in keys)
    compared.clear()
    forged = token[:-1] + ("A" if token[-1] != "A" else "B")
    assert client.patch(f"/api/bots/{bot_id}", json={}, headers=bearer(forged)).status_code == 401


def test_a_bot_verifies_the_arenas_signature_and_a_rotation_has_a_grace_period(
    config: Config,
) -> None:
    now = [1_767_225_600.0]
    store = Store.from_config(config, clock=lambda: now[0])
    bot, _ = store.create_bot(
        name="signed", endpoint="https://bot.example/", description="", contact="a@x.org",
        version="1", secret="old-secret",
    )  # fmt: skip
    body = b'{"protocol":"gongzhu-bot/1","type":"hello"}'

    def signed_now() -> dict[str, str]:  # what the arena's HttpSeat sends
        return sign(store.signing_secrets(bot.id), body, int(now[0]))

    verify("old-secret", signed_now(), body, now=now[0])
    with pytest.raises(SignatureError):
        verify("old-secret", signed_now(), body + b" ", now=now[0])  # tampered body
    tampered = {**signed_now(), "X-Gongzhu-Timestamp": str(int(now[0]) + 1)}
    with pytest.raises(SignatureError):
        verify("old-secret", tampered, body, now=now[0])
    with pytest.raises(SignatureError):
        verify("a-guess", signed_now(), body, now=now[0])
    store.rotate_secret(bot.id, "new-secret", grace_s=3600)
    now[0] += 3599
    verify("new-secret", signed_now(), body, now=now[0])
    verify("old-secret", signed_now(), body, now=now[0])  # within the grace period
    now[0] += 2
    verify("new-secret", signed_now(), body, now=now[0])
    with pytest.raises(SignatureError):
        verify("old-secret", signed_now(), body, now=now[0])  # after it
