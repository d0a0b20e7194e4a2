"""Fair deals, tried as an outsider would (docs/REPLAYS.md, fair deals): a real tournament played
by real ``python -m workers worker`` processes against bots served on loopback.

- The attack that predicted every hand of the old scheme (seeds spelled out by the match id),
  run on everything the bots were sent and everything public while the tournament ran: no hand
  is predicted. The same attack on hands dealt the old way predicts them all.
- The secret and every derived seed are nowhere in Redis, the workers' output, the API's and
  pages' answers, or the bots' messages before the reveal.
- The embargo: a finished rotation's replay is refused (409) to the public and to a bot's
  owner while another rotation of its deal is unfinished, served to the operator, and open
  afterwards; the revealed secret matches the commitment and rebuilds every deal.
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack
from io import BytesIO
from pathlib import Path
from typing import Any, ClassVar

import pytest
import redis
from click.testing import CliRunner
from flask.testing import FlaskClient
from rq import Queue

from arena.config import Config
from arena.queue import enqueue_tournament
from arena.records import Format, TournamentSpec, TournamentStatus
from arena.store import Store
from bot_sdk import Bot
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.server import make_app
from referee import Card, CardSet, Observation, Rules, deal_from_seed
from replays.cli import main as replays_cli
from replays.deals import commitment_of, deal_seed, parse_secret
from replays.integrity import unpack
from replays.log import TimeControl
from replays.upgrade import read_log
from replays.verify import verify
from service import create_app
from service.guard import json_strings
from tests.bot_sdk.bot_sdk_support import running
from tests.workers.conftest import ROOT, environment, stop_workers
from tests.workers.crashes import wait_for

OPERATOR = "operator-token-of-the-fair-deal-tests"
Message = dict[str, Any]
Seen = tuple[str, int, int, CardSet]
"""A hand a bot was dealt, as it saw it: match id, hand number, seat, its 13 cards."""


class Deliberate(LowestCard):
    """The lowest card after 150 ms: one match takes about two seconds."""

    name = "deliberate"
    delay_s: ClassVar[float] = 0.15

    def play(self, obs: Observation) -> Card:
        time.sleep(self.delay_s)
        return super().play(obs)


class Spy:
    """WSGI middleware keeping every message a bot server is sent, before the bot reads it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.messages: list[Message] = []
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start: Any) -> Any:
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        with self._lock:
            self.messages.append(json.loads(body))
        environ["wsgi.input"] = BytesIO(body)
        return self.app(environ, start)


@dataclasses.dataclass
class Arena:
    """The tournament's world: the store, the API, the bots' spies and owner tokens."""

    config: Config
    store: Store
    api: FlaskClient
    spies: list[Spy]
    tokens: dict[str, str]
    worker_log: Path
    tournament_id: str = ""

    def messages(self) -> list[Message]:
        return [m for spy in self.spies for m in spy.messages]


def _worker(config: Config, log: Path) -> subprocess.Popen[bytes]:
    """A worker whose output (stdout and stderr) goes to ``log``, to be searched later."""
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "workers", "worker"],
            cwd=ROOT,
            env=environment(config),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


@pytest.fixture
def arena(config: Config, store: Store, tmp_path: Path) -> Iterator[Callable[..., Arena]]:
    """Builds the arena: four registered bots (the first one slow when asked) served behind
    spies, the API on the same Redis, and ``workers`` worker processes."""
    with ExitStack() as stack:
        workers: list[subprocess.Popen[bytes]] = []
        stack.callback(stop_workers, workers)

        def build(*, workers_count: int, slow_first: bool) -> Arena:
            served = dataclasses.replace(config, operator_token=OPERATOR)
            spies, tokens = [], {}
            for n in range(4):
                secret = f"secret-{n}"
                bot: type[Bot] = Deliberate if slow_first and n == 0 else LowestCard
                spy = Spy(make_app(bot, secret))
                url = stack.enter_context(running(spy))
                created, token = store.create_bot(
                    name=f"bot-{n}", endpoint=url, description="", contact="", version="1",
                    secret=secret,
                )  # fmt: skip
                spies.append(spy)
                tokens[created.id] = token
            log = tmp_path / "workers.log"
            workers.extend(_worker(config, log) for _ in range(workers_count))
            return Arena(config, store, create_app(served).test_client(), spies, tokens, log)

        yield build


