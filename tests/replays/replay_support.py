"""Shared helpers of the replay tests: real matches played by :func:`arena.match_loop.play_match`
with seats that commit every kind of fault, rules profiles covering every variant, a test key,
and a match clock that moves only as the scripted bots take their time (so logs, timing
included, are repeatable).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
from collections.abc import Callable
from functools import cache
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from arena.exchange import Exchange
from arena.match_loop import InProcessSeat, Reply, SeatPlayer, play_match
from bot_sdk import Bot
from bot_sdk.dispatch import fallback_answer
from bot_sdk.protocol import (
    PROTOCOL,
    AnswerError,
    DecisionRequest,
    ProtocolVersion,
    Status,
    answer_of,
    encode,
    hello_answer,
    hello_request,
    parse_answer,
    read_note,
)
from referee import (
    AnyMove,
    DecisionKind,
    Game,
    HandResult,
    Observation,
    Outcome,
    PassDirection,
    RandomPlayer,
    Rules,
    RulesError,
    Variant,
    card_name,
)
from replays.deals import DealSource, deal_seed
from replays.integrity import key_id_of, seal
from replays.log import Connection, MatchLog, SeatInfo, TimeControl

TIME_CONTROL = TimeControl(decision_ms=1000, bank_ms=2000, fault_limit=5)
"""A small bank, so that late answers run it down and a later slow one times out."""

PROFILES: dict[str, Rules] = {
    "standard": Rules(max_hands=2),
    "pass_next": Rules.with_variants("pass_3", "qd_bonus", max_hands=2),
    "pass_previous": Rules.with_variants("pass_3", pass_direction="previous", fixed_hands=1),
    "pass_across": Rules.with_variants(
        "pass_3", "sequential_exposure", pass_direction="across", fixed_hands=1
    ),
    "pass_cycle": Rules.with_variants("pass_3", pass_direction="cycle", fixed_hands=4),
    "teams": Rules.with_variants("teams", "qd_bonus", "hand_cap_800", max_hands=2),
    "lead_2c": Rules.with_variants("no_exposure", "lead_2c", "hearts_must_break", max_hands=2),
    "dealer": Rules.with_variants(
        "dealer_left_leads", "no_spade_lead_first_trick", "tie_share", max_hands=2
    ),
    "target_500": Rules.with_variants(
        "target_500", "end_at_plus_1000", "tie_continue_bottom", max_hands=3
    ),
}
"""Short matches that together use every variant and every pass direction."""

FAULTS = ("slow", "timeout", "error", "malformed", "wrong_kind", "illegal")
"""What a scripted seat can do wrong; ``ok``, ``late`` (over the limit, within the bank),
``noted`` (a legal answer with a note) and ``own_fallback`` (the SDK's fallback answer, with its
note) are not faults."""

Script = Callable[[int], str]
"""What a scripted seat does at its n-th decision (from 0): ``ok``, ``late`` or a fault."""


def random_rules(rng: random.Random) -> Rules:
    """A random valid rules profile of one to three hands."""
    while True:
        names = [v.value for v in Variant if rng.random() < 0.25]
        data: dict[str, Any] = {"variants": names, "max_hands": rng.randint(1, 3)}
        if Variant.PASS_3.value in names:
            data["pass_direction"] = rng.choice([d.value for d in PassDirection])
        try:
            return Rules.from_json(data)
        except RulesError:
            continue


class RandomBot(Bot):
    """A seeded random legal player as an SDK bot."""

    name = "random"

    def __init__(self, seed: int | str) -> None:
        self._player = RandomPlayer(seed)

    def decide(self, obs: Observation) -> AnyMove:
        return self._player.choose(obs)


class MatchClock:
    """The tests' monotonic clock, in nanoseconds: it moves only when a scripted bot takes time
    to answer, so in-process seats answer in 0 ms and every log is repeatable. Matches take
    their start from it (:func:`record`)."""

    def __init__(self) -> None:
        self.now_ns = 0

    def __call__(self) -> int:
        return self.now_ns

    def wait(self, ms: int) -> None:
        self.now_ns += ms * 1_000_000


CLOCK = MatchClock()
CONNECT_NS = 1_250_000
"""How long a scripted bot's connection takes to open."""


def house_seat(seat: int, seed: int | str) -> InProcessSeat:
    info = SeatInfo(seat, f"house-{seat}", "random", "1", kind="house")
    return InProcessSeat(RandomBot(seed), info, clock=CLOCK)


class HashingSeat(InProcessSeat):
    """An SDK bot played in-process but logged like a bot over HTTP: with the SHA-256 of each
    request the arena would have sent it."""

    def __init__(self, bot: Bot, info: SeatInfo) -> None:
        super().__init__(bot, info, clock=CLOCK)

    def ask(self, request: DecisionRequest) -> Reply:
        return dataclasses.replace(super().ask(request), request_sha256=request.sha256)


