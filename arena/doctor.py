"""The bot doctor: probe an endpoint the way the arena will call it, and say what is wrong.

Everything goes through the arena's own client (:class:`~arena.transport.BotTransport`,
:class:`~arena.http_seat.HttpSeat`) and signing, so a bot that passes here behaves in the
arena. The checks, in order:

1. ``hello``: the signed handshake is answered with the protocol, a name and a version.
2. ``bad signature``: a request signed with another secret is refused with ``401`` (a pull
   bot leaves it unanswered).
3. ``stale timestamp``: a request correctly signed but 10 minutes old is refused the same way.
4. ``decisions``: one hand of each rules profile of :data:`PROFILES`, the bot in all four
   seats (as :func:`arena.match_loop.play_match` plays it, notifications included): every pass,
   expose and play answered legally within the time limit, and never with the bot's own
   fallback (a ``fallback:`` note). Probing stops after the first profile with a problem.
5. ``repeated decision``: the same decision sent three times, with one ``decision_id``, gets
   the same answer each time (the arena resends a decision whose answer it did not receive).
6. ``concurrent seats``: four seats' decisions sent at once are all answered legally in time.
7. ``latency``: percentiles of every decision's time against the limit.

:func:`examine` (a push bot's endpoint) and :func:`examine_pull` (a connected pull bot, through
its stream) return a :class:`Report`; ``gongzhu doctor`` prints it, and
``POST /api/bots/{id}/doctor`` answers it as JSON, to the bot's owner: its messages name the
endpoint (a match's never do).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from secrets import token_hex
from typing import TYPE_CHECKING, Any

from arena.http_seat import Channel, HttpSeat
from arena.match_loop import play_match
from arena.transport import (
    BotTransport,
    Clock,
    DeadlineError,
    HelloError,
    TooLargeError,
    TransportError,
    UnreachableError,
    excerpt,
    with_secret_hint,
)
from bot_sdk.protocol import (
    PROTOCOL,
    AnswerError,
    DecisionRequest,
    ProtocolVersion,
    Status,
    decision_id,
    encode,
    hello_request,
    is_fallback_note,
    parse_answer,
)
from referee import Game, Rules
from replays.deals import DealSource
from replays.log import DecisionRecord, SeatInfo, TimeControl

if TYPE_CHECKING:
    from arena.store.mailbox import Mailbox

PROFILES: dict[str, Rules] = {
    "standard": Rules(fixed_hands=1),
    "pass_3 (to the next seat), qd_bonus": Rules.with_variants("pass_3", "qd_bonus", fixed_hands=1),
    "pass_3 across, sequential_exposure": Rules.with_variants(
        "pass_3", "sequential_exposure", pass_direction="across", fixed_hands=1
    ),
    "lead_2c, hearts_must_break, no_exposure": Rules.with_variants(
        "lead_2c", "hearts_must_break", "no_exposure", fixed_hands=1
    ),
    "teams, dealer_left_leads, no_spade_lead_first_trick": Rules.with_variants(
        "teams", "dealer_left_leads", "no_spade_lead_first_trick", fixed_hands=1
    ),
}
"""One hand of each: every kind of decision, and the variants that change what is legal."""
STALE_S = 600
"""How old the stale request's timestamp is: twice the protocol's tolerance."""
WRONG_SECRET = "not-the-bots-secret"
PULL_REFUSAL_WAIT_S = 2.0
"""How long a pull bot is given to (wrongly) answer a request it should leave unanswered."""
FAULTS_BEFORE_STOPPING = 3
"""A seat that faults this often in the probe is not asked again (its hand is auto-played)."""
_REPEATS = 3


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


@dataclass
class Report:
    """The report card: each check, and the decisions' latencies."""

    endpoint: str
    time_limit_ms: int
    checks: list[Check] = field(default_factory=list)
    latencies_ms: list[int] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)

    @property
    def latency_ms(self) -> dict[str, int] | None:
        """The percentiles of the probed decisions' latencies; None when none was answered."""
        return percentiles(self.latencies_ms)

    def add(self, name: str, ok: bool, detail: str) -> None:
        self.checks.append(Check(name, ok, detail))

    def to_json(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint,
            "ok": self.ok,
            "time_limit_ms": self.time_limit_ms,
            "checks": [asdict(check) for check in self.checks],
            "latency_ms": self.latency_ms,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Report:
        """The report :meth:`to_json` made (as the arena's API answers it)."""
        report = cls(data["endpoint"], data["time_limit_ms"])
        for check in data["checks"]:
            report.add(check["name"], check["ok"], check["detail"])
        return report

    def text(self) -> str:
        """The report card as lines for a terminal."""
        width = max(len(check.name) for check in self.checks)
        lines = [f"gongzhu doctor: {self.endpoint} (time limit {self.time_limit_ms} ms)"]
        for check in self.checks:
            mark = "ok  " if check.ok else "FAIL"
            lines.append(f"  {check.name:<{width}}  {mark}  {check.detail}")
        failed = sum(not check.ok for check in self.checks)
        lines.append(
            "all checks passed" if not failed else f"{failed} of {len(self.checks)} failed"
        )
        return "\n".join(lines) + "\n"


def percentiles(values: Sequence[int]) -> dict[str, int] | None:
    """The 50th, 90th and 99th percentile (nearest rank) and the maximum of ``values``.

    >>> percentiles([5, 1, 9, 3])
    {'p50': 3, 'p90': 9, 'p99': 9, 'max': 9}
    """
    if not values:
        return None
    ordered = sorted(values)

    def rank(p: int) -> int:
        return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]

    return {"p50": rank(50), "p90": rank(90), "p99": rank(99), "max": ordered[-1]}


