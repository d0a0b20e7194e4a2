"""The store's and the results arithmetic's edges, each pinned by what a user would see: a
result counted once and where it belongs, a tournament that ends when its last match does (and
not before), a failed match played again, a secret kept until its grace or its tournament ends,
an embargo lifted when its deal is played, a human game forgotten a month after its last move,
a bot's fault index kept to its bound. Mutation testing (docs/RELIABILITY.md) found each of
these held by no other test. Every race here is forced with a second connection, never slept
for."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from typing import Any

import pytest
import redis

from arena import ratings, results
from arena.config import Config
from arena.errors import NotFoundError, StaleVersionError, WrongStateError
from arena.match_loop import InProcessSeat, Reply, play_match
from arena.records import (
    BotStatus,
    Embargo,
    Format,
    MatchFailure,
    MatchStatus,
    Rating,
    RegisteredBot,
    Standing,
    TournamentSpec,
    TournamentStatus,
)
from arena.store import Store, codecs, replies
from arena.store.codecs import timestamp
from arena.store.store import new_secret
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.protocol import DecisionRequest, pending_decision
from referee import Card, Game, Observation, Rules
from referee.moves import DecisionKind
from replays.deals import DealScheme, DealSource
from replays.integrity import key_id_of, private_key_from_pem, seal
from replays.log import MatchLog, SeatInfo, TimeControl
from tests.pages.pages_support import faulty_log
from tests.workers.test_store_race import _before_the_first_exec
from tests.workers.test_stored_forms import BOT, FAULT, MOVE, TOURNAMENT
from tests.workers.test_stored_forms import GAME as STORED_GAME

SEATS = ["bot_a", "bot_b", "house:easy", "house:hard"]
NOW = 1_700_000_000.0
GAME = dataclasses.replace(codecs.human_game_from("g1", STORED_GAME, [MOVE]), recorded=False)


class Clock:
    """A store's clock that moves only when a test says so."""

    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _register(
    store: Store, name: str, status: BotStatus = BotStatus.ACTIVE, secret: str = "s"
) -> tuple[RegisteredBot, str]:
    return store.create_bot(
        name=name,
        endpoint="e",
        description="",
        contact="",
        version="1",
        secret=secret,
        status=status,
    )


def _clocked(config: Config, clock: Clock) -> Store:
    return Store.from_config(config, clock=clock)


def _tournament(
    store: Store, total: int, status: TournamentStatus = TournamentStatus.RUNNING
) -> str:
    spec = TournamentSpec("cup", tuple(SEATS), Format(), Rules(), TimeControl(1000, 30000, 5))
    tid = store.create_tournament(spec)
    store.set_tournament_total(tid, total)
    if status is not TournamentStatus.CREATED:
        store.move_tournament(tid, status, allowed_from=[TournamentStatus.CREATED])
    return tid


def _planned(store: Store, count: int) -> str:
    """A running tournament of ``count`` matches, m1 to m<count>, all announced."""
    tid = _tournament(store, total=count)
    for n in range(1, count + 1):
        store.create_match(f"m{n}", seats=SEATS, tournament_id=tid)
    return tid


class AlwaysFails(LowestCard):
    """Raises on every play: it faults until it forfeits."""

    def play(self, obs: Observation) -> Card:
        raise RuntimeError("always")


class OwnFallback(InProcessSeat):
    """Says its first ``count`` plays were its own fallback (the SDK's note)."""

    def __init__(self, info: SeatInfo, count: int) -> None:
        super().__init__(LowestCard(), info)
        self.left = count

    def ask(self, request: DecisionRequest) -> Reply:
        reply = super().ask(request)
        if self.left and pending_decision(request.observation).kind is DecisionKind.PLAY:
            self.left -= 1
            return dataclasses.replace(reply, note="fallback: timed out")
        return reply


def _log(
    match_id: str,
    seats: list[str] = SEATS,
    *,
    players: list[Any] | None = None,
    tournament_id: str | None = None,
    deals: DealSource | None = None,
    fault_limit: int = 5,
    started_at: str | None = None,
    finished_at: str | None = None,
    seed: int = 1,
) -> MatchLog:
    chosen = players or [
        InProcessSeat(LowestCard(), SeatInfo(seat, bot_id, bot_id))
        for seat, bot_id in enumerate(seats)
    ]
    return play_match(
        Game(Rules(fixed_hands=1), seed=seed),
        chosen,
        match_id=match_id,
        deals=deals or DealSource.practice(str(seed)),
        time_control=TimeControl(1000, 30000, fault_limit),
        tournament_id=tournament_id,
        table_id="table-1" if tournament_id else None,
        started_at=started_at,
        finished_at=lambda: finished_at,
    )


