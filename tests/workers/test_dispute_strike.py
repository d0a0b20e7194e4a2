"""The remedy ``strike`` end to end on a real Redis with a real bot server on loopback, the jobs
run as the workers run them. The bot's ``hello`` comes back slowly (a slow network, as the
arena measures it), and on its plays of the second and third tricks it thinks for long: both
are timeouts. The arena reads an answer for one round trip past its deadline, so it keeps the
first whole, and by the evidence's answer check it could stand (its time, less the hello's
round trip, is within the allowance); nothing complete of the second came in that long, so it
could not. Striking the first voids the match once and continues it: the replacement re-enacts
the original's decisions up to the contested one, applies the recorded answer without fault,
plays on by asking the bots, and is recorded and rated once; it verifies with the ruling, and a
replacement whose prefix is not the original's does not."""

from __future__ import annotations

import dataclasses
import io
import json
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from arena import disputes
from arena.context import Arena
from arena.errors import InvalidError, WrongStateError
from arena.records import (
    Dispute,
    DisputeStatus,
    Format,
    MatchStatus,
    Rating,
    Remedy,
    TournamentSpec,
    TournamentStatus,
)
from arena.store import Store
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.protocol import Status, parse_answer
from bot_sdk.server import make_app
from referee import Card, Observation, Rules
from replays.cli import main as replays_cli
from replays.continuation import ContinuationError, check_continuation, decisions
from replays.integrity import digest, key_id_of, public_key_pem, unpack
from replays.log import DecisionRecord, MatchLog, TimeControl
from replays.rulings import RulingError, check_amended
from replays.upgrade import read_log
from replays.verify import replay, verify
from service import create_app
from tests.bot_sdk.bot_sdk_support import running
from tests.workers.conftest import arena_config, environment
from workers.jobs import apply_remedy, build_evidence, run_match, run_tournament

TC = TimeControl(decision_ms=500, bank_ms=500, fault_limit=5)
HELLO_S = 0.4
"""How long the bot's hello takes to come back: the round trip the arena measures, and takes
off each answer's time when it checks whether an answer was in time."""
THINKING_S = (1.15, 1.3)
"""How long the bot thinks on its first two plays with a choice: past the 1,000 ms allowed (the
limit and the full bank), but 0.75 s once the round trip is taken off (in time), and within the
round trip past the deadline that the arena still reads an answer for, so it is kept whole;
then past the 500 ms left after the first timeout emptied the bank and that round trip, by far
(nothing complete received)."""


class Pondering(LowestCard):
    """The lowest legal card at once, but where it has a choice, while :data:`thinking` lasts,
    the highest (not the arena's fallback) after thinking that long."""

    thinking: ClassVar[tuple[float, ...]] = ()

    def __init__(self) -> None:
        super().__init__()
        self.pondered = 0

    def play(self, obs: Observation) -> Card:
        if len(obs.legal) < 2 or self.pondered >= len(self.thinking):
            return super().play(obs)
        time.sleep(self.thinking[self.pondered])
        self.pondered += 1
        return obs.legal.highest()