def examine(
    endpoint: str,
    secrets: Sequence[str],
    *,
    time_limit_ms: int = 1000,
    allow_private: bool = False,
    hello_timeout_s: float = 5.0,
    secret_hint: str = "",
) -> Report:
    """Probe the push bot at ``endpoint``, signing with ``secrets`` (see the module's doc).
    ``secret_hint`` follows the hello's failure when the bot refuses its signature: which
    secret was used and what to do about it."""

    def channel(signing: Sequence[str], now: Clock) -> Channel:  # for its owner: named
        return BotTransport(endpoint, signing, allow_private=allow_private, now=now, named=True)

    return _Probe(
        endpoint, list(secrets), time_limit_ms, hello_timeout_s, channel, secret_hint=secret_hint
    ).report()


def examine_pull(
    mailbox: Mailbox,
    bot_id: str,
    secrets: Sequence[str],
    *,
    time_limit_ms: int = 1000,
    hello_timeout_s: float = 5.0,
    secret_hint: str = "",
) -> Report:
    """Probe the pull bot ``bot_id`` through its stream, signing with ``secrets``
    (``secret_hint`` as for :func:`examine`)."""
    # Imported here: the pull transport stands on the store (Redis), which a bot author's install
    # (``pip install .``) does not have, and ``gongzhu doctor --url`` probes a push bot there.
    from arena.pull_transport import PullTransport  # noqa: PLC0415

    def channel(signing: Sequence[str], now: Clock) -> Channel:
        return PullTransport(mailbox, bot_id, list(signing), now=now)

    shown = f"pull bot {bot_id}"
    return _Probe(
        shown, list(secrets), time_limit_ms, hello_timeout_s, channel, pull=True,
        secret_hint=secret_hint,
    ).report()  # fmt: skip


