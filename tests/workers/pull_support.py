"""Helpers of the pull-bot tests: the arena's web app served on loopback, pull bots registered
through its API, and a raw stream reader that sees exactly what a pull bot is sent."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import requests

from bot_sdk.connect import Channel, PullClient
from bot_sdk.server import BotApp
from tests.service.service_support import bearer


@dataclass(frozen=True)
class PullBot:
    base: str
    id: str
    token: str
    secret: str

    @property
    def auth(self) -> dict[str, str]:
        return bearer(self.token)

    def answer(self, request_id: str, body: bytes) -> requests.Response:
        return requests.post(
            f"{self.base}/api/bots/{self.id}/answers/{request_id}",
            data=body,
            headers={**self.auth, "Content-Type": "application/json"},
            timeout=5,
        )


def register_pull(base: str, name: str) -> PullBot:
    """A pull bot registered through the API (pending until verified)."""
    response = requests.post(
        f"{base}/api/bots",
        json={"name": name, "contact": "t@example.com", "transport": "pull"},
        timeout=5,
    )
    assert response.status_code == 201, response.text
    found = response.json()
    return PullBot(base, found["bot"]["id"], found["token"], found["signing_secret"])


class RawStream:
    """A pull bot's stream read line by line in a thread: every event, keep-alives counted."""

    def __init__(self, bot: PullBot, token: str | None = None) -> None:
        self.response = requests.get(
            f"{bot.base}/api/bots/{bot.id}/stream",
            headers=bearer(token or bot.token),
            stream=True,
            timeout=10,
        )
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.keepalives = 0
        if self.response.status_code == 200:
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for line in self.response.iter_lines():
                if not line:
                    self.keepalives += 1
                    continue
                self.events.put(json.loads(line))
        except (requests.RequestException, AttributeError):  # closed by the test
            return

    def next(self, kind: str = "request", timeout: float = 5.0) -> dict[str, Any]:
        """The next event of ``kind`` (others are skipped)."""
        while True:
            event = self.events.get(timeout=timeout)
            if event["type"] == kind:
                return event

    def close(self) -> None:
        self.response.close()


def connect(
    stack: ExitStack, bot: PullBot, app: BotApp, channel: Channel = "websocket"
) -> PullClient:
    """The SDK's pull client serving ``app`` as ``bot``, in a thread until ``stack`` closes."""
    client = PullClient(app, arena=bot.base, bot_id=bot.id, token=bot.token, channel=channel)
    thread = threading.Thread(target=client.run, daemon=True)
    thread.start()
    stack.callback(thread.join, 10)
    stack.callback(client.stop)
    return client


@contextmanager
def stream(bot: PullBot) -> Iterator[RawStream]:
    opened = RawStream(bot)
    assert opened.response.status_code == 200, opened.response.text
    try:
        opened.next("welcome")
        yield opened
    finally:
        opened.close()