def _sealed(config: Config, log: MatchLog) -> dict[str, Any]:
    assert config.replay_key_path is not None
    key = private_key_from_pem(config.replay_key_path.read_bytes())
    return seal(log.to_json(), key, key_id=key_id_of(key.public_key()))


# -- replies ------------------------------------------------------------------------------------


def test_a_client_that_decodes_its_replies_is_refused_loudly(config: Config) -> None:
    client = redis.Redis.from_url(config.redis_url, decode_responses=True)
    client.set("gz:x", "v")
    with pytest.raises(TypeError, match="answered str where the store reads bytes or nil"):
        replies.blob(client.get("gz:x"))
    with pytest.raises(TypeError, match="an integer"):
        replies.number("1")
    with pytest.raises(TypeError, match="an array"):
        replies.texts(b"x")
    with pytest.raises(TypeError, match="a hash"):
        replies.fields([b"a"])
    with pytest.raises(TypeError, match="answered str where the store reads bytes:"):
        replies.texts(["x"])
    client.hset("gz:bot:bot_a", mapping=BOT)
    with pytest.raises(TypeError, match="decode_responses off"):
        Store.from_config(config, client=client).get_bot("bot_a")


def test_replies_keep_their_shapes() -> None:
    assert replies.blob(None) is None and replies.blob(b"x") == b"x"
    assert replies.text(None) is None and replies.text("拱".encode()) == "拱"
    assert replies.boolean(0) is False and replies.boolean(2) is True
    assert replies.blobs([b"a", None]) == [b"a", None]
    assert replies.texts({b"a"}) == ["a"] and replies.texts((b"b",)) == ["b"]
    assert replies.fields({}) == {} and replies.fields({b"k": b"v"}) == {"k": "v"}


# -- keys' bounds -------------------------------------------------------------------------------


def test_the_fault_index_keeps_the_latest_ten_thousand(config: Config, store: Store) -> None:
    old = FAULT.replace('"x2"', '"old"')
    pipe = store.redis.pipeline(transaction=False)
    for _ in range(10):
        pipe.rpush("gz:bot:bot_b:faults", *[old] * 1_000)
    pipe.execute()
    log = faulty_log(config, "m1", SEATS, hands=1)
    assert store.record_result("m1", log)
    assert store.redis.llen("gz:bot:bot_b:faults") == 10_000
    newest = store.faults("bot_b", page=1, per_page=3)
    assert [f.match_id for f in newest.items] == ["m1", "m1", "old"] and newest.total == 10_000


def test_a_human_game_is_forgotten_a_month_after_its_last_write(store: Store) -> None:
    game = store.create_human_game(GAME)
    month = 30 * 24 * 3600
    for key in ("gz:play:g1", "gz:play:g1:moves"):
        assert month - 5 <= store.redis.ttl(key) <= month
    store.redis.expire("gz:play:g1", 10)
    store.redis.expire("gz:play:g1:moves", 10)
    store.save_human_game(game, [])
    for key in ("gz:play:g1", "gz:play:g1:moves"):
        assert month - 5 <= store.redis.ttl(key) <= month


# -- bots ---------------------------------------------------------------------------------------


def test_ping_says_whether_redis_answers(store: Store, config: Config) -> None:
    assert store.ping() is True
    nowhere = dataclasses.replace(config, redis_url="redis://127.0.0.1:1/0")
    assert Store.from_config(nowhere).ping() is False


def test_ids_tokens_and_secrets_carry_their_random_bytes(store: Store) -> None:
    bot, token = _register(store, "Alpha")
    assert re.fullmatch(r"bot_[0-9a-f]{12}", bot.id) and bot.status is BotStatus.ACTIVE
    assert re.fullmatch(r"gzt_[A-Za-z0-9_-]{43}", token)  # 32 random bytes
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", new_secret())
    spec = TournamentSpec("cup", tuple(SEATS), Format(), Rules(), TimeControl(1000, 30000, 5))
    assert re.fullmatch(r"t_[0-9a-f]{12}", store.create_tournament(spec))