@dataclass
class _Probe:
    endpoint: str
    secrets: list[str]
    time_limit_ms: int
    hello_timeout_s: float
    open: Callable[[Sequence[str], Clock], Channel]
    """A channel to the bot that signs with the given secrets at the given time."""
    pull: bool = False
    """A pull bot refuses a request by leaving it unanswered."""
    run: str = field(default_factory=lambda: f"doctor-{token_hex(4)}")
    """Match ids never seen before, as the arena's are."""
    protocol: ProtocolVersion = PROTOCOL
    """The protocol version the bot chose in the ``hello``: the decisions are sent in it."""
    secret_hint: str = ""
    """Said after the hello's failure when the bot may have refused its signature."""

    def report(self) -> Report:
        report = Report(self.endpoint, self.time_limit_ms)
        if not self.hello(report):
            return report  # nothing else can work
        self.refusals(report)
        self.decisions(report)
        self.repeated(report)
        self.concurrent(report)
        report.add(*_latency(report.latencies_ms, self.time_limit_ms))
        return report

    @contextmanager
    def transport(self, secrets: Sequence[str], now: Clock) -> Iterator[Channel]:
        client = self.open(secrets, now)
        try:
            yield client
        finally:
            client.close()

    def hello(self, report: Report) -> bool:
        with self.transport(self.secrets, time.time) as client:
            try:
                info = client.hello(hello_request(), self.hello_timeout_s)
            except HelloError as error:
                report.add("hello", False, with_secret_hint(error, self.secret_hint))
                return False
        report.add("hello", True, f"{info.name} {info.version}")
        self.protocol = info.protocol
        return True

    def refusals(self, report: Report) -> None:
        cases = [
            ("bad signature", [WRONG_SECRET], time.time, "signed with another secret"),
            ("stale timestamp", self.secrets, lambda: time.time() - STALE_S, "10 minutes old"),
        ]
        wait_s = PULL_REFUSAL_WAIT_S if self.pull else self.hello_timeout_s
        for name, secrets, now, what in cases:
            with self.transport(secrets, now) as client:
                try:
                    code, _, content = client.post(encode(hello_request()), wait_s)
                except DeadlineError as error:
                    if self.pull:
                        report.add(name, True, f"a hello {what} is left unanswered")
                    else:
                        report.add(name, False, f"a hello {what} got no answer: {error!r}"[:300])
                    continue
                except (TooLargeError, UnreachableError, TransportError) as error:
                    report.add(name, False, f"a hello {what} got no answer: {error!r}"[:300])
                    continue
            if self.pull:
                report.add(
                    name,
                    False,
                    f"a hello {what} was answered ({excerpt(content)}): leave a request whose "
                    "signature does not verify unanswered, or anyone could feed your bot "
                    "requests (docs/PROTOCOL.md, Signing)",
                )
            elif code == 401:
                report.add(name, True, f"a hello {what} is refused with 401")
            else:
                report.add(
                    name,
                    False,
                    f"a hello {what} was answered HTTP {code} ({excerpt(content)}): refuse it "
                    "with 401, or anyone can send your bot requests (docs/PROTOCOL.md, Signing)",
                )

    def decisions(self, report: Report) -> None:
        tc = TimeControl(self.time_limit_ms, 0, FAULTS_BEFORE_STOPPING)
        counts = {"pass": 0, "expose": 0, "play": 0}
        for number, (label, rules) in enumerate(PROFILES.items(), start=1):
            with _seats(self, 4) as players:
                log = play_match(
                    Game(rules, seed=f"doctor:{label}"),
                    players,
                    match_id=f"{self.run}:profile-{number}",
                    deals=DealSource.practice(f"doctor:{label}"),
                    time_control=tc,
                    rated=False,
                )
            records = [d for hand in log.hands for d in hand.decisions]
            asked = [d for d in records if d.status is not Status.FORFEIT_AUTOPLAY]
            report.latencies_ms += [d.latency_ms for d in asked if d.latency_ms is not None]
            for record in asked:
                counts[record.kind.value] += 1
            problem = next((d for d in asked if _problem(d)), None)
            if problem is not None:
                report.add("decisions", False, f"{label}: {_problem(problem)}")
                return
        shown = ", ".join(f"{n} {kind}" for kind, n in counts.items())
        report.add(
            "decisions",
            True,
            f"{shown} decisions in {len(PROFILES)} rules profiles, all legal and in time",
        )

    def repeated(self, report: Report) -> None:
        game = Game(Rules.with_variants("pass_3"), seed="doctor:repeat")
        obs = game.observation(game.pending[0].seat)
        assert obs.decision is not None
        match_id = f"{self.run}:repeat"
        request = DecisionRequest(
            obs,
            match_id=match_id,
            decision_id=decision_id(match_id, 1, 0),
            time_limit_ms=self.time_limit_ms,
            time_bank_ms=0,
            protocol=self.protocol,
        )
        body, limit_ms = request.body, self.time_limit_ms
        moves = []
        with self.transport(self.secrets, time.time) as client:
            for _ in range(_REPEATS):
                try:
                    code, _, content = client.post(body, limit_ms / 1000)
                    if code != 200:
                        raise AnswerError(f"answered HTTP {code}: {excerpt(content)}")
                    moves.append(parse_answer(obs.decision.kind, content, obs))
                except DeadlineError:
                    report.add("repeated decision", False, f"no answer within {limit_ms} ms")
                    return
                except (
                    TooLargeError,
                    UnreachableError,
                    TransportError,
                    AnswerError,
                ) as error:
                    report.add("repeated decision", False, f"a repeat failed: {error}"[:300])
                    return
        if len(set(moves)) == 1:
            report.add(
                "repeated decision", True, f"one decision_id sent {_REPEATS} times, one answer"
            )
        else:
            shown = "; ".join(str(m) for m in moves)
            report.add(
                "repeated decision",
                False,
                f"one decision_id sent {_REPEATS} times got different answers ({shown}): answer "
                "a repeated decision_id with the answer it was given (PROTOCOL.md, Transport)",
            )

    def concurrent(self, report: Report) -> None:
        game = Game(Rules.with_variants("pass_3"), seed="doctor:concurrent")
        pending = game.pending  # the four seats pass at once
        with _seats(self, 4) as players, ThreadPoolExecutor(4) as pool:
            replies = list(
                pool.map(
                    lambda d: players[d.seat].ask(
                        DecisionRequest(
                            game.observation(d.seat),
                            match_id=f"{self.run}:concurrent",
                            decision_id=decision_id(f"{self.run}:concurrent", 1, d.seat),
                            time_limit_ms=self.time_limit_ms,
                            time_bank_ms=0,
                            protocol=self.protocol,
                        )
                    ),
                    pending,
                )
            )
        late = [r for r in replies if r.status is Status.OK and r.latency_ms > self.time_limit_ms]
        bad = [r for r in replies if r.status is not Status.OK] + late
        if not bad:
            slowest = max(r.latency_ms for r in replies)
            report.add(
                "concurrent seats",
                True,
                f"{len(replies)} at once, all answered (slowest {slowest} ms)",
            )
        else:
            first = bad[0]
            report.add(
                "concurrent seats",
                False,
                f"of {len(replies)} decisions at once, {len(bad)} failed: "
                f"{first.fault or f'{first.latency_ms} ms'}",
            )


@contextmanager
def _seats(probe: _Probe, count: int) -> Iterator[list[HttpSeat]]:
    players = [
        HttpSeat(
            SeatInfo(s, "doctor", "doctor", protocol=probe.protocol),
            probe.open(probe.secrets, time.time),
        )
        for s in range(count)
    ]
    try:
        yield players
    finally:
        for player in players:
            player.close()


def _problem(record: DecisionRecord) -> str | None:
    """What is wrong with one probed decision, or None."""
    where = f"{record.kind.value} decision {record.decision_id} (seat {record.seat})"
    if record.status is not Status.OK:
        return f"{where}: {record.status.value}: {record.fault}"
    if is_fallback_note(record.note):
        return f"{where} was answered with the bot's own fallback: {record.note}"
    return None


def _latency(latencies: Sequence[int], limit_ms: int) -> tuple[str, bool, str]:
    found = percentiles(latencies)
    if found is None:
        return "latency", False, "no decision was answered"
    shown = ", ".join(f"{k} {v} ms" for k, v in found.items())
    if found["max"] > limit_ms:
        return "latency", False, f"{shown}: over the {limit_ms} ms limit"
    return "latency", True, f"{shown} (limit {limit_ms} ms)"
