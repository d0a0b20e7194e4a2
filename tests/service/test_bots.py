"""Bots: registration (pending), the endpoint's verification with the signed handshake,
validation, owners' rights, secrets, rate limit."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import redis
from flask.testing import FlaskClient

from arena.store import Store
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.protocol import PROTOCOL
from bot_sdk.server import make_app
from bot_sdk.signing import verify
from service import Config
from tests.bot_sdk.bot_sdk_support import running
from tests.service.service_support import bearer, operator, register

StartResponse = Callable[..., Any]
HELLO = json.dumps({"protocol": PROTOCOL, "name": "x", "version": "1.0"}).encode()
OK = {"contact": "me@x.org"}


def answering(status: str, body: bytes, seen: list[dict[str, Any]] | None = None) -> Any:
    """A WSGI app that answers every request with ``status`` and ``body``."""

    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        if seen is not None:
            length = int(environ.get("CONTENT_LENGTH") or 0)
            headers = {
                k[5:].replace("_", "-"): v for k, v in environ.items() if k.startswith("HTTP_")
            }
            seen.append({"headers": headers, "body": environ["wsgi.input"].read(length)})
        start_response(status, [("Content-Type", "application/json")])
        return [body]

    return app


@contextmanager
def server(status: str, body: bytes) -> Iterator[str]:
    with running(answering(status, body)) as url:
        yield url


def post_bot(client: FlaskClient, endpoint: str, name: str = "a") -> Any:
    return client.post("/api/bots", json={"name": name, "endpoint": endpoint, **OK})


def verify_endpoint(client: FlaskClient, endpoint: str, name: str = "a") -> Any:
    """Register a bot at ``endpoint`` (pending), then ask the arena to verify the endpoint."""
    made = register(client, endpoint, name=name, verify=False)
    return client.post(
        f"/api/bots/{made['bot']['id']}/verify-endpoint", headers=bearer(made["token"])
    )


def test_registration_answers_credentials_once_then_the_verification_signs_the_hello(
    client: FlaskClient, store: Store
) -> None:
    seen: list[dict[str, Any]] = []
    with running(answering("200 OK", HELLO, seen)) as url:
        data = register(client, url, description="plays low", verify=False)
        bot = data["bot"]
        assert bot["name"] == "alpha" and bot["status"] == "pending" and bot["version"] == ""
        assert not seen  # nothing is sent before the owner has the secret
        path = f"/api/bots/{bot['id']}/verify-endpoint"
        verified = client.post(path, headers=bearer(data["token"]))
    assert verified.status_code == 200, verified.json
    assert verified.json["status"] == "active" and verified.json["version"] == "1.0"
    assert bot["endpoint"] == url and bot["description"] == "plays low"
    assert data["token"].startswith("gzt_") and data["signing_secret"]
    (request,) = seen  # the hello, signed with the secret the registration answered
    headers = {k.title(): v for k, v in request["headers"].items()}
    verify(data["signing_secret"], headers, request["body"], now=time.time())
    assert json.loads(request["body"])["type"] == "hello"
    # stored: the secret encrypted (the workers decrypt it), the token only as a hash
    stored = b"".join(store.redis.hgetall(f"gz:bot:{bot['id']}").values())
    assert data["signing_secret"].encode() not in stored and data["token"].encode() not in stored
    assert store.signing_secrets(bot["id"]) == [data["signing_secret"]]
    listed = client.get("/api/bots").json  # public: no private fields
    assert listed["total"] == 1
    assert "endpoint" not in listed["items"][0] and "contact" not in listed["items"][0]


LONG_URL = "http://h/" + "x" * 2048


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"endpoint": "http://h/", **OK}, "name"),
        ({"name": "", "endpoint": "http://h/", **OK}, "name"),
        ({"name": "a" * 49, "endpoint": "http://h/", **OK}, "name"),
        ({"name": "bad/name", "endpoint": "http://h/", **OK}, "name"),
        ({"name": 7, "endpoint": "http://h/", **OK}, "name"),
        ({"name": "a", **OK}, "endpoint"),
        ({"name": "a", "endpoint": 5, **OK}, "endpoint"),
        ({"name": "a", "endpoint": LONG_URL, **OK}, "endpoint"),
        ({"name": "a", "endpoint": "http://h/"}, "contact"),
        ({"name": "a", "endpoint": "http://h/", "contact": "x" * 201}, "contact"),
        ({"name": "a", "endpoint": "http://h/", **OK, "description": 1}, "description"),
        ({"name": "a", "endpoint": "http://h/", **OK, "description": "d" * 1001}, "description"),
        ({"name": "a", "endpoint": "http://h/", **OK, "owner": "x"}, "owner"),
    ],
)
def test_registration_validates_every_field(
    client: FlaskClient, body: dict[str, Any], field: str
) -> None:
    response = client.post("/api/bots", json=body)
    assert response.status_code == 422
    error = response.json
    assert error["status"] == 422 and error["error"] == "invalid"
    assert field in error["errors"] and field in error["message"]


@pytest.mark.parametrize(
    ("endpoint", "says"),
    [
        ("ftp://bot.example/", "http:// or https://"),
        ("http://user:pw@bot.example/", "credentials"),
        ("http://bot.example/#frag", "fragment"),
        ("http:///nohost", "no host"),
        ("http://bot.example:99999/", "not a valid URL"),
        ("not a url", "http:// or https://"),
    ],
)
def test_malformed_endpoints_are_refused(client: FlaskClient, endpoint: str, says: str) -> None:
    response = post_bot(client, endpoint)
    assert response.status_code == 422
    assert says in response.json["errors"]["endpoint"][0]


def test_body_that_is_not_json_or_too_large(client: FlaskClient) -> None:
    response = client.post("/api/bots", data=b"{nope", content_type="application/json")
    assert response.status_code == 400 and response.json["error"] == "bad_request"
    response = client.post("/api/bots", data=b"x" * 70_000, content_type="application/json")
    assert response.status_code == 413 and response.json["error"] == "too_large"


def test_handshake_refused_connection(client: FlaskClient) -> None:
    with server("200 OK", HELLO) as url:
        pass  # the port is closed now
    response = verify_endpoint(client, url)
    assert response.status_code == 422 and response.json["error"] == "handshake_failed"
    assert "connection refused" in response.json["errors"]["endpoint"][0]


def test_handshake_timeout(client: FlaskClient) -> None:
    release = threading.Event()

    def slow(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        release.wait(5)
        start_response("200 OK", [("Content-Type", "application/json")])
        return [HELLO]

    with running(slow) as url:
        response = verify_endpoint(client, url)
        release.set()
    assert response.status_code == 422
    assert "did not answer the hello within 1 s" in response.json["message"]


def test_a_bot_with_another_secret_is_refused_saying_which_secret_and_what_to_do(
    client: FlaskClient,
) -> None:
    with running(make_app(LowestCard, "the-secret-it-was-given-last-year")) as url:
        made = register(client, url, verify=False)
        bot_id = made["bot"]["id"]
        path = f"/api/bots/{bot_id}/verify-endpoint"
        response = client.post(path, headers=bearer(made["token"]))
        assert response.status_code == 422 and response.json["error"] == "handshake_failed"
        message = response.json["errors"]["endpoint"][0]
        assert message.startswith(f"the bot at {url} refused the hello's signature (HTTP 401: ")
        assert f"The arena signs with bot {bot_id}'s signing secret, shown once" in message
        assert "reads it from GONGZHU_BOT_SECRET" in message
        assert f"`gongzhu bots rotate-secret {bot_id} --token TOKEN`" in message
        assert f"POST /api/bots/{bot_id}/rotate-secret" in message
        assert made["signing_secret"] not in response.text and made["token"] not in response.text
        assert "the-secret-it-was-given-last-year" not in response.text
        # After the rotation the message names, the bot served with the new secret is verified.
        rotated = client.post(f"/api/bots/{bot_id}/rotate-secret", headers=bearer(made["token"]))
        secret = rotated.json["signing_secret"]
    with running(make_app(LowestCard, secret)) as url:
        changed = client.patch(
            f"/api/bots/{bot_id}", json={"endpoint": url}, headers=bearer(made["token"])
        )
        assert changed.status_code == 200, changed.json
        assert client.post(path, headers=bearer(made["token"])).json["status"] == "active"


@pytest.mark.parametrize(
    ("status", "body", "says"),
    [
        ("500 Internal Server Error", b'{"error": "boom"}', "HTTP 500"),
        ("200 OK", b"<html>hi</html>", "not UTF-8 JSON"),
        ("200 OK", b'["a list"]', "must be a JSON object"),
        ("200 OK", b'{"protocol": "gongzhu-bot/0", "name": "x", "version": "1"}', "gongzhu-bot/0"),
        ("200 OK", b'{"protocol": "gongzhu-bot/1", "version": "1"}', '"name"'),
        ("200 OK", b'{"name": "x", "version": "1"}', 'the hello answer has no "protocol"'),
        ("200 OK", b" " * 70_000, "larger than 64 KiB"),
        ("302 Found", b"", "does not follow redirects"),
    ],
)
def test_handshake_failures_say_why(
    client: FlaskClient, status: str, body: bytes, says: str
) -> None:
    with server(status, body) as url:
        response = verify_endpoint(client, url)
    assert response.status_code == 422 and response.json["error"] == "handshake_failed"
    assert says in response.json["errors"]["endpoint"][0]
    (bot,) = client.get("/api/bots").json["items"]
    assert bot["status"] == "pending"  # it stays so until a verification succeeds


def test_names_are_unique_ignoring_case(client: FlaskClient, bot_url: str) -> None:
    register(client, bot_url, name="Alpha")
    response = post_bot(client, bot_url, name="alpha")
    assert response.status_code == 409 and response.json["errors"]["name"]


def test_a_registration_that_fails_midway_leaves_its_name_free(
    client: FlaskClient, bot_url: str, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The connection to Redis drops as the registration's writes go out: nothing of it is
    stored, the name included, so registering again works."""
    execute = redis.client.Pipeline.execute
    dropped: list[list[Any]] = []

    def drop_the_bots_writes(pipe: redis.client.Pipeline, *args: Any, **kwargs: Any) -> Any:
        writes = [c[0] for c in pipe.command_stack]
        if not dropped and any(str(a).startswith("gz:bot") for w in writes for a in w[1:2]):
            dropped.append(writes)
            pipe.reset()
            raise redis.ConnectionError("the connection dropped (injected)")
        return execute(pipe, *args, **kwargs)

    monkeypatch.setattr(redis.client.Pipeline, "execute", drop_the_bots_writes)
    response = post_bot(client, bot_url, name="alpha")
    assert response.status_code == 503 and dropped
    assert store.redis.hgetall("gz:bot-names") == {}
    assert store.list_bots(page=1, per_page=10).total == 0
    made = register(client, bot_url, name="alpha")
    assert store.get_bot(made["bot"]["id"]) is not None