def test_a_token_counts_only_for_the_bot_whose_hash_it_matches(store: Store) -> None:
    bot, token = _register(store, "Alpha")
    assert store.bot_for_token(token) == bot.id
    assert store.bot_for_token(token + "x") is None
    forged = "gzt_forged"
    store.redis.set(f"gz:token:{hashlib.sha256(forged.encode()).hexdigest()}", bot.id)
    assert store.bot_for_token(forged) is None  # the bot holds another token's hash
    orphan = "gzt_orphan"
    store.redis.set(f"gz:token:{hashlib.sha256(orphan.encode()).hexdigest()}", "bot_gone")
    assert store.bot_for_token(orphan) is None


def test_an_answered_hello_activates_only_a_pending_bot(store: Store) -> None:
    pending = _register(store, "P", BotStatus.PENDING)[0].id
    paused = _register(store, "Q", BotStatus.PAUSED)[0].id
    assert store.endpoint_verified(pending, "2").status is BotStatus.ACTIVE
    assert store.endpoint_verified(paused, "2").status is BotStatus.PAUSED
    stored = store.get_bot(paused)
    assert stored is not None and (stored.status, stored.version) == (BotStatus.PAUSED, "2")
    store.set_bot_status(paused, BotStatus.RETIRED)
    with pytest.raises(WrongStateError, match="retired"):
        store.update_bot(paused, description="x")
    with pytest.raises(NotFoundError):
        store.set_bot_status("bot_none", BotStatus.ACTIVE)


def test_human_games_are_offered_the_active_bots_that_allow_them_by_name(store: Store) -> None:
    ids = {}
    for name in ("gamma", "Beta", "alpha", "delta"):
        bot, _ = _register(store, name)
        ids[name] = bot.id
        store.update_bot(bot.id, allow_human_games=True)
    store.update_bot(ids["delta"], allow_human_games=False)
    store.set_bot_status(ids["gamma"], BotStatus.PAUSED)
    assert [b.name for b in store.human_game_bots()] == ["alpha", "Beta"]
    assert store.redis.smembers("gz:human-bots") == {
        ids[n].encode() for n in ("gamma", "Beta", "alpha")
    }


def test_a_rotated_secret_still_signs_until_its_grace_ends_and_not_at_its_end(
    config: Config,
) -> None:
    clock = Clock()
    store = _clocked(config, clock)
    bot, _ = _register(store, "A", secret="old")
    store.rotate_secret(bot.id, "new", grace_s=60)
    clock.now = NOW + 59.5
    assert store.signing_secrets(bot.id) == ["new", "old"]
    clock.now = NOW + 60
    assert store.signing_secrets(bot.id) == ["new"]
    with pytest.raises(NotFoundError):
        store.signing_secrets("bot_none")


# -- tournaments --------------------------------------------------------------------------------


def test_a_deal_secret_is_revealed_only_once_its_tournament_is_over(store: Store) -> None:
    tid = _tournament(store, total=1)
    tournament = store.get_tournament(tid)
    assert tournament is not None and store.revealed_secret(tournament) is None
    over = store.move_tournament(
        tid, TournamentStatus.CANCELLED, allowed_from=[TournamentStatus.RUNNING]
    )
    assert (
        store.revealed_secret(over) == store.deal_secret(tid) and len(store.deal_secret(tid)) == 32
    )
    # a tournament stored before deals were committed has no secret to reveal
    store.redis.hset(
        "gz:tournament:t_1", mapping={**TOURNAMENT, "status": "done", "deal_commitment": ""}
    )
    old = store.get_tournament("t_1")
    assert old is not None and store.revealed_secret(old) is None
    with pytest.raises(NotFoundError, match="no deal secret"):
        store.deal_secret("t_none")
    with pytest.raises(NotFoundError, match="no tournament t_none"):
        store.move_tournament(
            "t_none", TournamentStatus.RUNNING, allowed_from=[TournamentStatus.CREATED]
        )
    with pytest.raises(
        WrongStateError, match=f"{tid} is cancelled; it can be running only when created or queued"
    ):
        store.move_tournament(
            tid,
            TournamentStatus.RUNNING,
            allowed_from=[TournamentStatus.CREATED, TournamentStatus.QUEUED],
        )


