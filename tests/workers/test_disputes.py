"""Disputes end to end on a real Redis with real bot servers on loopback, the jobs run as the
workers run them: a bot that answers at once behind a slow network (a TCP shim holding its
answer back) times out; its owner files a dispute; the evidence shows when the request went
out, when the answer came in and which deadline expired; an upheld ruling voids the match and
plays it again once, its standings and ratings changed once however often (or however
interrupted) the remedy's job runs; a rejected ruling changes nothing; another owner's dispute
is refused; and the amended result verifies with the ruling.

The tournament is played once for the module: each test starts from it as it was played (the
database and the archive put back, a fresh bot behind the same slow network)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rq.job import Job

from arena import disputes, ratings
from arena.config import Config
from arena.context import Arena
from arena.errors import AlreadyDisputedError, NotAllowedError, WrongStateError
from arena.queue import MATCH_RETRIES, match_job_id
from arena.records import (
    OPERATOR,
    DisputeStatus,
    Format,
    MatchStatus,
    Rating,
    Remedy,
    TournamentSpec,
    TournamentStatus,
)
from arena.store import Store, keys
from arena.store.rerating import rerate
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.protocol import Status
from bot_sdk.server import make_app
from referee import Rules
from replays.cli import main as replays_cli
from replays.integrity import key_id_of, public_key_pem, unpack
from replays.log import MatchLog, TimeControl
from replays.rulings import RulingError, check_amended
from replays.upgrade import read_log
from service import create_app
from tests.bot_sdk.bot_sdk_support import running
from tests.workers.conftest import arena_config, environment, start_worker_process, stop_workers
from tests.workers.crashes import horse_of, recovery_bound_s, sigkill, wait_for
from tests.workers.snapshots import Snapshot
from tests.workers.stalling_worker import MARK_ENV, STALL_AT_ENV
from tests.workers.test_transport_timing import Shim, _port, shimmed
from workers.jobs import apply_remedy, build_evidence, run_match, run_tournament

TC = TimeControl(decision_ms=300, bank_ms=300, fault_limit=3)
"""The first timeout spends the bank (its deadline: the bank), the next ones the limit alone."""
DELAY_S = 1.5
"""How long the shim holds each answer back: longer than the decision's limit and bank."""


@dataclass(frozen=True)
class Played:
    """The module's tournament, played once."""

    config: Config
    shim: Shim
    """The slow network: each test puts its own bot behind it."""
    snapshot: Snapshot
    """The database and the archive once the tournament was played."""
    tournament_id: str
    bot_id: str