class ScriptedSeat:
    """A bot "over HTTP" without HTTP: it plays random legal moves, or commits the fault its
    script names, with the latency it would have had (the :data:`CLOCK` moves on by it). Like
    the arena's HTTP client it records the SHA-256 of each request body it was sent
    (``hashes=False``: as if in-process) and its timing: one connection, opened for the first
    request (the ``hello``, when :func:`greet` sends one) and kept alive, the body's bytes each
    way.
    """

    def __init__(
        self,
        seat: int,
        script: Script,
        *,
        seed: int | str,
        hashes: bool = True,
        protocol: ProtocolVersion = PROTOCOL,
    ) -> None:
        self.info = SeatInfo(
            seat, f"bot-{seat}", f"scripted-{seat}", "2.1", kind="http", protocol=protocol
        )
        self.script = script
        self.hashes = hashes
        self.asked = 0
        self.connected = False
        self._player = RandomPlayer(seed)
        self._rng = random.Random(f"latency-{seed}")

    def ask(self, request: DecisionRequest) -> Reply:
        obs = request.observation
        time_limit_ms, time_bank_ms = request.time_limit_ms, request.time_bank_ms
        behaviour = self.script(self.asked)
        self.asked += 1
        sha = request.sha256 if self.hashes else None
        exchange = self._sent(request.body)
        if behaviour == "timeout":
            waited = time_limit_ms + time_bank_ms
            CLOCK.wait(waited)
            fault = f"no answer within {waited} ms"
            return Reply(None, Status.TIMEOUT, waited, None, fault, sha, exchange=exchange)
        if behaviour == "error":
            self._received(exchange, b"HTTP 500: oops", 7)
            fault = "the bot answered HTTP 500: oops"
            return Reply(None, Status.ERROR, 7, None, fault, sha, exchange=exchange)
        latency = {
            "late": time_limit_ms + min(time_bank_ms, 400),
            "slow": time_limit_ms + time_bank_ms + 1,
        }.get(behaviour, self._rng.randrange(1, 300))
        assert obs.decision is not None
        body = self._body(behaviour, obs)
        self._received(exchange, body, latency)
        note = read_note(body)
        try:
            move = parse_answer(obs.decision.kind, body, obs)
        except AnswerError as error:
            status, fault = error.fault.status, str(error)
            return Reply(None, status, latency, body.decode(), fault, sha, note, exchange)
        return Reply(move, Status.OK, latency, body.decode(), None, sha, note, exchange)

    def greet(self, origin_ns: int) -> None:
        """The ``hello`` before a match that started at ``origin_ns``, in the seat's info."""
        exchange = self._sent(encode(hello_request()))
        answer = hello_answer(self.info.name, self.info.version, self.info.protocol)
        self._received(exchange, encode(answer), 2)
        self.info = dataclasses.replace(self.info, hello=exchange.timing(origin_ns))

    def _sent(self, body: bytes) -> Exchange:
        """The request on the bot's connection: opened for the first one, then kept alive."""
        new, self.connected = not self.connected, True
        if new:
            CLOCK.now_ns += CONNECT_NS
        connection = Connection.NEW if new else Connection.REUSED
        connect_ns = CONNECT_NS if new else None
        return Exchange(CLOCK(), None, connection, connect_ns, None, len(body), 0, retried=False)

    def _received(self, exchange: Exchange, answer: bytes, latency_ms: int) -> None:
        CLOCK.wait(latency_ms)
        exchange.received_ns, exchange.bytes_received = CLOCK(), len(answer)

    def _body(self, behaviour: str, obs: Observation) -> bytes:
        assert obs.decision is not None
        kind, choices = obs.decision.kind, obs.decision.choices.mask
        if behaviour == "malformed":
            return b'{"card": "qs"}' if kind is DecisionKind.PLAY else encode({kind.value: "AH"})
        if behaviour == "wrong_kind":
            return b'{"expose": []}' if kind is DecisionKind.PLAY else b'{"card": "2C"}'
        if behaviour == "noted":
            return encode({**answer_of(self._player.choose(obs)), "note": "a random legal card"})
        if behaviour == "own_fallback":
            why = "the bot raised ZeroDivisionError: division by zero"
            return encode(fallback_answer(obs, why))
        if behaviour == "illegal":
            if kind is DecisionKind.PASS:
                return encode({"pass": obs.hand.names()[:2]})
            if kind is DecisionKind.EXPOSE:
                return encode({"expose": ["2C"]})
            wrong = (obs.hand.mask & ~choices) or ((1 << 52) - 1) & ~obs.hand.mask
            return encode({"card": card_name((wrong & -wrong).bit_length() - 1)})
        return encode(answer_of(self._player.choose(obs)))

    def hand_end(self, result: HandResult, obs: Observation, *, match_id: str) -> None:
        """Notifications are not recorded in the log."""

    def match_end(self, outcome: Outcome, *, match_id: str, seat: int) -> None:
        """Notifications are not recorded in the log."""