def test_only_the_owner_reads_and_changes_a_bot(client: FlaskClient, bot_url: str) -> None:
    mine = register(client, bot_url, name="mine")
    theirs = register(client, bot_url, name="theirs")
    path = f"/api/bots/{mine['bot']['id']}"
    for method in (client.get, client.patch):
        missing = method(path, json={"description": "x"})
        assert missing.status_code == 401 and missing.json["error"] == "unauthorized"
        assert missing.headers["WWW-Authenticate"].startswith("Bearer")
        wrong = method(path, json={"description": "x"}, headers=bearer("gzt_nope"))
        assert wrong.status_code == 401
        other = method(path, json={"description": "x"}, headers=bearer(theirs["token"]))
        assert other.status_code == 403 and other.json["error"] == "forbidden"
    for action in ("pause", "resume", "retire", "rotate-secret"):
        assert client.post(f"{path}/{action}").status_code == 401
        assert client.post(f"{path}/{action}", headers=bearer(theirs["token"])).status_code == 403
    got = client.get(path, headers=bearer(mine["token"]))
    assert got.status_code == 200 and got.json["contact"] == "me@example.com"


def test_patch_changes_fields_and_rechecks_the_endpoint(client: FlaskClient, bot_url: str) -> None:
    data = register(client, bot_url)
    path, auth = f"/api/bots/{data['bot']['id']}", bearer(data["token"])
    changed = client.patch(path, json={"description": "new", "contact": "you@x.org"}, headers=auth)
    assert changed.status_code == 200
    assert changed.json["description"] == "new" and changed.json["contact"] == "you@x.org"
    with server("500 Internal Server Error", b"down") as broken:
        refused = client.patch(path, json={"endpoint": broken}, headers=auth)
    assert refused.status_code == 422 and "HTTP 500" in refused.json["message"]
    assert client.get(path, headers=auth).json["endpoint"] == bot_url
    with server("200 OK", HELLO) as moved:
        assert client.patch(path, json={"endpoint": moved}, headers=auth).json["endpoint"] == moved
    assert client.patch(path, json={}, headers=auth).status_code == 422
    assert client.patch(path, json={"name": "x"}, headers=auth).json["errors"]["name"]


