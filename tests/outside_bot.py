"""A bot written the way an author without the SDK would, from docs/PROTOCOL.md alone: the
standard library's ``http.server`` and ``hmac``, nothing of the arena.

It checks every request's signature and timestamp (``401`` otherwise), answers the lowest legal
card, passes its three highest cards, exposes nothing, and answers a repeated ``decision_id``
with the answer it gave. It speaks ``gongzhu-bot/1`` only, the first version, and knows of no
other: it answers ``hello`` with it and refuses (``400``) a request in another version, or a
decision whose observation does not list every earlier hand's result. The ``Flaws`` make it
misbehave in one way each, for the doctor's tests. Run it by hand::

    GONGZHU_BOT_SECRET=... python -m tests.outside_bot 8001
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import random
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOLERANCE_S = 300
DECK = [rank + suit for suit in "CDHS" for rank in "23456789TJQKA"]


@dataclass(frozen=True)
class Flaws:
    """What this bot gets wrong: nothing, by default."""

    accepts_bad_signatures: bool = False
    ignores_timestamps: bool = False
    answers_repeats_anew: bool = False
    delay_s: float = 0.0
    plays_illegally: bool = False


class OutsideBot(ThreadingHTTPServer):
    """The bot's server; ``secret`` can be set after it starts (it answers 401 until then)."""

    daemon_threads = True

    def __init__(self, port: int = 0, secret: str | None = None, flaws: Flaws = Flaws()) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.secret = secret
        self.flaws = flaws
        self.answers: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.refused = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"

    def signed(self, timestamp: str | None, signature: str | None, body: bytes) -> bool:
        if self.flaws.accepts_bad_signatures:
            return True
        if self.secret is None or timestamp is None or signature is None:
            return False
        if not timestamp.isdigit():
            return False
        if not self.flaws.ignores_timestamps and abs(time.time() - int(timestamp)) > TOLERANCE_S:
            return False
        expected = hmac.new(
            self.secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256
        ).hexdigest()
        offered = [e.strip()[3:] for e in signature.split(",") if e.strip().startswith("v1=")]
        return any(hmac.compare_digest(expected, o) for o in offered)

    def decide(self, message: dict[str, Any]) -> dict[str, Any]:
        ident = message["decision_id"]
        with self.lock:
            if ident in self.answers and not self.flaws.answers_repeats_anew:
                return self.answers[ident]
        time.sleep(self.flaws.delay_s)
        answer = self.choose(message["observation"])
        if self.flaws.answers_repeats_anew:
            return answer
        with self.lock:
            return self.answers.setdefault(ident, answer)

    def choose(self, observation: dict[str, Any]) -> dict[str, Any]:
        decision = observation["decision"]
        choices: list[str] = decision["choices"]
        if decision["kind"] == "pass":
            cards = random.sample(choices, 3) if self.flaws.answers_repeats_anew else choices[-3:]
            return {"pass": cards}
        if decision["kind"] == "expose":
            return {"expose": []}
        if self.flaws.plays_illegally:
            return {"card": next(c for c in DECK if c not in choices)}
        if self.flaws.answers_repeats_anew:
            return {"card": random.choice(choices)}
        return {"card": choices[0]}


class _Handler(BaseHTTPRequestHandler):
    server: OutsideBot
    protocol_version = "HTTP/1.1"  # keep-alive, as the arena expects

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        stamp = self.headers.get("X-Gongzhu-Timestamp")
        if not self.server.signed(stamp, self.headers.get("X-Gongzhu-Signature"), body):
            self.server.refused += 1
            self.send(401, {"error": "unauthorized"})
            return
        message = json.loads(body)
        if not _readable(message):
            self.server.refused += 1
            self.send(400, {"error": "bad_request", "message": "this bot speaks gongzhu-bot/1"})
            return
        if message["type"] == "hello":
            self.send(200, {"protocol": "gongzhu-bot/1", "name": "outside", "version": "1.0"})
        elif message["type"] == "decision":
            self.send(200, self.server.decide(message))
        else:
            self.send(204, None)

    def send(self, status: int, answer: dict[str, Any] | None) -> None:
        data = b"" if answer is None else json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the tests read the arena's records, not the bot's log."""


def _readable(message: dict[str, Any]) -> bool:
    """A ``gongzhu-bot/1`` request, with every earlier result in a decision's observation."""
    if message.get("protocol") != "gongzhu-bot/1":
        return False
    if message["type"] != "decision":
        return True
    results = message["observation"]["results"]
    return [r["hand_number"] for r in results] == list(range(1, message["hand_number"]))


if __name__ == "__main__":
    bot = OutsideBot(
        int(sys.argv[1]) if len(sys.argv) > 1 else 8001, os.environ["GONGZHU_BOT_SECRET"]
    )
    print(f"serving on {bot.url}")
    bot.serve_forever()