def _start(arena: Arena, *, matches_per_table: int, hands: int) -> str:
    spec = TournamentSpec(
        name="fair deals",
        participants=tuple(arena.tokens),
        format=Format(duplicate=True, matches_per_table=matches_per_table, hands=hands),
        rules=Rules.with_variants("pass_3"),
        time_control=TimeControl(2000, 10_000, 5),
    )
    tournament_id = arena.store.create_tournament(spec)
    arena.store.move_tournament(
        tournament_id, TournamentStatus.QUEUED, allowed_from=[TournamentStatus.CREATED]
    )
    enqueue_tournament(Queue(arena.config.queue_name, connection=arena.store.redis), tournament_id)
    arena.tournament_id = tournament_id
    return tournament_id


def _status(arena: Arena) -> tuple[TournamentStatus, int, int]:
    found = arena.store.get_tournament(arena.tournament_id)
    assert found is not None
    return found.status, found.done, found.total


# -- what the public sees -----------------------------------------------------------------------


def _public_answers(arena: Arena, headers: dict[str, str] | None = None) -> list[str]:
    """Every API answer and page about the tournament that a visitor (or, with ``headers``, a
    bot's owner) can ask for now, as text."""
    api, tid = arena.api, arena.tournament_id
    paths = [
        "/api/tournaments",
        f"/api/tournaments/{tid}",
        f"/api/tournaments/{tid}/standings",
        f"/api/matches?tournament={tid}&per_page=100",
        "/api/ladder",
        "/",
        f"/tournaments/{tid}",
    ]
    listed = api.get(f"/api/matches?tournament={tid}&per_page=100").get_json()["items"]
    for match in listed:
        paths += [f"/api/matches/{match['id']}", f"/api/matches/{match['id']}/replay"]
        paths += [f"/matches/{match['id']}"]
    paths += [f"/bots/{bot_id}" for bot_id in arena.tokens]
    texts = [api.get(path, headers=headers).get_data(as_text=True) for path in paths]
    for match in listed:
        texts.append(
            api.post(f"/api/matches/{match['id']}/verify", headers=headers).get_data(as_text=True)
        )
    return texts


def _redis_contents(client: redis.Redis) -> str:
    """Everything stored in Redis, every value of every key, packed logs unpacked."""
    parts: list[str] = []

    def text(value: bytes) -> str:
        try:
            return json.dumps(unpack(value))
        except (ValueError, zlib.error):
            return value.decode("utf-8", "replace")

    for key in client.scan_iter(count=1000):
        kind = client.type(key).decode()
        parts.append(key.decode())
        if kind == "string":
            parts.append(text(client.get(key) or b""))
        elif kind == "hash":
            parts += [text(k) + "=" + text(v) for k, v in client.hgetall(key).items()]
        elif kind == "list":
            parts += [text(v) for v in client.lrange(key, 0, -1)]
        elif kind == "set":
            parts += [text(v) for v in client.smembers(key)]
        elif kind == "zset":
            parts += [text(v) for v in client.zrange(key, 0, -1)]
        elif kind == "stream":
            parts += [repr(entry) for entry in client.xrange(key)]
    return "\n".join(parts)


# -- the attack ---------------------------------------------------------------------------------