def test_a_tournament_ends_when_its_last_match_is_recorded_or_failed(
    config: Config, store: Store
) -> None:
    tid = _planned(store, 3)
    assert store.record_result("m1", _sealed(config, _log("m1", tournament_id=tid)))
    assert store.mark_match_failed("m2", "boom")
    tournament = store.get_tournament(tid)
    assert tournament is not None and (tournament.status, tournament.done) == (
        TournamentStatus.RUNNING,
        1,
    )
    assert tournament.failures == (MatchFailure("m2", "boom"),)
    failed = store.get_match("m2")
    assert failed is not None and (failed.status, failed.failure) == (MatchStatus.FAILED, "boom")
    assert not store.mark_match_failed("m2", "again")  # already failed
    assert not store.mark_match_failed("m1", "late")  # recorded
    assert not store.mark_match_failed("m_none", "x")
    assert store.mark_match_failed("m3", "")
    ended = store.get_tournament(tid)
    assert ended is not None and ended.status is TournamentStatus.DONE_WITH_FAILURES
    assert ended.failures == (MatchFailure("m2", "boom"), MatchFailure("m3", ""))
    assert store.failed_matches(tid) == ["m2", "m3"]
    assert store.match_statuses(["m1", "m2", "m_none"]) == {
        "m1": MatchStatus.DONE,
        "m2": MatchStatus.FAILED,
    }
    # the failed matches are played after all (queued again by hand): each counts once
    assert store.record_result("m2", _sealed(config, _log("m2", tournament_id=tid, seed=2)))
    still = store.get_tournament(tid)
    assert still is not None and (still.status, still.done) == (
        TournamentStatus.DONE_WITH_FAILURES,
        2,
    )
    assert still.failures == (MatchFailure("m3", ""),)
    assert store.record_result("m3", _sealed(config, _log("m3", tournament_id=tid, seed=3)))
    done = store.get_tournament(tid)
    assert done is not None and (done.status, done.done, done.failures) == (
        TournamentStatus.DONE,
        3,
        (),
    )
    played = store.get_match("m2")
    assert played is not None and (played.status, played.failure) == (MatchStatus.DONE, None)


