"""``gongzhu-bot/2`` beside ``gongzhu-bot/1`` in the arena's matches, as a match job plays them
(``arena.matches``: the seats, the ``hello``, the match loop), with a real Redis and, for pull
bots, the web app on loopback holding their streams.

A bot written for ``gongzhu-bot/1`` without the SDK (:class:`tests.outside_bot.OutsideBot`, which
refuses anything it cannot read) plays beside SDK bots that choose ``gongzhu-bot/2``, pushed and
pulled, and an SDK bot told to speak ``gongzhu-bot/1``; each seat's protocol is in the log, every
request hash verifies in its seat's version, and ``gongzhu-bot/2`` requests stay the same size
through 20 hands. The SDK's bot sees the same observations whichever version it speaks."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from arena.config import Config
from arena.exchange import now_ns
from arena.http_seat import HttpSeat
from arena.match_loop import play_match
from arena.matches import _greet, seat_player
from arena.store import Store
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.protocol import ProtocolVersion, Status
from bot_sdk.server import make_app
from referee import Game, Outcome, Rules
from replays.deals import DealSource
from replays.log import MatchLog, TimeControl
from replays.upgrade import read_log
from replays.verify import verify
from service.app import create_app
from tests.bot_sdk.bot_sdk_support import running
from tests.bot_sdk.test_protocol_versions import Recording
from tests.outside_bot import OutsideBot
from tests.pages.pages_support import serving
from tests.workers.crashes import wait_for
from tests.workers.pull_support import connect, register_pull

V1, V2 = ProtocolVersion.V1, ProtocolVersion.V2
TC = TimeControl(2000, 30_000, 5)


@pytest.fixture
def web(config: Config) -> Iterator[str]:
    fast = dataclasses.replace(config, stream_heartbeat_s=0.5)
    with serving(create_app(fast)) as base:
        yield base


@pytest.fixture
def outside(stack: ExitStack) -> OutsideBot:
    bot = OutsideBot(secret="outside-secret")
    threading.Thread(target=bot.serve_forever, daemon=True).start()
    stack.callback(bot.server_close)
    stack.callback(bot.shutdown)
    return bot


def _push(store: Store, name: str, url: str, secret: str) -> str:
    bot, _ = store.create_bot(
        name=name, endpoint=url, description="", contact="t@example.com", version="1",
        secret=secret,
    )  # fmt: skip
    return bot.id


def _active(store: Store, bot_id: str) -> bool:
    found = store.get_bot(bot_id)
    return found is not None and found.status.value == "active"


def _match(
    store: Store, config: Config, participants: list[str], rules: Rules, seed: str
) -> MatchLog:
    """One match of ``participants`` as a match job plays it (with practice deals), its log
    read back from its JSON."""
    players = [seat_player(store, config, s, p, seed) for s, p in enumerate(participants)]
    origin = now_ns()
    try:
        failures = _greet(players, "m-1", rules, TC, config, commitment=None, origin_ns=origin)
        assert not failures
        log = play_match(
            Game(rules, seed=seed), players, match_id="m-1", deals=DealSource.practice(seed),
            time_control=TC, origin_ns=origin,
        )  # fmt: skip
    finally:
        for player in players:
            if isinstance(player, HttpSeat):
                player.close()
    return read_log(json.loads(json.dumps(log.to_json())))


def _largest_request(log: MatchLog, seat: int, hand: int) -> int:
    sent = [
        d.timing.bytes_sent
        for d in log.hands[hand - 1].decisions
        if d.seat == seat and d.timing is not None and d.timing.bytes_sent is not None
    ]
    assert sent
    return max(sent)


def test_bots_of_both_versions_push_and_pull_play_20_hands_and_the_log_verifies(
    config: Config, store: Store, web: str, stack: ExitStack, outside: OutsideBot
) -> None:
    sdk_secret = "sdk-secret"
    sdk = _push(store, "sdk", stack.enter_context(running(make_app(LowestCard, sdk_secret))),
                sdk_secret)  # fmt: skip
    raw = _push(store, "outside", outside.url, "outside-secret")
    pulled = {V2: register_pull(web, "pull-2"), V1: register_pull(web, "pull-1")}
    for version, bot in pulled.items():
        connect(stack, bot, make_app(LowestCard, bot.secret, protocols=(version,)))
    for bot in pulled.values():
        wait_for(lambda bot=bot: _active(store, bot.id), 10, "the pull bot to verify itself")
    participants = [raw, sdk, pulled[V2].id, pulled[V1].id]
    log = _match(store, config, participants, Rules(fixed_hands=20, max_hands=20), "versions")

    assert [s.protocol for s in log.seats] == [V1, V2, V2, V1]
    assert outside.refused == 0  # every request it was sent, it could read
    decisions = [d for hand in log.hands for d in hand.decisions]
    assert len(log.hands) == 20 and all(d.status is Status.OK for d in decisions)
    result = verify(log)
    assert result.ok, result.discrepancy
    assert result.requests_checked == len(decisions)  # every seat's, in its own version

    for seat in (1, 2):  # gongzhu-bot/2, pushed and pulled: flat
        assert _largest_request(log, seat, 20) <= 1.2 * _largest_request(log, seat, 1)
    for seat in (0, 3):  # gongzhu-bot/1: every earlier result, again in every request
        assert _largest_request(log, seat, 20) >= 5 * _largest_request(log, seat, 1)


def test_a_tampered_version_2_request_or_seat_version_is_caught(
    config: Config, store: Store, stack: ExitStack
) -> None:
    secret = "sdk-secret"
    sdk = _push(store, "sdk", stack.enter_context(running(make_app(LowestCard, secret))), secret)
    log = _match(store, config, [sdk, "house:easy", "house:easy", "house:easy"],
                 Rules(fixed_hands=2), "tamper")  # fmt: skip
    assert log.seats[0].protocol is V2 and verify(log).ok
    data = log.to_json()
    asked = [d for h in data["hands"] for d in h["decisions"] if d["request_sha256"]]
    late = next(d for d in asked if d["decision_id"].startswith("m-1:2:"))
    late["request_sha256"] = "0" * 64
    found = verify(read_log(data))
    assert not found.ok and found.discrepancy is not None
    assert "does not match its SHA-256" in found.discrepancy.message
    assert found.discrepancy.hand == 2

    data = log.to_json()
    data["seats"][0]["protocol"] = V1.value  # as if the seat had spoken gongzhu-bot/1
    found = verify(read_log(data))
    assert not found.ok and found.discrepancy is not None
    assert (found.discrepancy.hand, found.discrepancy.decision) == (1, 0)
    assert "does not match its SHA-256" in found.discrepancy.message


def _seen(store: Store, config: Config, stack: ExitStack, version: ProtocolVersion) -> Any:
    """Everything the SDK gave the recording bot in seat 2 of the same match (the same deals,
    the same house bots), served speaking ``version``."""
    bots: list[Recording] = []

    def made() -> Recording:
        bots.append(Recording())
        return bots[-1]

    secret = f"secret-{version.value}"
    url = stack.enter_context(running(make_app(made, secret, protocols=(version,))))
    bot = _push(store, f"recording-{version.name}", url, secret)
    seats = ["house:normal", "house:easy", bot, "house:hard"]
    log = _match(store, config, seats, Rules.with_variants("pass_3", fixed_hands=4), "same")
    assert log.seats[2].protocol is version and verify(log).ok
    wait_for(lambda: any(b.seen and isinstance(b.seen[-1], Outcome) for b in bots), 5,
             "the match_end notice")  # fmt: skip
    (played,) = [b for b in bots if b.seen]
    return played.seen, [d.applied for h in log.hands for d in h.decisions]


def test_an_sdk_bot_sees_the_same_whole_match_in_both_versions(
    config: Config, store: Store, stack: ExitStack
) -> None:
    seen_1, moves_1 = _seen(store, config, stack, V1)
    seen_2, moves_2 = _seen(store, config, stack, V2)
    assert moves_2 == moves_1
    assert len(seen_1) > 4 * 13 and any(getattr(s, "results", None) for s in seen_1)
    assert seen_2 == seen_1