def slow_hello(app: Callable[..., Iterable[bytes]]) -> Callable[..., Iterable[bytes]]:
    """``app`` (WSGI), whose answers to the ``hello`` wait :data:`HELLO_S` first."""

    def wrapped(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        environ["wsgi.input"] = io.BytesIO(body)
        if json.loads(body or b"{}").get("type") == "hello":
            time.sleep(HELLO_S)
        return app(environ, start_response)

    return wrapped


@dataclasses.dataclass(frozen=True)
class Played:
    arena: Arena
    tournament_id: str
    bot_id: str
    match_id: str
    log: MatchLog
    could: Dispute
    """The dispute on the late answer that could stand (evidence built)."""
    could_not: Dispute
    """The dispute on the late answer that could not stand (evidence built)."""
    hand: Dispute
    """A dispute on the whole hand (filed before any test voids the match)."""


@pytest.fixture(scope="module")
def played(redis_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    """A rated tournament of one match of one hand (the pondering bot and three house bots),
    played, and a dispute filed on each of the bot's two timeouts, their evidence built."""
    config = arena_config(redis_server, tmp_path_factory.mktemp("strike"))
    store = Store.from_config(config)
    store.redis.flushdb()
    with ExitStack() as stack, pytest.MonkeyPatch.context() as patch:
        for name, value in environment(config).items():
            patch.setenv(name, value)
        patch.setattr(Pondering, "thinking", THINKING_S)
        app = make_app(Pondering, "s3cret", fallback_on_timeout=False)
        url = stack.enter_context(running(slow_hello(app)))
        bot, _ = store.create_bot(
            name="pondering", endpoint=url, description="", contact="a@example.com",
            version="1", secret="s3cret",
        )  # fmt: skip
        spec = TournamentSpec(
            name="struck",
            participants=(bot.id, "house:easy", "house:normal", "house:hard"),
            format=Format(duplicate=False, matches_per_table=1, hands=1),
            rules=Rules(),
            time_control=TC,
        )
        tournament_id = store.create_tournament(spec)
        store.move_tournament(
            tournament_id, TournamentStatus.QUEUED, allowed_from=[TournamentStatus.CREATED]
        )
        run_tournament(tournament_id)
        (match,) = store.list_matches(page=1, per_page=10, tournament_id=tournament_id).items
        run_match(match.id)
        patch.setattr(Pondering, "thinking", ())  # from now on, the bot answers at once
        arena = Arena(config, store)
        log = _log(store, match.id)
        late = [i for i, r in enumerate(log.hands[0].decisions) if r.status is Status.TIMEOUT]
        assert len(late) == 2, [r.status for r in log.hands[0].decisions]
        statement = "my bot answered; the network was slow"
        filed = [
            disputes.file(
                arena, by=bot.id, match_id=match.id, hand=1, decision=i, statement=statement
            )
            for i in late
        ]
        for dispute in filed:
            build_evidence(dispute.id)
        hand = disputes.file(
            arena, by=bot.id, match_id=match.id, hand=1, decision=None, statement="the hand"
        )
        yield Played(arena, tournament_id, bot.id, match.id, log, filed[0], filed[1], hand)


def _log(store: Store, match_id: str) -> MatchLog:
    blob = store.replay_blob(match_id)
    assert blob is not None
    return read_log(unpack(blob))


def _check(store: Store, dispute: Dispute) -> dict[str, Any]:
    report = store.disputes.evidence(dispute.id)
    assert report is not None
    (item,) = report["decisions"]
    check: dict[str, Any] = item["answer_check"]
    return check


def _ratings(store: Store, bot_ids: Iterable[str]) -> dict[str, Rating]:
    return {b: store.rating_versions(b)[0] for b in bot_ids}


def test_a_strike_is_refused_where_the_answer_could_not_stand(played: Played) -> None:
    store = played.arena.store
    check = _check(store, played.could_not)
    assert (check["could_stand"], check["legal"], check["in_time"]) == (False, False, None)
    assert check["why"] == "no complete answer was received"
    with pytest.raises(WrongStateError, match="could not stand"):
        disputes.rule(
            played.arena, played.could_not.id, status=DisputeStatus.UPHELD,
            reason="struck", remedy=Remedy.STRIKE,
        )  # fmt: skip
    stored = store.disputes.get(played.could_not.id)
    assert stored is not None and stored.status is DisputeStatus.OPEN  # nothing was ruled


def test_a_strike_is_refused_on_a_whole_hand(played: Played) -> None:
    with pytest.raises(InvalidError, match="whole hand"):
        disputes.rule(
            played.arena, played.hand.id, status=DisputeStatus.UPHELD, reason="x",
            remedy=Remedy.STRIKE,
        )  # fmt: skip


def test_an_upheld_strike_continues_the_match_from_the_recorded_answer_once(
    played: Played, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    arena, store, original = played.arena, played.arena.store, played.log
    check = _check(store, played.could)
    assert (check["could_stand"], check["legal"], check["in_time"]) == (True, True, True)
    assert check["network_us"] >= HELLO_S * 1e6
    bots = [s.bot_id for s in original.seats]
    before_ratings = _ratings(store, bots)
    before_standings = {s.bot_id: s for s in store.standings(played.tournament_id)}
    ruled = disputes.rule(
        arena, played.could.id, status=DisputeStatus.UPHELD,
        reason="the answer came in time but for the network", remedy=Remedy.STRIKE,
    )  # fmt: skip
    replacement = f"{played.match_id}-strike"
    assert ruled.ruling is not None and ruled.ruling.replacement == replacement

    # the remedy's job: a worker dying after its transaction, the retry, a run again
    with monkeypatch.context() as patch:
        patch.setattr(disputes, "enqueue_match", _dies)
        with pytest.raises(SystemExit):
            apply_remedy(played.could.id)
    apply_remedy(played.could.id)
    apply_remedy(played.could.id)
    assert arena.queue.job_ids.count(f"match-{replacement}") == 1
    withdrawn = _ratings(store, bots)
    for bot in bots:
        assert withdrawn[bot].matches == before_ratings[bot].matches - 1
        assert withdrawn[bot].amended == 1
    voided = store.get_match(played.match_id)
    assert voided is not None and (voided.voided_by, voided.replaced_by) == (
        played.could.id,
        replacement,
    )

    run_match(replacement)
    run_match(replacement)  # recorded once
    done = store.get_match(replacement)
    assert done is not None and done.status is MatchStatus.DONE and done.replaces == voided.id
    tournament = store.get_tournament(played.tournament_id)
    assert tournament is not None and tournament.done == tournament.total == 2
    after_ratings = _ratings(store, bots)
    for bot in bots:  # the original's step withdrawn once, the replacement's added once
        assert after_ratings[bot].matches == before_ratings[bot].matches
        assert after_ratings[bot].amended == 1
    standings = {s.bot_id: s for s in store.standings(played.tournament_id)}
    for bot in bots:
        assert standings[bot].matches == before_standings[bot].matches
        assert standings[bot].amended == 1

    with pytest.raises(WrongStateError, match="not played here"):  # the strike's, not a new one
        disputes.file(
            arena, by=played.bot_id, match_id=replacement, hand=1, decision=played.could.decision,
            statement="again",
        )  # fmt: skip
    pages = create_app(arena.config).test_client()
    assert b"the fault struck" in pages.get(f"/disputes/{played.could.id}").data
    assert b'id="replaces"' in pages.get(f"/matches/{replacement}").data

    # the replacement: the original's decisions to the contested one, its answer, then live
    continued = _log(store, replacement)
    prefix = played.could.decision
    assert prefix is not None
    assert continued.continues is not None and continued.continues.prefix == prefix
    ours, theirs = decisions(continued), decisions(original)
    assert [_card(r) for r in ours[:prefix]] == [_card(r) for r in theirs[:prefix]]
    assert all(r.request_sha256 is None and r.timing is None for r in ours[: prefix + 1])
    contested, struck = theirs[prefix], ours[prefix]
    assert contested.status is Status.TIMEOUT and contested.answer is not None
    obs = next(o for _, i, _, o in replay(original) if i == prefix)
    answered = parse_answer(contested.kind, contested.answer.encode(), obs)
    assert contested.applied != answered  # the original applied the fallback
    assert (struck.status, struck.applied, struck.fault) == (Status.OK, answered, None)
    assert struck.latency_ms is not None and struck.latency_ms <= TC.decision_ms + TC.bank_ms
    seat = struck.seat
    assert continued.faults[seat] == original.faults[seat] - 2  # both late answers: none
    live = ours[prefix + 1 :]
    assert any(r.seat == seat and r.request_sha256 is not None for r in live)  # asked again
    assert verify(continued).ok

    # it verifies with the ruling, by the library and the command line
    public = arena.replay_key().public_key()
    keys = {key_id_of(public): public}
    ruling = store.disputes.sealed_ruling(played.could.id) or {}
    sealed_original = unpack(store.replay_blob(played.match_id) or b"")
    sealed_replacement = unpack(store.replay_blob(replacement) or b"")
    amended = check_amended(ruling, sealed_original, sealed_replacement, keys)
    assert (amended.counts, amended.remedy) == (replacement, "strike")
    files = {
        "ruling.json": ruling,
        "match.json": sealed_original,
        "strike.json": sealed_replacement,
    }
    for name, content in files.items():
        (tmp_path / name).write_text(json.dumps(content))
    (tmp_path / "key.pem").write_bytes(public_key_pem(public))
    key = ["--public-key", str(tmp_path / "key.pem")]
    checked = CliRunner().invoke(
        replays_cli,
        ["verify", str(tmp_path / "strike.json"), "--original", str(tmp_path / "match.json"), *key],
    )
    assert checked.exit_code == 0, checked.output
    assert f"continues  ok: match {played.match_id}: its first {prefix} decisions" in checked.output
    alone = CliRunner().invoke(replays_cli, ["verify", str(tmp_path / "strike.json"), *key])
    assert alone.exit_code == 0 and "continues  not checked" in alone.output
    shown = CliRunner().invoke(replays_cli, ["show", str(tmp_path / "strike.json")])
    assert f"continues match {played.match_id}" in shown.output
    ruled_cli = CliRunner().invoke(
        replays_cli,
        ["ruling", str(tmp_path / "ruling.json"), "--original", str(tmp_path / "match.json"),
         "--replacement", str(tmp_path / "strike.json"), *key],
    )  # fmt: skip
    assert ruled_cli.exit_code == 0 and f"match {replacement}'s" in ruled_cli.output

    # a replacement whose prefix is not the original's does not, even sealed by the arena
    sha = digest(sealed_original)
    for tampered in _tampered(continued, prefix):
        with pytest.raises(ContinuationError):
            check_continuation(tampered, original, sha)
        with pytest.raises(RulingError, match="the replacement"):
            check_amended(ruling, sealed_original, arena.sealed(tampered), keys)
    (tmp_path / "tampered.json").write_text(json.dumps(arena.sealed(tampered)))
    for log_file, voided_file in (("tampered.json", "match.json"), ("match.json", "match.json")):
        refused = CliRunner().invoke(
            replays_cli,
            ["verify", str(tmp_path / log_file), "--original", str(tmp_path / voided_file), *key],
        )
        assert refused.exit_code == 1 and "continues  FAILED" in refused.output, refused.output


def _dies(*args: object) -> None:
    raise SystemExit("the worker died before queuing the replacement")


def _card(record: DecisionRecord) -> tuple[object, ...]:
    return record.seat, record.kind, record.applied, record.status


def _tampered(log: MatchLog, prefix: int) -> Iterator[MatchLog]:
    """``log`` claiming a prefix one shorter or longer (its decisions no longer line up), and
    ``log`` with one re-enacted decision's latency changed (which the referee cannot see: it
    stays within the decision's limit)."""
    assert log.continues is not None
    for moved in (prefix - 1, prefix + 1):
        header = dataclasses.replace(log.continues, prefix=moved)
        yield dataclasses.replace(log, continues=header)
    hand = log.hands[0]
    index = next(
        i
        for i, r in enumerate(hand.decisions[:prefix])
        if r.latency_ms is not None and r.latency_ms < TC.decision_ms
    )
    record = hand.decisions[index]
    assert record.latency_ms is not None
    changed = list(hand.decisions)
    changed[index] = dataclasses.replace(record, latency_ms=record.latency_ms + 1)
    tampered = dataclasses.replace(
        log, hands=(dataclasses.replace(hand, decisions=tuple(changed)),)
    )
    assert verify(tampered).ok
    yield tampered