def greet(players: list[SeatPlayer]) -> int:
    """The match's start on the :data:`CLOCK`, then the ``hello`` to each scripted seat, as the
    arena sends them before a match."""
    origin = CLOCK()
    for player in players:
        if isinstance(player, ScriptedSeat):
            player.greet(origin)
    return origin


def always(behaviour: str) -> Script:
    return lambda n: behaviour


def in_turn(*behaviours: str, then: str = "ok") -> Script:
    """Each behaviour once, in order, then ``then`` for good."""
    return lambda n: behaviours[n] if n < len(behaviours) else then


def at_random(seed: int | str, fault_rate: float) -> Script:
    """Mostly ``ok``, sometimes ``late``, and each fault at random with ``fault_rate`` in all."""
    rng = random.Random(f"script-{seed}")

    def script(n: int) -> str:
        roll = rng.random()
        if roll < fault_rate:
            return rng.choice(FAULTS)
        return "late" if roll < fault_rate + 0.05 else "ok"

    return script


def mixed_players(seed: int, *, fault_rate: float = 0.06) -> list[SeatPlayer]:
    """Two house bots in-process (seats 0 and 2) and two bots "over HTTP": seat 1 commits every
    kind of fault at random, seat 3 is always legal but sometimes late."""
    return [
        house_seat(0, f"{seed}-0"),
        ScriptedSeat(1, at_random(seed, fault_rate), seed=f"{seed}-1"),
        house_seat(2, f"{seed}-2"),
        ScriptedSeat(3, at_random(seed + 1, 0.0), seed=f"{seed}-3"),
    ]


def forfeiting_players(seed: int) -> list[SeatPlayer]:
    """Seat 2 commits a fault at every decision, each kind in turn, so it forfeits."""
    faults = in_turn(*FAULTS, then="error")
    return [
        house_seat(0, f"{seed}-0"),
        ScriptedSeat(1, always("ok"), seed=f"{seed}-1"),
        ScriptedSeat(2, faults, seed=f"{seed}-2"),
        house_seat(3, f"{seed}-3"),
    ]


def record(
    rules: Rules,
    seed: int,
    players: list[SeatPlayer],
    *,
    time_control: TimeControl = TIME_CONTROL,
    match_id: str | None = None,
) -> MatchLog:
    """Play one match and return its log."""
    match_id = match_id or f"tournament-1:table-{seed}:match-1"
    label = f"t{seed}:d1"
    origin = greet(players)
    return play_match(
        Game(rules, seed=deal_seed(DEAL_SECRET, label)),
        players,
        match_id=match_id,
        deals=DealSource.committed(DEAL_SECRET, label),
        time_control=time_control,
        tournament_id="tournament-1",
        table_id=f"table-{seed}",
        started_at="2026-01-01T12:00:00Z",
        finished_at=lambda: "2026-01-01T12:03:00Z",
        origin_ns=origin,
    )


@cache
def every_log() -> dict[str, MatchLog]:
    """The matches of the round-trip tests, made once per test session: every profile with
    mixed seats and with a forfeit, and random profiles."""
    logs = {}
    for name, rules in PROFILES.items():
        for seed in (1, 2):
            logs[f"{name}-{seed}"] = record(rules, seed, mixed_players(seed, fault_rate=0.1))
        logs[f"{name}-forfeit"] = record(rules, 3, forfeiting_players(3))
    rng = random.Random(2026)
    for seed in range(10, 30):
        logs[f"random-{seed}"] = record(random_rules(rng), seed, mixed_players(seed))
    return logs


KEY = Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"gongzhu replay tests").digest())
DEAL_SECRET = hashlib.sha256(b"gongzhu replay tests: deals").digest()
"""The secret the tests' logs are dealt from (committed, as a tournament's are)."""
"""The tests' sealing key (derived from a public string: it seals test logs, nothing else)."""
KEY_ID = key_id_of(KEY.public_key())
PUBLIC_KEYS = {KEY_ID: KEY.public_key()}


def sealed(log: MatchLog) -> dict[str, Any]:
    return seal(log.to_json(), KEY, key_id=KEY_ID)


def reloaded(data: Any) -> Any:
    """``data`` through JSON text and back, as a stored log would be."""
    return json.loads(json.dumps(data))


def pretty(value: Any, *, width: int = 100, indent: int = 0, lead: int = 0) -> str:
    """JSON for reading: a value that fits on its line (after ``lead`` characters of key) stays
    on one line, so a trick (or, given the width, a decision) is one line."""
    flat = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    if indent + lead + len(flat) <= width or not isinstance(value, dict | list) or not value:
        return flat
    pad = " " * (indent + 2)
    inner = {"width": width, "indent": indent + 2}
    if isinstance(value, dict):
        items = [
            f"{pad}{json.dumps(k)}: {pretty(v, **inner, lead=len(k) + 4)}" for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + pretty(v, **inner) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"