@pytest.fixture(scope="module")
def tournament(redis_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    """A rated tournament of one table (the slow bot and the three house bots, two matches of
    one hand), played, and its state saved."""
    directory = tmp_path_factory.mktemp("disputes")
    config = arena_config(redis_server, directory)
    store = Store.from_config(config)
    store.redis.flushdb()
    with ExitStack() as stack, pytest.MonkeyPatch.context() as patch:
        for name, value in environment(config).items():
            patch.setenv(name, value)
        # the answer's first 12 bytes ("HTTP/1.1 200") at once, the rest DELAY_S later
        shim = stack.enter_context(shimmed(0, delay_s=DELAY_S, prompt=12))
        shim.target = _port(stack.enter_context(running(make_app(LowestCard, "s3cret"))))
        bot, _ = store.create_bot(
            name="slow-network", endpoint=shim.url, description="", contact="a@example.com",
            version="1", secret="s3cret",
        )  # fmt: skip
        spec = TournamentSpec(
            name="disputed",
            participants=(bot.id, "house:easy", "house:normal", "house:hard"),
            format=Format(duplicate=False, matches_per_table=2, hands=1),
            rules=Rules(),
            time_control=TC,
        )
        tournament_id = store.create_tournament(spec)
        store.move_tournament(
            tournament_id, TournamentStatus.QUEUED, allowed_from=[TournamentStatus.CREATED]
        )
        run_tournament(tournament_id)
        for match in _matches(store, tournament_id):
            run_match(match.id)
        snapshot = Snapshot.take(config.redis_url, Path(config.archive), directory / "saved")
        yield Played(config, shim, snapshot, tournament_id, bot.id)


@pytest.fixture
def config(tournament: Played) -> Config:
    """The played tournament's configuration, its database and archive as they were played."""
    tournament.snapshot.restore()
    return tournament.config


@pytest.fixture
def played(
    tournament: Played, config: Config, store: Store, stack: ExitStack
) -> tuple[Arena, str, str]:
    """The arena, the tournament and the slow bot (a fresh one: it remembers no answer)."""
    tournament.shim.target = _port(stack.enter_context(running(make_app(LowestCard, "s3cret"))))
    return Arena(config, store), tournament.tournament_id, tournament.bot_id


def _matches(store: Store, tournament_id: str) -> list[Any]:
    found = store.list_matches(page=1, per_page=100, tournament_id=tournament_id).items
    return sorted(found, key=lambda m: m.id)


def _log(store: Store, match_id: str) -> MatchLog:
    blob = store.replay_blob(match_id)
    assert blob is not None
    return read_log(unpack(blob))


def _first_timeout(log: MatchLog, seat: int) -> int:
    decisions = log.hands[0].decisions
    return next(i for i, r in enumerate(decisions) if r.seat == seat and r.status is Status.TIMEOUT)


def _ratings(store: Store, bot_ids: list[str]) -> dict[str, Rating]:
    return {b: store.rating_versions(b)[0] for b in bot_ids}


def test_the_evidence_shows_a_late_answer_and_an_upheld_ruling_replays_the_match_once(
    played: tuple[Arena, str, str], tmp_path: Path
) -> None:
    arena, tournament_id, bot_id = played
    store = arena.store
    match = _matches(store, tournament_id)[0]
    seat = match.seats.index(bot_id)
    log = _log(store, match.id)
    index = _first_timeout(log, seat)
    dispute = disputes.file(
        arena, by=bot_id, match_id=match.id, hand=1, decision=index,
        statement="my bot answered at once: the arena's network was slow",
    )  # fmt: skip
    with pytest.raises(AlreadyDisputedError):
        disputes.file(arena, by=bot_id, match_id=match.id, hand=1, decision=index, statement="x")

    build_evidence(dispute.id)
    first = store.disputes.evidence(dispute.id)
    build_evidence(dispute.id)  # run again: the report is kept once
    assert store.disputes.evidence(dispute.id) == first
    shown = disputes.get(arena, dispute.id, by=bot_id)
    assert shown.evidence is not None
    report = shown.evidence
    assert report["seal"] == "ok" and report["rerun"]["ok"]
    assert report["hello"]["sent_us"] is not None
    (item,) = report["decisions"]
    assert item["request"]["matches"] is True
    assert item["request"]["sha256"] == item["request"]["recorded_sha256"]
    assert set(item["request"]["signature"]["headers"]) == {"X-Gongzhu-Timestamp",
                                                            "X-Gongzhu-Signature"}  # fmt: skip
    assert item["recorded"]["status"] == "timeout"
    timing = item["timing"]
    assert timing["deadline"] == "bank"  # the first timeout spent the bank
    assert timing["allowed_ms"] == TC.decision_ms + TC.bank_ms
    # the bot's answer started coming in well within the allowance (its first 12 bytes), the
    # network held back the rest past the deadline, where the arena stopped reading
    assert timing["sent_us"] < timing["received_us"]
    assert timing["elapsed_us"] < timing["allowed_ms"] * 1000
    assert timing["bytes_received"] == 12 and timing["bytes_sent"] > 0
    assert timing["latency_ms"] >= timing["allowed_ms"]
    assert timing["connection"] in ("new", "reused")
    # the answer's rest never came in: there is no recorded answer that could stand
    stand = item["answer_check"]
    assert (stand["could_stand"], stand["legal"], stand["in_time"]) == (False, False, None)
    assert stand["why"] == "no complete answer was received"
    assert stand["network_us"] == report["hello"]["elapsed_us"]
    assert item["reask"]["asked"] and item["reask"]["status"] == "timeout"  # still slow
    assert item["view"]["hand"]  # the seat's own hand, as it was sent
    assert set(item["view"]) >= {"hand", "seat"}

    before_ratings = _ratings(store, [bot_id, "house:easy", "house:hard"])
    before_standings = {s.bot_id: s for s in store.standings(tournament_id)}
    ruled = disputes.rule(
        arena, dispute.id, status=DisputeStatus.UPHELD, reason="the network, not the bot",
        remedy=Remedy.REPLAY,
    )  # fmt: skip
    replacement = f"{match.id}-replay"
    assert ruled.ruling is not None and ruled.ruling.replacement == replacement
    apply_remedy(dispute.id)
    after_once = _ratings(store, [bot_id, "house:easy", "house:hard"])
    apply_remedy(dispute.id)  # the job run again: nothing changes twice
    assert _ratings(store, [bot_id, "house:easy", "house:hard"]) == after_once
    for bot, rating in after_once.items():
        assert rating.matches == before_ratings[bot].matches - 1
        assert rating.amended == 1
        # what the match told is withdrawn: every match narrows a rating (its μ may not move,
        # when a seat scored what was expected of it), so the σ before it comes back
        assert rating.sigma > before_ratings[bot].sigma
    voided = store.get_match(match.id)
    assert voided is not None and voided.voided_by == dispute.id
    standings = {s.bot_id: s for s in store.standings(tournament_id)}
    assert standings[bot_id].matches == before_standings[bot_id].matches - 1
    assert standings[bot_id].amended == 1
    queued = arena.queue.job_ids
    assert queued.count(f"match-{replacement}") == 1

    run_match(replacement)
    run_match(replacement)  # recorded once
    replayed = store.get_match(replacement)
    assert replayed is not None and replayed.status is MatchStatus.DONE
    assert replayed.replaces == match.id
    tournament = store.get_tournament(tournament_id)
    assert tournament is not None and tournament.done == tournament.total == 3
    standings = {s.bot_id: s for s in store.standings(tournament_id)}
    assert standings[bot_id].matches == before_standings[bot_id].matches
    assert _ratings(store, [bot_id])[bot_id].matches == before_ratings[bot_id].matches
    new_log = _log(store, replacement)
    assert [h.deal for h in new_log.hands] == [h.deal for h in log.hands]  # the same deal

    # the pages say so: the voided match, its replay, the ruling with the seat's view there
    pages = create_app(arena.config).test_client()
    assert b'id="voided"' in pages.get(f"/matches/{match.id}").data
    assert b'id="replaces"' in pages.get(f"/matches/{replacement}").data
    page = pages.get(f"/disputes/{dispute.id}").data
    assert b'id="remedy"' in page and b'id="seat-view"' in page  # the tournament is over
    assert b"mark-amended" in pages.get(f"/tournaments/{tournament_id}").data
    voided_divergence = pages.get(f"/api/matches/{match.id}/divergence?bot={bot_id}")
    assert voided_divergence.status_code == 409 and replacement in voided_divergence.json["message"]

    # the amended result verifies with the ruling, and a changed one does not
    public = arena.replay_key().public_key()
    keys = {key_id_of(public): public}
    ruling = store.disputes.sealed_ruling(dispute.id)
    original, replay = (unpack(store.replay_blob(m) or b"") for m in (match.id, replacement))
    amended = check_amended(ruling or {}, original, replay, keys)
    assert (amended.counts, amended.remedy) == (replacement, "replay")
    with pytest.raises(RulingError, match="seal"):
        check_amended({**(ruling or {}), "remedy": None}, original, replay, keys)
    rotation = next(
        m for m in _matches(store, tournament_id) if m.id not in (match.id, replacement)
    )
    other = unpack(store.replay_blob(rotation.id) or b"")
    with pytest.raises(RulingError, match="not on this log"):
        check_amended(ruling or {}, other, replay, keys)
    with pytest.raises(RulingError, match="replacement"):
        check_amended(ruling or {}, original, other, keys)

    # and so does python -m replays ruling, from the files an author downloads
    files = {"ruling.json": ruling, "match.json": original, "replay.json": replay}
    for name, content in files.items():
        (tmp_path / name).write_text(json.dumps(content))
    (tmp_path / "key.pem").write_bytes(public_key_pem(public))
    args = ["ruling", str(tmp_path / "ruling.json"), "--original", str(tmp_path / "match.json"),
            "--public-key", str(tmp_path / "key.pem")]  # fmt: skip
    checked = CliRunner().invoke(
        replays_cli, [*args, "--replacement", str(tmp_path / "replay.json")]
    )
    assert checked.exit_code == 0 and f"match {replacement}'s" in checked.output, checked.output
    missing = CliRunner().invoke(replays_cli, args)
    assert missing.exit_code == 1 and "give its replacement" in missing.output


def test_a_rejected_ruling_changes_nothing(played: tuple[Arena, str, str]) -> None:
    arena, tournament_id, bot_id = played
    store = arena.store
    match = _matches(store, tournament_id)[1]
    dispute = disputes.file(
        arena, by=bot_id, match_id=match.id, hand=1, decision=None, statement="the whole hand"
    )
    build_evidence(dispute.id)
    evidence = store.disputes.evidence(dispute.id)
    assert evidence is not None
    seat = match.seats.index(bot_id)
    assert len(evidence["decisions"]) == sum(1 for r in _log(store, match.id).hands[0].decisions
                                             if r.seat == seat)  # fmt: skip
    ratings = _ratings(store, [bot_id])
    standings = store.standings(tournament_id)
    jobs = len(arena.queue.job_ids)
    ruled = disputes.rule(
        arena, dispute.id, status=DisputeStatus.REJECTED, reason="the bot was slow", remedy=None
    )
    assert ruled.status is DisputeStatus.REJECTED
    apply_remedy(dispute.id)  # nothing to apply
    assert _ratings(store, [bot_id]) == ratings
    assert store.standings(tournament_id) == standings
    assert len(arena.queue.job_ids) == jobs
    stored = store.get_match(match.id)
    assert stored is not None and stored.voided_by is None
    public = disputes.listing(arena, by=None, page=1, per_page=10, tournament_id=tournament_id)
    assert [d.id for d in public.items] == [dispute.id]
    assert disputes.get(arena, dispute.id, by=None).evidence is None  # the owner's alone


def test_a_dispute_on_another_owners_bot_is_refused(played: tuple[Arena, str, str]) -> None:
    arena, tournament_id, bot_id = played
    store = arena.store
    match = _matches(store, tournament_id)[0]
    other, _ = store.create_bot(
        name="other", endpoint="http://127.0.0.1:9/bot", description="", contact="b@example.com",
        version="1", secret="x",
    )  # fmt: skip
    with pytest.raises(NotAllowedError, match="did not play"):
        disputes.file(arena, by=other.id, match_id=match.id, hand=1, decision=0, statement="mine")
    log = _log(store, match.id)
    seat = match.seats.index(bot_id)
    theirs = next(i for i, r in enumerate(log.hands[0].decisions) if r.seat != seat)
    with pytest.raises(NotAllowedError, match="not your"):
        disputes.file(arena, by=bot_id, match_id=match.id, hand=1, decision=theirs, statement="x")
    with pytest.raises(NotAllowedError):
        disputes.file(arena, by=OPERATOR, match_id=match.id, hand=1, decision=0, statement="x")
    open_dispute = disputes.file(
        arena, by=bot_id, match_id=match.id, hand=1, decision=None, statement="x"
    )
    with pytest.raises(NotAllowedError, match="open"):
        disputes.get(arena, open_dispute.id, by=other.id)


def test_a_remedy_interrupted_after_its_transaction_is_finished_by_its_retry_once(
    played: tuple[Arena, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    arena, tournament_id, bot_id = played
    store = arena.store
    match = _matches(store, tournament_id)[1]
    dispute = disputes.file(
        arena, by=bot_id, match_id=match.id, hand=1, decision=None, statement="slow network"
    )
    second = disputes.file(
        arena, by=bot_id, match_id=match.id, hand=1, decision=_first_timeout(_log(store, match.id),
        match.seats.index(bot_id)), statement="and this one",
    )  # fmt: skip
    disputes.rule(
        arena, dispute.id, status=DisputeStatus.UPHELD, reason="upheld", remedy=Remedy.REPLAY
    )
    with pytest.raises(WrongStateError, match="voided by the ruling on dispute"):
        disputes.rule(
            arena, second.id, status=DisputeStatus.UPHELD, reason="again", remedy=Remedy.REPLAY
        )
    disputes.rule(arena, second.id, status=DisputeStatus.REJECTED, reason="ruled on", remedy=None)
    before = _ratings(store, [bot_id])[bot_id]

    def crash(*args: object) -> None:
        raise SystemExit("the worker died before queuing the replacement")

    with monkeypatch.context() as patch:
        patch.setattr(disputes, "enqueue_match", crash)
        with pytest.raises(SystemExit):
            apply_remedy(dispute.id)
    replacement = f"{match.id}-replay"
    assert f"match-{replacement}" not in arena.queue.job_ids
    apply_remedy(dispute.id)  # the job's retry
    after = _ratings(store, [bot_id])[bot_id]
    assert after.matches == before.matches - 1 and after.amended == 1
    assert arena.queue.job_ids.count(f"match-{replacement}") == 1
    assert dataclasses.replace(after, amended=0) != before


def test_the_workers_build_the_evidence_apply_the_remedy_and_play_the_replay(
    played: tuple[Arena, str, str], start_worker: Callable[[], Any]
) -> None:
    """The same, on real rq workers: the jobs filing and ruling queue are theirs to run."""
    arena, tournament_id, bot_id = played
    store = arena.store
    match = _matches(store, tournament_id)[1]
    dispute = disputes.file(
        arena, by=bot_id, match_id=match.id, hand=1, decision=None, statement="slow network"
    )
    before = _ratings(store, [bot_id])[bot_id]
    start_worker()
    wait_for(lambda: store.disputes.evidence(dispute.id) is not None, 60, "the evidence")
    disputes.rule(
        arena, dispute.id, status=DisputeStatus.UPHELD, reason="upheld", remedy=Remedy.REPLAY
    )
    replacement = f"{match.id}-replay"

    def replayed() -> bool:
        found = store.get_match(replacement)
        return found is not None and found.status is MatchStatus.DONE

    wait_for(replayed, 120, "the replay recorded")
    shown = store.disputes.get(dispute.id)
    assert shown is not None and shown.ruling is not None and shown.ruling.applied
    after = _ratings(store, [bot_id])[bot_id]
    assert (after.matches, after.amended) == (before.matches, 1)  # one withdrawn, one added
    tournament = store.get_tournament(tournament_id)
    assert tournament is not None and tournament.done == tournament.total == 3


@pytest.mark.parametrize("at", ["before", "after"])
def test_a_remedy_whose_horse_is_killed_is_finished_by_its_retry_once(
    at: str, played: tuple[Arena, str, str], config: Any, tmp_path: Path
) -> None:
    """A real worker's horse SIGKILLed in the remedy's job, before its transaction or after it
    (before the replacement's job is queued): the job's retry finishes it, the match voided
    once, the results changed once, the replacement played and recorded once."""
    arena, tournament_id, bot_id = played
    store = arena.store
    match = _matches(store, tournament_id)[1]
    dispute = disputes.file(
        arena, by=bot_id, match_id=match.id, hand=1, decision=None, statement="slow network"
    )
    build_evidence(dispute.id)
    bots = list(dict.fromkeys(match.seats))
    before_ratings = _ratings(store, bots)
    before_standings = {s.bot_id: s for s in store.standings(tournament_id)}
    disputes.rule(
        arena, dispute.id, status=DisputeStatus.UPHELD, reason="upheld", remedy=Remedy.REPLAY
    )
    replacement = f"{match.id}-replay"
    mark = tmp_path / "stalled"
    worker = start_worker_process(
        config,
        module="tests.workers.stalling_worker",
        extra_env={STALL_AT_ENV: at, MARK_ENV: str(mark)},
    )
    try:
        wait_for(mark.exists, 60, f"the remedy's horse to stop {at} its transaction")
        sigkill(horse_of(worker.pid))
        applied = store.disputes.get(dispute.id)
        assert applied is not None and applied.ruling is not None
        assert applied.ruling.applied is (at == "after")
        assert f"match-{replacement}" not in arena.queue.job_ids

        def replayed() -> bool:
            found = store.get_match(replacement)
            return found is not None and found.status is MatchStatus.DONE

        wait_for(replayed, recovery_bound_s(config) + 120, "the replay recorded")
    finally:
        stop_workers([worker])
    remedy_job = Job.fetch(f"remedy-{dispute.id}", connection=store.redis)
    assert remedy_job.retries_left == MATCH_RETRIES - 1  # killed once, run again once
    replay_job = Job.fetch(match_job_id(replacement), connection=store.redis)
    assert replay_job.retries_left == MATCH_RETRIES  # queued once, played once
    voided = store.get_match(match.id)
    assert voided is not None and (voided.voided_by, voided.replaced_by) == (
        dispute.id,
        replacement,
    )
    after_ratings = _ratings(store, bots)
    for bot in bots:  # the original's step withdrawn once, the replay's added once
        assert after_ratings[bot].matches == before_ratings[bot].matches
        assert after_ratings[bot].amended == 1
    standings = {s.bot_id: s for s in store.standings(tournament_id)}
    for bot in bots:
        assert standings[bot].matches == before_standings[bot].matches
        assert standings[bot].amended == 1
    tournament = store.get_tournament(tournament_id)
    assert tournament is not None and tournament.done == tournament.total == 3
    assert store.replay_blob(replacement) is not None


def test_a_ruling_applied_while_ratings_await_re_rating_is_left_to_the_re_rating(
    played: tuple[Arena, str, str],
) -> None:
    """A match recorded while the ratings await re-rating keeps no rating effect: voiding it
    then withdraws none (and is not refused), the re-rating leaves it out and counts it in its
    versions' ``amended``."""
    arena, tournament_id, bot_id = played
    store = arena.store
    match, other = _matches(store, tournament_id)
    store.redis.set(keys.RATINGS_SCALE, ratings.OLD_SCALE)
    store.redis.hdel(keys.match(match.id), "rating_effect")  # as if recorded meanwhile
    dispute = disputes.file(
        arena, by=bot_id, match_id=match.id, hand=1, decision=None, statement="the whole hand"
    )
    disputes.rule(
        arena, dispute.id, status=DisputeStatus.UPHELD, reason="the network",
        remedy=Remedy.REPLAY,
    )  # fmt: skip
    apply_remedy(dispute.id)
    voided = store.get_match(match.id)
    assert voided is not None and voided.voided_by == dispute.id
    assert rerate(store) == 1  # the other match alone
    after = _ratings(store, [bot_id, "house:easy", "house:normal", "house:hard"])
    assert all((r.matches, r.amended) == (1, 1) for r in after.values())
    assert [p.match_id for p in store.rating_history(bot_id)] == [other.id]
