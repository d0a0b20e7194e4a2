"""The demo the run command shows: example bots from the SDK, registered through the API and
entered in the ladder (which then plays them by itself), in a tournament with house bots,
followed to the end with a progress bar, then the standings.

It talks to the arena only over its public HTTP API, like any client.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import click
from waitress.server import create_server

from arena.settings import write_private
from bot_sdk.bot import Bot
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.house import EasyBot, NormalBot
from bot_sdk.server import make_app
from service.api_client import ArenaClient

DEMO_BOTS: dict[str, Callable[[], Bot]] = {
    "demo-lowest-card": LowestCard,
    "demo-easy": EasyBot,
    "demo-normal": NormalBot,
}
"""The demo's registered bots: SDK bots served over HTTP on loopback, as a bot author would."""
HOUSE = ["house:normal", "house:easy"]
"""The house bots that join the demo tournament."""


@contextmanager
def serve_bots() -> Iterator[dict[str, str]]:
    """Serve the demo bots on loopback; yields name -> URL. Demo bots do not check signatures:
    their secrets only exist once they are registered, and they listen on loopback only."""
    # Every match the workers play at once asks these small servers: a request waiting for one
    # of their threads is expected here, and waitress would warn of each on the terminal.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    with ExitStack() as stack:
        urls = {}
        for name, factory in DEMO_BOTS.items():
            app = make_app(factory, None, verify_signatures=False)
            server = create_server(app, host="127.0.0.1", port=0, threads=4)
            stack.callback(server.close)
            threading.Thread(target=server.run, daemon=True, name=name).start()
            urls[name] = f"http://127.0.0.1:{server.effective_port}/"
        yield urls


def register_bots(arena: ArenaClient, urls: dict[str, str], keep: Path) -> list[str]:
    """Register the demo bots and verify their endpoints (or, on a later run, point them at
    their new URLs); their ids and tokens are kept in ``keep``, readable by its owner only."""
    known: dict[str, dict[str, str]] = json.loads(keep.read_text()) if keep.exists() else {}
    for name, url in urls.items():
        if name in known:
            bot = known[name]
            arena.call(
                "PATCH",
                f"/api/bots/{bot['id']}",
                token=bot["token"],
                json={"endpoint": url, "ladder": True},
            )
            continue
        made = arena.call(
            "POST",
            "/api/bots",
            json={
                "name": name,
                "endpoint": url,
                "contact": "demo@localhost",
                "description": "demo",
                "ladder": True,
            },
        )
        known[name] = {"id": made["bot"]["id"], "token": made["token"]}
        write_private(keep, json.dumps(known, indent=2).encode())
        arena.call("POST", f"/api/bots/{made['bot']['id']}/verify-endpoint", token=made["token"])
    return [known[name]["id"] for name in urls]


def run_tournament(arena: ArenaClient, participants: list[str], *, hands: int) -> dict[str, Any]:
    """Create and start a tournament, follow it with a progress bar, return its final state."""
    made = arena.operator(
        "POST",
        "/api/tournaments",
        json={
            "name": f"demo {time.strftime('%Y-%m-%d %H:%M:%S')}",
            "participants": participants,
            "format": {"matches_per_table": 1, "hands": hands},
            "time_control": {"decision_ms": 1000},
        },
    )
    tid = made["id"]
    arena.operator("POST", f"/api/tournaments/{tid}/start")
    tournament = arena.call("GET", f"/api/tournaments/{tid}")
    while not tournament["progress"]["total"] and tournament["status"] not in ("done", "cancelled"):
        time.sleep(0.3)
        tournament = arena.call("GET", f"/api/tournaments/{tid}")
    total = tournament["progress"]["total"]
    with click.progressbar(length=total, label="playing the demo tournament") as bar:
        shown = 0
        while tournament["status"] not in ("done", "cancelled"):
            time.sleep(0.3)
            tournament = arena.call("GET", f"/api/tournaments/{tid}")
            done = tournament["progress"]["done"]
            bar.update(done - shown)
            shown = done
        bar.update(total - shown)
    return tournament  # type: ignore[no-any-return]