def test_status_changes_and_retirement_is_final(client: FlaskClient, bot_url: str) -> None:
    data = register(client, bot_url)
    path, auth = f"/api/bots/{data['bot']['id']}", bearer(data["token"])
    assert client.post(f"{path}/resume", headers=auth).status_code == 409
    assert client.post(f"{path}/pause", headers=auth).json["status"] == "paused"
    assert client.post(f"{path}/pause", headers=auth).status_code == 409
    assert client.post(f"{path}/resume", headers=auth).json["status"] == "active"
    assert client.post(f"{path}/retire", headers=auth).json["status"] == "retired"
    for action in ("resume", "pause", "retire", "rotate-secret"):
        response = client.post(f"{path}/{action}", headers=auth)
        assert response.status_code == 409 and "retired" in response.json["message"]
    assert client.patch(path, json={"description": "x"}, headers=auth).status_code == 409


def test_rotating_keeps_the_old_secret_for_the_grace_period(
    client: FlaskClient, bot_url: str, store: Store, config: Config
) -> None:
    data = register(client, bot_url)
    bot_id = data["bot"]["id"]
    rotated = client.post(f"/api/bots/{bot_id}/rotate-secret", headers=bearer(data["token"]))
    assert rotated.status_code == 200
    new = rotated.json["signing_secret"]
    assert rotated.json["previous_valid_for_s"] == config.secret_grace_s
    assert store.signing_secrets(bot_id) == [new, data["signing_secret"]]
    later = Store.from_config(config, client=store.redis, clock=lambda: time.time() + 4000)
    assert later.signing_secrets(bot_id) == [new]