def test_an_unrated_result_and_a_failure_of_one_tournament_at_once_end_it(
    config: Config, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the tournament's keys are watched here (an unrated match watches no rating): the
    result's transaction must see the failure that landed before its EXEC, or the tournament
    would stay running with every match ended."""
    tid = _planned(store, 2)
    house = ["bot_a", "house:easy", "house:easy", "bot_b"]  # a house bot in two seats: unrated
    other = Store.from_config(config)
    fired = _before_the_first_exec(monkeypatch, lambda: other.mark_match_failed("m2", "boom"))
    assert store.record_result("m1", _sealed(config, _log("m1", house, tournament_id=tid)))
    assert fired == [1]
    tournament = store.get_tournament(tid)
    assert tournament is not None and (tournament.status, tournament.done) == (
        TournamentStatus.DONE_WITH_FAILURES,
        1,
    )
    with pytest.raises(ValueError, match="the log is of match 'm1', not 'm3'"):
        store.record_result("m3", _sealed(config, _log("m1", house, tournament_id=tid)))
    assert store.get_match("m3") is None


def test_a_match_outside_tournaments_is_never_marked_failed(store: Store) -> None:
    store.create_match("f1", seats=SEATS)
    assert not store.mark_match_failed("f1", "boom")
    match = store.get_match("f1")
    assert match is not None and match.status is MatchStatus.QUEUED and match.failure is None


def test_failed_matches_queued_again_reopen_the_tournament_until_they_end(
    config: Config, store: Store
) -> None:
    clock = Clock()
    store = _clocked(config, clock)
    tid = _planned(store, 2)
    for n in (1, 2):
        assert store.mark_match_failed(f"m{n}", f"boom {n}")
    assert store.unfail_matches(tid, []) == []
    assert store.unfail_matches(tid, ["m9"]) == []
    still = store.get_tournament(tid)
    assert still is not None and still.status is TournamentStatus.DONE_WITH_FAILURES
    clock.now += 10
    assert store.unfail_matches(tid, ["m2", "m9"]) == ["m2"]
    reopened = store.get_tournament(tid)
    assert reopened is not None and reopened.status is TournamentStatus.RUNNING
    assert reopened.updated_at == timestamp(NOW + 10) and reopened.failures == (
        MatchFailure("m1", "boom 1"),
    )
    match = store.get_match("m2")
    assert match is not None and (match.status, match.failure) == (MatchStatus.QUEUED, None)
    clock.now += 10
    assert store.unfail_matches(tid, ["m1"]) == ["m1"]
    running = store.get_tournament(tid)
    assert running is not None and running.updated_at == timestamp(NOW + 10)  # already running
    assert store.unfail_matches("t_none", ["m1"]) == []


def test_a_result_for_a_tournament_no_longer_stored_records_only_the_match(
    config: Config, store: Store
) -> None:
    assert store.record_result("m1", _sealed(config, _log("m1", tournament_id="t_gone")))
    assert not store.redis.exists("gz:tournament:t_gone")
    assert store.standings("t_gone") == []
    assert [m.id for m in store.list_matches(page=1, per_page=5, tournament_id="t_gone").items] == [
        "m1"
    ]


# -- matches ------------------------------------------------------------------------------------


def test_an_embargo_lasts_while_its_deal_is_unplayed_and_the_tournament_not_over(
    config: Config, store: Store
) -> None:
    tid = _tournament(store, total=3)
    for n in (1, 2):
        store.create_match(f"m{n}", seats=SEATS, tournament_id=tid, deal_label="d0")
    store.create_match("m1", seats=SEATS, tournament_id=tid, deal_label="d0")  # announced again
    store.create_match("m3", seats=SEATS, tournament_id=tid)
    assert store.redis.hgetall(f"gz:tournament:{tid}:deals") == {b"d0": b"2"}
    m1 = store.get_match("m1")
    assert m1 is not None and store.embargo(m1) == Embargo(tid, "d0", 2)
    deals = DealSource.committed(store.deal_secret(tid), "d0")
    assert store.record_result("m1", _sealed(config, _log("m1", tournament_id=tid, deals=deals)))
    assert store.embargo(m1) == Embargo(tid, "d0", 1)
    assert store.record_result("m2", _sealed(config, _log("m2", tournament_id=tid, deals=deals)))
    assert store.embargo(m1) is None  # its deal is played: 0 left
    store.redis.hset(f"gz:tournament:{tid}:deals", "d0", "1")
    assert store.embargo(m1) == Embargo(tid, "d0", 1)
    store.redis.hset(f"gz:tournament:{tid}:deals", "d0", "-1")
    assert store.embargo(m1) is None
    store.redis.hset(f"gz:tournament:{tid}:deals", "d0", "1")
    store.move_tournament(tid, TournamentStatus.CANCELLED, allowed_from=[TournamentStatus.RUNNING])
    assert store.embargo(m1) is None  # over: nothing more is kept
    assert store.embargo(dataclasses.replace(m1, tournament_id="t_gone")) is None
    assert store.embargo(dataclasses.replace(m1, deal_label=None)) is None
    assert store.embargo(dataclasses.replace(m1, tournament_id=None)) is None
    other = _tournament(store, total=1)
    assert store.embargo(dataclasses.replace(m1, tournament_id=other)) is None  # no such deal


def test_a_match_with_a_practice_deal_leaves_the_deal_counts_alone(
    config: Config, store: Store
) -> None:
    tid = _tournament(store, total=2)
    store.create_match("m1", seats=SEATS, tournament_id=tid, deal_label="d0")
    practice = DealSource(DealScheme.PRACTICE, label="d0", seed="1")  # labelled, not committed
    assert store.record_result("m1", _sealed(config, _log("m1", tournament_id=tid, deals=practice)))
    assert store.redis.hget(f"gz:tournament:{tid}:deals", "d0") == b"1"


def test_matches_keep_the_order_they_were_planned_in_when_recorded_out_of_order(
    config: Config, store: Store
) -> None:
    tid = _planned(store, 2)
    for n in (2, 1):
        assert store.record_result(
            f"m{n}", _sealed(config, _log(f"m{n}", tournament_id=tid, seed=n))
        )

    def listed(**where: Any) -> list[str]:
        return [m.id for m in store.list_matches(page=1, per_page=5, **where).items]

    assert listed() == listed(tournament_id=tid) == listed(bot_id="bot_b") == ["m2", "m1"]
    assert listed(tournament_id=tid, bot_id="bot_b") == ["m2", "m1"]
    both = store.list_matches(page=2, per_page=1, tournament_id=tid, bot_id="bot_b")
    assert [m.id for m in both.items] == ["m1"] and both.total == 2
    assert store.list_matches(page=1, per_page=5, tournament_id=tid, bot_id="bot_z").total == 0
    assert [m.id for m in store.get_matches(["m1", "m_none", "m2"])] == ["m1", "m2"]


def test_a_recorded_match_keeps_its_times_and_a_running_one_is_shown_running(
    config: Config,
) -> None:
    store = _clocked(config, Clock())
    store.create_match("m1", seats=SEATS)
    store.mark_match_running("m1")
    running = store.get_match("m1")
    assert running is not None and running.status is MatchStatus.RUNNING
    assert running.created_at == timestamp(NOW)
    log = _log(
        "m1", started_at="2024-01-01T00:00:00+00:00", finished_at="2024-01-01T00:05:00+00:00"
    )
    assert store.record_result("m1", _sealed(config, log))
    done = store.get_match("m1")
    assert done is not None and (done.created_at, done.finished_at) == (
        timestamp(NOW),
        "2024-01-01T00:05:00+00:00",
    )
    store.mark_match_running("m1")
    assert store.match_statuses(["m1"]) == {"m1": MatchStatus.DONE}
    unplanned = _log("m2", started_at="2024-01-02T00:00:00+00:00")
    assert store.record_result("m2", _sealed(config, unplanned))
    m2 = store.get_match("m2")
    assert m2 is not None and (m2.created_at, m2.finished_at) == (
        "2024-01-02T00:00:00+00:00",
        timestamp(NOW),
    )
    assert store.record_result("m3", _sealed(config, _log("m3")))
    m3 = store.get_match("m3")
    assert m3 is not None and m3.created_at == m3.finished_at == timestamp(NOW)


def test_a_registered_bots_counters_grow_with_its_matches_and_no_one_elses(
    config: Config, store: Store
) -> None:
    for bot_id in ("bot_a", "bot_b"):
        store.redis.hset(f"gz:bot:{bot_id}", mapping={**BOT, "id": bot_id, "name": bot_id})
    players = [
        OwnFallback(SeatInfo(0, "bot_a", "bot_a"), 2),
        InProcessSeat(AlwaysFails(), SeatInfo(1, "bot_b", "bot_b")),
        OwnFallback(SeatInfo(2, "house:easy", "easy", kind="house"), 1),  # a house bot: not counted
        OwnFallback(SeatInfo(3, "bot_c", "bot_c"), 1),  # not registered
    ]
    store.redis.hset("gz:bot:house:easy", mapping={**BOT, "id": "house:easy", "name": "easy"})
    log = _log("m1", ["bot_a", "bot_b", "house:easy", "bot_c"], players=players, fault_limit=3)
    assert tuple(log.faults) == (0, 3, 0, 0) and tuple(log.forfeited) == (1,)
    assert store.record_result("m1", _sealed(config, log))
    counts = {b: store.get_bot(b) for b in ("bot_a", "bot_b", "house:easy")}
    assert {b: (c.faults, c.fallbacks) for b, c in counts.items() if c} == {
        "bot_a": (3, 3),
        "bot_b": (6, 1),
        "house:easy": (3, 1),
    }
    assert not store.redis.exists("gz:bot:bot_c")
    assert [f.status for f in store.faults("bot_a", page=1, per_page=9).items] == ["fallback"] * 2
    assert store.faults("bot_c", page=1, per_page=9).total == 1
    assert store.faults("house:easy", page=1, per_page=9).total == 1  # listed, not counted


def test_the_replay_key_kept_is_the_first_offered(store: Store) -> None:
    assert store.kept_replay_key(b"first") == b"first"
    assert store.kept_replay_key(b"second") == b"first"


def test_a_verification_is_kept_per_fingerprint(store: Store) -> None:
    store.keep_verification("m1", "f1", {"ok": True, "hands": 2})
    assert store.verification("m1", "f1") == {"ok": True, "hands": 2}
    assert store.verification("m1", "f2") is None and store.verification("m2", "f1") is None


# -- human games --------------------------------------------------------------------------------


def test_a_human_game_saved_from_a_stale_version_or_raced_changes_nothing(
    config: Config, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = store.create_human_game(GAME)
    assert game.version == 1
    saved = store.save_human_game(game, [])
    assert saved.version == 2 and store.redis.llen("gz:play:g1:moves") == 1
    with pytest.raises(StaleVersionError, match="since version 1 \\(it is at 2\\)"):
        store.save_human_game(game, list(GAME.moves))
    with pytest.raises(StaleVersionError, match="since version 5 \\(it is at 2\\)"):
        store.save_human_game(dataclasses.replace(game, version=5), [])  # none was ever 5
    with pytest.raises(NotFoundError):
        store.save_human_game(dataclasses.replace(game, id="g_none"), [])
    other = Store.from_config(config)
    fired = _before_the_first_exec(monkeypatch, lambda: other.mark_human_game_recorded(saved))
    with pytest.raises(StaleVersionError, match="changed while this move was made"):
        store.save_human_game(saved, list(GAME.moves))
    assert fired == [1]
    assert store.mark_human_game_recorded(saved).recorded is True
    stored = store.get_human_game("g1")
    assert stored is not None and (stored.version, len(stored.moves), stored.recorded) == (
        2,
        1,
        True,
    )
    assert store.get_human_game("g_none") is None


# -- the results arithmetic ---------------------------------------------------------------------


class FailsToExpose(LowestCard):
    """Raises when asked what to expose (a fault outside any trick)."""

    def expose(self, obs: Observation) -> list[Card]:
        raise RuntimeError("no expose")


def _faulty_match() -> MatchLog:
    """Seat 0 says two plays were its own fallback, seat 1 faults on every play until it
    forfeits at its third fault, seat 3 faults when asked to expose."""
    players = [
        OwnFallback(SeatInfo(0, "bot_a", "bot_a"), 2),
        InProcessSeat(AlwaysFails(), SeatInfo(1, "bot_b", "bot_b")),
        InProcessSeat(LowestCard(), SeatInfo(2, "house:easy", "easy", kind="house")),
        InProcessSeat(FailsToExpose(), SeatInfo(3, "bot_c", "bot_c")),
    ]
    return _log("m1", ["bot_a", "bot_b", "house:easy", "bot_c"], players=players, fault_limit=3)


def test_each_fault_and_own_fallback_is_listed_where_it_was_made() -> None:
    log = _faulty_match()
    found = {
        bot_id: [(f.hand, f.decision, f.trick, f.kind, f.status, f.message) for f in faults]
        for bot_id, faults in results.faults_of(log).items()
    }
    fallback, error = "fallback: timed out", "RuntimeError('always')"
    assert found == {
        "bot_a": [(1, 4, 1, "play", "fallback", fallback), (1, 9, 2, "play", "fallback", fallback)],
        "bot_b": [
            (1, 5, 1, "play", "error", error),  # the first trick's last card
            (1, 6, 2, "play", "error", error),  # the second trick's first
            (1, 10, 3, "play", "error", error),
        ],
        "house:easy": [],
        "bot_c": [(1, 0, 0, "expose", "error", "RuntimeError('no expose')")],
    }
    assert {f.match_id for fs in results.faults_of(log).values() for f in fs} == {"m1"}
    assert [results.asked(log, seat) for seat in range(4)] == [
        14,
        3,
        13,
        14,
    ]  # not the 10 auto-played
    assert [results.own_fallbacks(log, seat) for seat in range(4)] == [2, 0, 0, 0]


def test_a_match_moves_the_ladder_only_if_rated_among_four_distinct_participants() -> None:
    log = _log("m1")
    assert ratings.is_rated(log)
    assert not ratings.is_rated(dataclasses.replace(log, rated=False))
    house = _log("m2", ["bot_a", "house:easy", "house:easy", "bot_b"])
    assert not ratings.is_rated(house)


def test_ratings_start_new_and_add_the_match_to_what_was_stored() -> None:
    log = _faulty_match()
    stored = Rating("bot_b", 30.0, 5.0, matches=4, points=100, hands=4, faults=1, decisions=50)
    new = [ratings.starting_rating(s.bot_id, s.version, None) for s in log.seats]
    after = ratings.rate(log, [new[0], stored, new[2], new[3]], at="then")
    assert [r.bot_id for r in after] == ["bot_a", "bot_b", "house:easy", "bot_c"]
    assert after[0].mu > after[3].mu > after[2].mu  # 80, -50 and -100 points from one level
    assert all(r.sigma < ratings.PRIOR_SIGMA for r in after) and after[1].mu < 30.0
    assert (new[0].mu, new[0].sigma) == (0.0, ratings.PRIOR_SIGMA) == (0.0, 40.0)
    totals = log.outcome.totals
    assert [(r.matches, r.points, r.hands, r.faults, r.decisions) for r in after] == [
        (1, totals[0], 1, 0, 14),
        (5, 100 + totals[1], 5, 4, 53),
        (1, totals[2], 1, 0, 13),
        (1, totals[3], 1, 1, 14),
    ]
    seat_of = [(seat, r.seats[seat]) for seat, r in enumerate(after)]
    assert [(seat, f.matches, f.placement_sum) for seat, f in seat_of] == [
        (seat, 1, log.places[seat]) for seat in range(4)
    ]
    assert after[1].seats[0] == stored.seats[0]  # only its own seat's figures move
    assert [(r.first_match, r.last_match) for r in after] == [("then", "then")] * 4
    with pytest.raises(ValueError, match="3 ratings for 4 seats"):
        ratings.rate(log, [new[0], stored, new[2]])


def test_standings_count_wins_places_forfeits_and_each_seat_of_a_house_bot() -> None:
    log = _faulty_match()
    assert tuple(log.places) == (1, 4, 3, 2) and tuple(log.forfeited) == (1,)
    before = Standing("bot_b", matches=2, wins=1, placement_sum=3, points=10, hands=2)
    after = results.add_to_standings(
        {"bot_a": None, "bot_b": before, "house:easy": None, "bot_c": None}, log
    )
    totals = log.outcome.totals
    assert after["bot_a"] == Standing("bot_a", 1, 1, 1, totals[0], 1, 0, 0)
    assert after["bot_b"] == Standing("bot_b", 3, 1, 7, 10 + totals[1], 3, 3, 1)
    assert after["bot_c"] == Standing("bot_c", 1, 0, 2, totals[3], 1, 1, 0)
    house = _log("m2", ["bot_a", "house:easy", "house:easy", "bot_b"])
    both = results.add_to_standings({"bot_a": None, "house:easy": None, "bot_b": None}, house)
    seats = [1, 2]
    assert both["house:easy"] == Standing(
        "house:easy",
        2,
        sum(house.places[s] == 1 for s in seats),
        sum(house.places[s] for s in seats),
        sum(house.outcome.totals[s] for s in seats),
        2,
    )


def test_a_tournament_ends_exactly_when_every_match_is_recorded_or_failed() -> None:
    running, done, failures = (
        TournamentStatus.RUNNING,
        TournamentStatus.DONE,
        TournamentStatus.DONE_WITH_FAILURES,
    )
    # (status, total, done, failed): nothing planned yet, or matches left to play
    unchanged = [(running, 0, 0, 0), (running, 3, 2, 0), (running, 3, 1, 1), (failures, 3, 2, 0)]
    # statuses that recorded or failed matches do not end
    other = [(TournamentStatus.CREATED, 3, 3, 0), (TournamentStatus.QUEUED, 1, 1, 0)]
    other += [(done, 3, 2, 1), (TournamentStatus.CANCELLED, 3, 2, 1)]
    ended = [(running, 3, 3, 0), (running, 1, 1, 0), (running, 3, 4, 0), (failures, 3, 3, 0)]
    with_failures = [(running, 3, 2, 1), (running, 3, 0, 3)]
    for rows, after in ((unchanged + other, None), (ended, done), (with_failures, failures)):
        for status, total, recorded, failed in rows:
            found = results.tournament_status(status, total=total, done=recorded, failed=failed)
            assert found is (after or status), (status, total, recorded, failed)


def test_only_a_tournament_done_with_failures_runs_again_when_they_are_queued() -> None:
    assert results.requeued_status(TournamentStatus.DONE_WITH_FAILURES) is TournamentStatus.RUNNING
    for status in TournamentStatus:
        if status is not TournamentStatus.DONE_WITH_FAILURES:
            assert results.requeued_status(status) is status


def test_standings_rank_by_wins_then_placement_then_points_per_hand_and_share_ties() -> None:
    rows = [
        Standing("f", matches=4, wins=0, placement_sum=12, points=0, hands=4),
        Standing("e", matches=2, wins=1, placement_sum=4, points=10, hands=2),
        Standing("d", matches=2, wins=1, placement_sum=4, points=10, hands=2),
        Standing("c", matches=2, wins=1, placement_sum=4, points=30, hands=2),
        Standing("b", matches=2, wins=1, placement_sum=3, points=-50, hands=2),
        Standing("a", matches=2, wins=2, placement_sum=2, points=-90, hands=2),
        Standing("g", matches=0),
        Standing("h", matches=8, wins=3, placement_sum=24, points=0, hands=8),  # wins first
    ]
    order = [(s.bot_id, s.rank) for s in results.ranked(rows)]
    assert order == list(zip("habcdegf", [1, 2, 3, 4, 5, 5, 7, 8], strict=True))
    assert results.ranked([]) == []


def test_a_page_holds_exactly_its_share_newest_first(config: Config, store: Store) -> None:
    for n in range(1, 6):
        store.create_match(f"m{n}", seats=SEATS)
    pages = [store.list_matches(page=p, per_page=2) for p in (1, 2, 3, 4)]
    assert [[m.id for m in p.items] for p in pages] == [["m5", "m4"], ["m3", "m2"], ["m1"], []]
    assert {p.total for p in pages} == {5}
    for n in range(1, 4):
        assert store.record_result(f"r{n}", _sealed(config, _log(f"r{n}", seed=n)))
    ladder = store.ladder(page=2, per_page=2)
    assert [rank for rank, _ in ladder.items] == [3, 4] and ladder.total == 4
    assert [p.match_id for p in store.rating_history("bot_a")] == ["r1", "r2", "r3"]
