"""Endpoint handshakes cannot be used to flood the web process: a bot's owner may change its
endpoint only so often, and one web process runs only so many handshakes at once."""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any

import pytest

from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.server import make_app
from service import Config, create_app, limits
from tests.bot_sdk.bot_sdk_support import running
from tests.service.service_support import bearer, register


class SlowHello:
    """A bot server whose hello takes ``delay_s`` (its other answers are the SDK's)."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.app = make_app(LowestCard, None, verify_signatures=False)

    def __call__(self, environ: dict[str, Any], start: Any) -> Any:
        time.sleep(self.delay_s)
        return self.app(environ, start)


def test_an_owner_may_change_the_endpoint_only_so_often(config: Config, bot_url: str) -> None:
    client = create_app(
        dataclasses.replace(config, endpoint_check_limit="2 per minute")
    ).test_client()
    mine, theirs = register(client, bot_url, name="mine"), register(client, bot_url, name="theirs")
    path = f"/api/bots/{mine['bot']['id']}"
    for _ in range(2):
        changed = client.patch(path, json={"endpoint": bot_url}, headers=bearer(mine["token"]))
        assert changed.status_code == 200, changed.json
    refused = client.patch(path, json={"endpoint": bot_url}, headers=bearer(mine["token"]))
    assert refused.status_code == 429 and refused.json["error"] == "rate_limited"
    assert "2 per 1 minute" in refused.json["message"]
    other = client.patch(path, json={"description": "no handshake"}, headers=bearer(mine["token"]))
    assert other.status_code == 200  # a change without a handshake is not counted
    their_path = f"/api/bots/{theirs['bot']['id']}"
    theirs_changed = client.patch(
        their_path, json={"endpoint": bot_url}, headers=bearer(theirs["token"])
    )
    assert theirs_changed.status_code == 200  # another owner has a quota of their own


def test_a_malformed_change_is_refused_and_not_counted(config: Config, bot_url: str) -> None:
    client = create_app(
        dataclasses.replace(config, endpoint_check_limit="1 per minute")
    ).test_client()
    mine = register(client, bot_url, name="mine")
    path, token = f"/api/bots/{mine['bot']['id']}", bearer(mine["token"])
    answers = [
        client.patch(path, data=broken, content_type="application/json", headers=token)
        for broken in (b'{"endpoint": ', b"[1, 2]", b'"endpoint"')
    ]
    assert [a.status_code for a in answers] == [400, 422, 422]
    # the view's own message, not a generic one from the limit's check of the body
    assert answers[0].json["message"] == "the request body is not valid JSON: send a JSON object"
    changed = client.patch(path, json={"endpoint": bot_url}, headers=token)
    assert changed.status_code == 200, changed.json  # none of the refused ones was counted


def test_a_process_runs_only_so_many_handshakes_at_once(config: Config, bot_url: str) -> None:
    roomy = dataclasses.replace(config, handshakes_at_once=1, handshake_timeout_s=5.0)
    client = create_app(roomy).test_client()
    owners = [register(client, bot_url, name=f"bot{n}") for n in range(2)]
    with running(SlowHello(2.0)) as slow_url:
        answers: dict[int, Any] = {}

        def change(n: int) -> None:
            owner = owners[n]
            answers[n] = client.patch(
                f"/api/bots/{owner['bot']['id']}",
                json={"endpoint": slow_url},
                headers=bearer(owner["token"]),
            )

        first = threading.Thread(target=change, args=(0,))
        first.start()
        time.sleep(0.2)  # the first handshake is under way
        began = time.monotonic()
        change(1)
        waited = time.monotonic() - began
        first.join()
    assert answers[0].status_code == 200, answers[0].json
    busy = answers[1]
    assert busy.status_code == 503 and busy.json["error"] == "unavailable"
    assert "endpoint checks are already in progress" in busy.json["message"]
    assert waited < 1.5  # answered after the slot's 0.5 s wait, not after the 2 s handshake
    after = client.patch(
        f"/api/bots/{owners[1]['bot']['id']}",
        json={"endpoint": bot_url},
        headers=bearer(owners[1]["token"]),
    )
    assert after.status_code == 200  # the slot is free again


def test_a_handshake_waits_half_a_second_for_a_slot_before_refusing(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a stand-in slot that frees up for any caller willing to wait: deterministic."""
    waits: list[float] = []

    class FreedWhileWaiting:
        def acquire(self, timeout: float) -> bool:
            waits.append(timeout)
            return timeout > 0

        def release(self) -> None:
            waits.append(-1.0)

    app = create_app(dataclasses.replace(config, handshakes_at_once=3))
    monkeypatch.setitem(limits._SLOTS, 3, FreedWhileWaiting())
    with app.app_context(), limits.handshake_slot():
        assert waits == [0.5]
    assert waits == [0.5, -1.0]  # released after use