def dealt_hands(messages: Iterable[Message]) -> list[Seen]:
    """The hand each bot was dealt in each hand of each match: its cards in the first decision
    it was sent in that hand (with ``pass_3`` that is the pass, before any card moved)."""
    seen: dict[tuple[str, int, int], CardSet] = {}
    for message in messages:
        if message.get("type") != "decision":
            continue
        obs = message["observation"]
        key = (message["match_id"], int(obs["hand_number"]), int(obs["seat"]))
        seen.setdefault(key, CardSet.parse(obs["hand"]))
    return [(m, h, s, cards) for (m, h, s), cards in seen.items()]


_MATCH_ID = re.compile(r"^(?P<tid>.+)-t(?P<t>\d+)-d(?P<d>\d+)-r(?P<r>\d+)$")


def candidate_seeds(public: Iterable[str]) -> set[str]:
    """Every seed the old scheme, or an obvious variant of it, makes of public strings: the
    strings themselves, and from each match id ``{tid}-t{t}-d{d}-r{r}`` the old deal seed
    ``{tid}:t{t}:d{d}`` with its neighbours (the match id, the label, with and without the
    rotation, with ``-`` for ``:``)."""
    seeds: set[str] = set()
    for value in public:
        seeds.add(value)
        found = _MATCH_ID.match(value)
        if found is None:
            continue
        tid, t, d, r = found["tid"], found["t"], found["d"], found["r"]
        label = f"t{t}:d{d}"
        seeds |= {
            f"{tid}:{label}",
            f"{tid}:{label}:r{r}",
            f"{tid}-t{t}-d{d}",
            f"{tid}:t{t}",
            f"{tid}:table-{t}:deal-{d}",
            label,
            f"{tid}:{label}".replace(":", "-"),
            tid,
        }
    return seeds


def predicted(hands: Iterable[Seen], seeds: set[str]) -> int:
    """How many of the ``hands`` some candidate seed deals exactly, in their hand and seat."""
    count = 0
    for _, number, seat, cards in hands:
        if any(deal_from_seed(seed, number)[seat] == cards.mask for seed in seeds):
            count += 1
    return count


def _public_strings(texts: Iterable[str]) -> set[str]:
    found: set[str] = set()
    for text in texts:
        try:
            found |= set(json_strings(json.loads(text)))
        except ValueError:
            found |= set(re.findall(r"[\w:.-]{3,200}", text))  # a page: its words and ids
    return found


def old_scheme(hands: Iterable[Seen]) -> list[Seen]:
    """The same hands as the old scheme dealt them: from ``{tournament}:t{table}:d{deal}``."""
    dealt = []
    for match_id, number, seat, _ in hands:
        found = _MATCH_ID.match(match_id)
        assert found is not None
        seed = f"{found['tid']}:t{found['t']}:d{found['d']}"
        dealt.append((match_id, number, seat, CardSet(deal_from_seed(seed, number)[seat])))
    return dealt


# -- the tests ----------------------------------------------------------------------------------


def test_nothing_a_bot_receives_or_the_public_sees_rebuilds_a_deal(
    arena: Callable[..., Arena],
) -> None:
    world = arena(workers_count=2, slow_first=False)
    tid = _start(world, matches_per_table=2, hands=2)
    answers: list[str] = []
    snapshots: list[str] = []
    deadline = time.monotonic() + 120
    while True:  # while it runs, again and again
        seen = _public_answers(world)
        seen += _public_answers(world, {"Authorization": f"Bearer {next(iter(world.tokens))}"})
        snapshot = _redis_contents(world.store.redis)
        if _status(world)[0] is TournamentStatus.DONE:
            break  # this round may have seen the end, and the reveal: it is not counted
        answers += seen
        snapshots.append(snapshot)
        assert time.monotonic() < deadline, "the tournament did not finish"
        time.sleep(0.2)
    assert snapshots, "the tournament ended before anything was read"
    stored = "\n".join(snapshots)
    hands = dealt_hands(world.messages())
    assert len(hands) == 8 * 2 * 4  # 8 matches (2 deals x 4 rotations), 2 hands, 4 bots

    public = _public_strings(answers) | set(json_strings(world.messages()))
    seeds = candidate_seeds(public)
    assert any(_MATCH_ID.match(s) for s in public)  # the match ids were there to be tried
    assert predicted(hands, seeds) == 0
    assert predicted(old_scheme(hands), seeds) == len(hands)  # the attack works on the old deals

    secret = world.store.deal_secret(tid)
    hidden = [secret.hex(), *(deal_seed(secret, f"t1:d{d}") for d in (1, 2))]
    worker_output = world.worker_log.read_text("utf-8", "replace")
    sent = json.dumps(world.messages())
    for value in hidden:
        for where, text in [("redis", stored), ("workers' output", worker_output), ("bots", sent)]:
            assert value not in text, f"{value} found in {where}"
        assert not any(value in answer for answer in answers), f"{value} in an answer"