def test_registration_is_rate_limited_per_client(client: FlaskClient, bot_url: str) -> None:
    for n in range(5):
        register(client, bot_url, name=f"bot{n}")
    response = post_bot(client, bot_url, name="bot9")
    assert response.status_code == 429 and response.json["error"] == "rate_limited"
    assert "5 per 1 minute" in response.json["message"]
    assert client.get("/api/bots").status_code == 200  # reading is not limited


def test_bot_list_pagination(client: FlaskClient, bot_url: str) -> None:
    for n in range(3):
        register(client, bot_url, name=f"bot{n}")
    first = client.get("/api/bots?per_page=2").json
    second = client.get("/api/bots?per_page=2&page=2").json
    assert (first["total"], len(first["items"]), len(second["items"])) == (3, 2, 1)
    assert [b["name"] for b in first["items"] + second["items"]] == ["bot2", "bot1", "bot0"]
    bad = client.get("/api/bots?per_page=500&page=0")
    assert bad.status_code == 422 and set(bad.json["errors"]) == {"page", "per_page"}


def test_a_pending_bot_never_plays_until_its_endpoint_answers(
    client: FlaskClient, bot_url: str
) -> None:
    """Pending: out of tournaments and human games, only retirement or verification move it;
    its endpoint changes without a handshake (the secret may not be served yet)."""
    data = register(client, bot_url, verify=False)
    bot_id, auth = data["bot"]["id"], bearer(data["token"])
    path = f"/api/bots/{bot_id}"
    body = {"name": "t", "participants": [bot_id, "house:easy"]}
    refused = client.post("/api/tournaments", json=body, headers=operator())
    assert refused.status_code == 422 and "pending, not active" in refused.json["message"]
    assert client.post(f"{path}/pause", headers=auth).status_code == 409
    assert client.post(f"{path}/resume", headers=auth).status_code == 409
    with server("500 Internal Server Error", b"not served yet") as elsewhere:
        moved = client.patch(path, json={"endpoint": elsewhere}, headers=auth)
    assert moved.status_code == 200 and moved.json["status"] == "pending"
    assert client.patch(path, json={"endpoint": "ftp://x/"}, headers=auth).status_code == 422
    client.patch(path, json={"endpoint": bot_url}, headers=auth)
    verified = client.post(f"{path}/verify-endpoint", headers=auth)
    assert verified.json["status"] == "active" and verified.json["version"] == "1.0"
    assert client.post("/api/tournaments", json=body, headers=operator()).status_code == 201
    assert client.post(f"{path}/verify-endpoint").status_code == 401


def test_a_pending_bot_can_be_retired(client: FlaskClient, bot_url: str) -> None:
    data = register(client, bot_url, verify=False)
    path, auth = f"/api/bots/{data['bot']['id']}", bearer(data["token"])
    assert client.post(f"{path}/retire", headers=auth).json["status"] == "retired"
    refused = client.post(f"{path}/verify-endpoint", headers=auth)
    assert refused.status_code == 409 and "retired" in refused.json["message"]