def test_a_rotations_replay_is_embargoed_until_its_deal_is_played_then_the_secret_checks_it(
    arena: Callable[..., Arena], tmp_path: Path
) -> None:
    world = arena(workers_count=1, slow_first=True)
    tid = _start(world, matches_per_table=1, hands=1)
    first = f"{tid}-t1-d1-r1"
    owner = {"Authorization": f"Bearer {next(iter(world.tokens))}"}
    operator = {"Authorization": f"Bearer {OPERATOR}"}
    api = world.api
    commitment = api.get(f"/api/tournaments/{tid}").get_json()["deal_commitment"]
    assert re.fullmatch("[0-9a-f]{64}", commitment)

    wait_for(lambda: _status(world)[1] >= 1, 60, "the first rotation")
    status, done, total = _status(world)
    assert status is TournamentStatus.RUNNING and done < total  # rotations 2-4 to play
    for headers in (None, owner):
        refused = api.get(f"/api/matches/{first}/replay", headers=headers)
        assert refused.status_code == 409, refused.get_data(as_text=True)[:300]
        body = refused.get_json()
        assert body["error"] == "embargoed"
        assert "this deal is still being played in tournament" in body["message"]
        assert api.post(f"/api/matches/{first}/verify", headers=headers).status_code == 409
    page = api.get(f"/matches/{first}").get_data(as_text=True)
    assert 'id="embargo"' in page and 'id="viewer"' not in page
    served = api.get(f"/api/matches/{first}/replay", headers=operator)
    assert served.status_code == 200
    assert api.get(f"/api/tournaments/{tid}").get_json()["deal_secret"] is None

    wait_for(lambda: _status(world)[0] is TournamentStatus.DONE, 60, "the tournament")
    hellos = [m for m in world.messages() if m["type"] == "hello" and m["match_id"]]
    assert len(hellos) == 4 * 4 and {m["deal_commitment"] for m in hellos} == {commitment}
    record = api.get(f"/api/tournaments/{tid}").get_json()
    secret = parse_secret(record["deal_secret"])
    assert commitment_of(secret) == commitment
    assert secret.hex() in api.get(f"/tournaments/{tid}").get_data(as_text=True)
    key = tmp_path / "arena.pem"
    key.write_bytes(api.get("/api/replays/public-key").get_data())
    for rotation in range(1, 5):
        match_id = f"{tid}-t1-d1-r{rotation}"
        opened = api.get(f"/api/matches/{match_id}/replay")
        assert opened.status_code == 200
        log = read_log(opened.get_json())
        assert log.deals.commitment == commitment and log.deals.label == "t1:d1"
        result = verify(log, secret=secret)
        assert result.ok and result.deals_checked, result.discrepancy
        checked = api.post(f"/api/matches/{match_id}/verify").get_json()
        assert checked["ok"] and checked["deals_checked"]
        path = tmp_path / f"{rotation}.json"
        path.write_bytes(opened.get_data())
        command = ["verify", str(path), "--secret", secret.hex(), "--public-key", str(key)]
        outcome = CliRunner().invoke(replays_cli, command)
        assert outcome.exit_code == 0, outcome.output
        assert "deals      ok: every deal follows from the committed secret" in outcome.output
