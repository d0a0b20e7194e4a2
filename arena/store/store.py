"""The arena's data in Redis: :class:`Store`, its queries and its transactions.

Which keys hold what is :mod:`arena.store.keys`; how a record is written there is
:mod:`arena.store.codecs`. Signing secrets and tournaments' deal secrets are encrypted with
Fernet (the arena's ``GONGZHU_SECRET_KEY``); management tokens are kept only as SHA-256 hashes.
:meth:`Store.record_result` counts a match exactly once, however often it is called: the whole
update is one optimistic transaction (WATCH/MULTI) that first checks whether the match already
has a result.

The arena's Redis must persist every acknowledged write: run it with ``appendonly yes`` and
``appendfsync everysec`` (or ``always``); see docs/OPERATIONS.md. A log the archive cannot take
when its match is recorded is held in Redis with the result (:mod:`arena.archiving` says why
and moves it on), so it is exactly as durable as the result that names it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import replace
from typing import Any, TypedDict, Unpack

import redis
from cryptography.fernet import Fernet
from redis.client import Pipeline
from redis.exceptions import LockNotOwnedError

from arena.archive import Archive, digest_of, open_archive
from arena.config import Config
from arena.errors import (
    ArchiveError,
    NameTakenError,
    NotFoundError,
    StaleVersionError,
    WrongStateError,
)
from arena.ratings import (
    ANCHOR,
    OLD_SCALE,
    SCALE,
    head_to_head,
    is_rated,
    playing_rating,
    rate,
)
from arena.records import (
    BotFault,
    BotStatus,
    DivergenceEntry,
    Embargo,
    Gauntlet,
    GauntletDeal,
    HeadToHead,
    HumanGame,
    Match,
    MatchFailure,
    MatchStatus,
    Page,
    Rating,
    RatingPoint,
    RegisteredBot,
    Schedule,
    Standing,
    Tournament,
    TournamentSpec,
    TournamentStatus,
    Transport,
)
from arena.redis_client import connect
from arena.results import (
    add_to_standings,
    faults_of,
    own_fallbacks,
    ranked,
    requeued_status,
    tournament_status,
)
from arena.store import codecs, keys, replies
from arena.store.codecs import timestamp
from arena.store.disputes import DisputeBook
from arena.store.mailbox import Mailbox
from replays.deals import DealScheme, commitment_of, draw_secret
from replays.integrity import IntegrityError, canonical, pack
from replays.log import DecisionRecord, MatchLog
from replays.packing import PackingError, quick, whole

Clock = Callable[[], float]
MAC_BYTES = hashlib.sha256().digest_size
"""A log cache entry's HMAC, before the log."""
MIB = 1024 * 1024


class BotChanges(TypedDict, total=False):
    """What a bot's owner may change (:meth:`Store.update_bot`)."""

    endpoint: str
    description: str
    contact: str
    version: str
    allow_human_games: bool
    ladder: bool
    max_concurrent: int


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(6)}"


def new_secret() -> str:
    """A bot's request-signing secret."""
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Store:
    """The arena's data in Redis. ``secret_key`` is the Fernet key that encrypts signing
    secrets; the service and the workers must share it."""

    def __init__(
        self,
        client: redis.Redis,
        secret_key: str | bytes,
        *,
        archive: Archive,
        replay_cache_s: int = 0,
        hold_bytes: int = 0,
        clock: Clock = time.time,
    ) -> None:
        self.redis = client
        self._fernet = Fernet(secret_key)
        key = secret_key.encode() if isinstance(secret_key, str) else secret_key
        self._cache_key = hmac.new(key, b"gz:log-cache", hashlib.sha256).digest()
        self._clock = clock
        self.archive = archive
        """Where the sealed logs are kept (:mod:`arena.archive`); Redis holds their names."""
        self._replay_cache_s = replay_cache_s
        self._hold_bytes = hold_bytes
        self.mailbox = Mailbox(client, clock=clock)
        """Where the arena and its pull bots meet (:mod:`arena.store.mailbox`)."""
        self.disputes = DisputeBook(client, clock=clock)
        """Disputes, their evidence and rulings (:mod:`arena.store.disputes`)."""

    @classmethod
    def from_url(
        cls,
        url: str,
        secret_key: str | bytes,
        *,
        archive: Archive,
        replay_cache_s: int = 0,
        hold_bytes: int = 0,
        clock: Clock = time.time,
    ) -> Store:
        return cls(
            connect(url),
            secret_key,
            archive=archive,
            replay_cache_s=replay_cache_s,
            hold_bytes=hold_bytes,
            clock=clock,
        )

    @classmethod
    def from_config(
        cls, config: Config, *, client: redis.Redis | None = None, clock: Clock = time.time
    ) -> Store:
        """The store ``config`` names: its Redis (or ``client``, a connection to it), its
        secret key, its archive."""
        return cls(
            connect(config.redis_url) if client is None else client,
            config.secret_key,
            archive=open_archive(config.archive, s3_endpoint=config.s3_endpoint),
            replay_cache_s=config.replay_cache_s,
            hold_bytes=config.archive_hold_mb * MIB,
            clock=clock,
        )

    @contextmanager
    def held(self, key: str, *, timeout_s: float, wait_s: float | None) -> Iterator[bool]:
        """redis-py's ``Lock`` on ``key``, expiring after ``timeout_s`` should its holder die:
        yields whether it was taken, waiting up to ``wait_s`` for it (None: not at all). A lock
        that expired while held (a holder slower than its timeout) is someone else's by the
        time it would be released, and is left to them."""
        lock = self.redis.lock(key, timeout=timeout_s, blocking_timeout=wait_s)
        taken = bool(lock.acquire(blocking=wait_s is not None))
        try:
            yield taken
        finally:
            if taken:
                with suppress(LockNotOwnedError):
                    lock.release()

    def ping(self) -> bool:
        try:
            return replies.boolean(self.redis.ping())
        except redis.RedisError:
            return False

    def _now(self) -> str:
        return timestamp(self._clock())

    def _seq(self) -> int:
        return replies.number(self.redis.incr(keys.SEQ))

    # -- bots -----------------------------------------------------------------------------------

    def create_bot(
        self,
        *,
        name: str,
        endpoint: str,
        description: str,
        contact: str,
        version: str,
        secret: str,
        status: BotStatus = BotStatus.ACTIVE,
        transport: Transport = Transport.PUSH,
        ladder: bool = False,
        max_concurrent: int = 1,
    ) -> tuple[RegisteredBot, str]:
        """Store a new bot that signs with ``secret`` (registration stores it ``pending``);
        returns it and its management token (the only time the token exists in clear). The
        name is reserved and the bot written in one transaction: a registration that fails
        leaves neither."""
        bot_id = new_id("bot")
        token = f"gzt_{secrets.token_urlsafe(32)}"
        now = self._now()
        bot = RegisteredBot(
            bot_id, name, endpoint, description, contact, status, version, now, now,
            transport=transport, ladder=ladder, max_concurrent=max_concurrent,
        )  # fmt: skip
        fields = {**codecs.bot_fields(bot), "token_sha256": hash_token(token)}
        fields["secret"] = self._encrypt(secret).decode()
        seq = self._seq()

        def register(pipe: Pipeline) -> None:
            if replies.boolean(pipe.hexists(keys.BOT_NAMES, name.casefold())):
                raise NameTakenError(f"the name {name!r} is taken: choose another", field="name")
            pipe.multi()
            pipe.hset(keys.BOT_NAMES, name.casefold(), bot_id)
            pipe.hset(keys.bot(bot_id), mapping=fields)
            pipe.set(keys.token(hash_token(token)), bot_id)
            pipe.zadd(keys.BOTS, {bot_id: seq})
            if ladder:
                pipe.sadd(keys.LADDER_MEMBERS, bot_id)

        replies.transaction(self.redis, register, keys.BOT_NAMES)
        return bot, token

    def get_bot(self, bot_id: str) -> RegisteredBot | None:
        raw = replies.fields(self.redis.hgetall(keys.bot(bot_id)))
        return codecs.bot_from(raw) if raw else None

    def get_bots(self, bot_ids: Iterable[str]) -> dict[str, RegisteredBot]:
        """The stored bots among ``bot_ids``, by id, in the order given (one round trip)."""
        ids = list(dict.fromkeys(bot_ids))
        found = {}
        for bot_id, fields in zip(ids, self._hashes(keys.bot(i) for i in ids), strict=True):
            if fields:
                found[bot_id] = codecs.bot_from(fields)
        return found

    def bot_names(self, bot_ids: Iterable[str]) -> dict[str, str]:
        """The names of the stored bots among ``bot_ids``, by id (one round trip, each bot's
        name alone: the ladder and the pages show many bots, and need nothing else of them)."""
        ids = list(dict.fromkeys(bot_ids))
        pipe = self.redis.pipeline(transaction=False)
        for bot_id in ids:
            pipe.hget(keys.bot(bot_id), "name")
        named = zip(ids, (replies.text(reply) for reply in pipe.execute()), strict=True)
        return {bot_id: name for bot_id, name in named if name is not None}

    def _hashes(self, names: Iterable[str]) -> list[dict[str, str]]:
        """``HGETALL`` of every key in one round trip, in order (empty for a missing key)."""
        pipe = self.redis.pipeline(transaction=False)
        for key in names:
            pipe.hgetall(key)
        return [replies.fields(raw) for raw in pipe.execute()]

    def list_bots(self, *, page: int, per_page: int) -> Page[RegisteredBot]:
        ids, total = self._page(keys.BOTS, page, per_page)
        return Page(list(self.get_bots(ids).values()), total, page, per_page)

    def bot_for_token(self, token: str) -> str | None:
        """The id of the bot ``token`` manages, or None."""
        token_hash = hash_token(token)
        bot_id = replies.text(self.redis.get(keys.token(token_hash)))
        if bot_id is None:
            return None
        stored = replies.text(self.redis.hget(keys.bot(bot_id), "token_sha256"))
        if stored is None or not hmac.compare_digest(stored, token_hash):
            return None
        return bot_id

    def update_bot(self, bot_id: str, **changes: Unpack[BotChanges]) -> RegisteredBot:
        """Change :class:`BotChanges` fields of a bot that is not retired."""
        bot = self.changeable(bot_id)
        updated = replace(bot, **changes, updated_at=self._now())
        pipe = self.redis.pipeline()
        pipe.hset(keys.bot(bot_id), mapping=codecs.bot_fields(updated))
        indexes = (
            (updated.allow_human_games, keys.HUMAN_BOTS),
            (updated.ladder, keys.LADDER_MEMBERS),
        )
        for listed, index in indexes:
            if listed:
                pipe.sadd(index, bot_id)
            else:
                pipe.srem(index, bot_id)
        pipe.execute()
        return updated

    def endpoint_verified(self, bot_id: str, version: str) -> RegisteredBot:
        """The bot answered a signed ``hello`` as ``version``: a pending bot becomes active."""
        bot = self.changeable(bot_id)
        status = BotStatus.ACTIVE if bot.status is BotStatus.PENDING else bot.status
        updated = replace(bot, version=version, status=status, updated_at=self._now())
        self.redis.hset(keys.bot(bot_id), mapping=codecs.bot_fields(updated))
        return updated

    def human_game_bots(self) -> list[RegisteredBot]:
        """The active bots whose owners allow human games, by name."""
        found = self.get_bots(sorted(replies.texts(self.redis.smembers(keys.HUMAN_BOTS))))
        playing = [
            b for b in found.values() if b.allow_human_games and b.status is BotStatus.ACTIVE
        ]
        return sorted(playing, key=lambda b: b.name.casefold())

    def set_bot_status(self, bot_id: str, status: BotStatus) -> RegisteredBot:
        bot = self.changeable(bot_id)
        updated = replace(bot, status=status, updated_at=self._now())
        self.redis.hset(keys.bot(bot_id), mapping=codecs.bot_fields(updated))
        return updated

    def changeable(self, bot_id: str) -> RegisteredBot:
        """The bot, if it may still be changed (it exists and is not retired)."""
        bot = self.get_bot(bot_id)
        if bot is None:
            raise NotFoundError(f"there is no bot {bot_id}")
        if bot.status is BotStatus.RETIRED:
            raise WrongStateError(f"bot {bot_id} is retired: a retired bot cannot be changed")
        return bot

    def rotate_secret(self, bot_id: str, secret: str, *, grace_s: float) -> None:
        """Sign with ``secret`` from now on; the current secret stays valid for ``grace_s``
        seconds so that matches in flight still verify."""
        self.changeable(bot_id)
        current = replies.blob(self.redis.hget(keys.bot(bot_id), "secret"))
        assert current is not None
        self.redis.hset(
            keys.bot(bot_id),
            mapping={
                "secret": self._encrypt(secret),
                "previous_secret": current,
                "previous_until": str(self._clock() + grace_s),
                "updated_at": self._now(),
            },
        )

    def signing_secrets(self, bot_id: str) -> list[str]:
        """The secrets to sign a request to ``bot_id`` with: the current one, and the previous
        one while its grace period lasts (``bot_sdk.signing.sign`` takes the list)."""
        fields = ["secret", "previous_secret", "previous_until"]
        current, previous, until = replies.blobs(self.redis.hmget(keys.bot(bot_id), fields))
        if current is None:
            raise NotFoundError(f"there is no bot {bot_id}")
        result = [self._fernet.decrypt(current).decode()]
        if previous is not None and until is not None and float(until) > self._clock():
            result.append(self._fernet.decrypt(previous).decode())
        return result

    def _encrypt(self, secret: str) -> bytes:
        return self._fernet.encrypt(secret.encode("utf-8"))

    # -- tournaments ----------------------------------------------------------------------------

    def create_tournament(
        self,
        spec: TournamentSpec,
        *,
        schedule_id: str | None = None,
        ladder: bool = False,
        gauntlet: Gauntlet | None = None,
    ) -> str:
        """Store a new tournament with a deal secret drawn now: only its commitment is ever
        shown before the tournament ends (:meth:`deal_secret` is for the workers). A ladder
        table is listed with the ladder's tables, and open until :meth:`close_ladder_table`; a
        gauntlet with the gauntlets, and live until :meth:`end_gauntlet`."""
        tournament_id = new_id("t")
        now = self._now()
        secret = draw_secret()
        tournament = Tournament(
            tournament_id,
            spec,
            TournamentStatus.CREATED,
            done=0,
            total=0,
            created_at=now,
            updated_at=now,
            schedule_id=schedule_id,
            deal_commitment=commitment_of(secret),
            ladder=ladder,
            gauntlet=gauntlet,
        )
        fields = {
            **codecs.tournament_fields(tournament),
            "deal_secret": self._fernet.encrypt(secret),
        }
        pipe = self.redis.pipeline()
        pipe.hset(keys.tournament(tournament_id), mapping=fields)
        index = keys.LADDER_TABLES if ladder else keys.GAUNTLETS if gauntlet else keys.TOURNAMENTS
        seq = self._seq()
        pipe.zadd(index, {tournament_id: seq})
        if ladder:
            pipe.hset(keys.LADDER_OPEN, tournament_id, codecs.dumps(list(spec.participants)))
        if gauntlet:
            pipe.hset(keys.GAUNTLETS_LIVE, tournament_id, gauntlet.started_by)
            for bot_id in (gauntlet.candidate, gauntlet.baseline):
                pipe.zadd(keys.bot_gauntlets(bot_id), {tournament_id: seq})
        pipe.execute()
        return tournament_id

    def deal_secret(self, tournament_id: str) -> bytes:
        """The tournament's deal secret: the workers deal from it; the API shows it once the
        tournament is over."""
        stored = replies.blob(self.redis.hget(keys.tournament(tournament_id), "deal_secret"))
        if stored is None:
            raise NotFoundError(f"tournament {tournament_id!r} has no deal secret")
        return self._fernet.decrypt(stored)

    def revealed_secret(self, tournament: Tournament) -> bytes | None:
        """The deal secret, once the tournament is over (done or cancelled); None before."""
        if not tournament.status.is_over or not tournament.deal_commitment:
            return None
        return self.deal_secret(tournament.id)

    def get_tournament(self, tournament_id: str) -> Tournament | None:
        pipe = self.redis.pipeline(transaction=False)
        pipe.hgetall(keys.tournament(tournament_id))
        pipe.smembers(keys.failed(tournament_id))
        raw, failed = pipe.execute()
        if not raw:
            return None
        tournament = codecs.tournament_from(tournament_id, replies.fields(raw))
        if not failed:
            return tournament
        ids = sorted(replies.texts(failed))
        pipe = self.redis.pipeline(transaction=False)
        for match_id in ids:
            pipe.hget(keys.match(match_id), "failure")
        failures = [
            MatchFailure(match_id, replies.text(reason) or "")
            for match_id, reason in zip(ids, pipe.execute(), strict=True)
        ]
        return replace(tournament, failures=tuple(failures))

    def list_tournaments(
        self, *, page: int, per_page: int, ladder: bool = False
    ) -> Page[Tournament]:
        """The operators' tournaments, or the ladder's tables, newest first."""
        ids, total = self._page(keys.LADDER_TABLES if ladder else keys.TOURNAMENTS, page, per_page)
        found = [t for t in map(self.get_tournament, ids) if t]
        return Page(found, total, page, per_page)

    # -- gauntlets ------------------------------------------------------------------------------

    def list_gauntlets(
        self, *, page: int, per_page: int, bot_id: str | None = None
    ) -> Page[Tournament]:
        """The gauntlets, newest first: all, or those ``bot_id`` is the candidate or the
        baseline of."""
        index = keys.GAUNTLETS if bot_id is None else keys.bot_gauntlets(bot_id)
        ids, total = self._page(index, page, per_page)
        return Page([t for t in map(self.get_tournament, ids) if t], total, page, per_page)

    def live_gauntlets(self) -> dict[str, str]:
        """The gauntlets not over, each with who started it."""
        return replies.fields(self.redis.hgetall(keys.GAUNTLETS_LIVE))

    def gauntlet_deals(self, tournament_id: str) -> list[GauntletDeal]:
        """The gauntlet's deals whose rotations are over, in the order they were dealt."""
        raw = replies.fields(self.redis.hgetall(keys.gauntlet_deals(tournament_id)))
        deals = [codecs.from_json(text, GauntletDeal) for text in raw.values()]
        return sorted(deals, key=lambda d: d.deal)

    def note_gauntlet_deal(self, tournament_id: str, deal: GauntletDeal) -> None:
        """Keep a deal's result (again: it is the same result, from the same recorded matches)."""
        self.redis.hset(keys.gauntlet_deals(tournament_id), str(deal.deal), codecs.to_json(deal))

    def end_gauntlet(self, tournament_id: str, verdict: str | None) -> None:
        """Take the gauntlet off the live ones and keep its test's ``verdict``: a running
        gauntlet is then done, its planned total now what it played (None: it is over without
        one, cancelled). Ending it again changes nothing."""
        key = keys.tournament(tournament_id)

        def end(pipe: Pipeline) -> None:
            raw = replies.fields(pipe.hgetall(key))
            pipe.multi()
            pipe.hdel(keys.GAUNTLETS_LIVE, tournament_id)
            if not raw or not raw.get("gauntlet"):
                return
            tournament = codecs.tournament_from(tournament_id, raw)
            assert tournament.gauntlet is not None
            if verdict is None or tournament.gauntlet.verdict != "running":
                return
            fields = {
                "gauntlet": codecs.to_json(replace(tournament.gauntlet, verdict=verdict)),
                "updated_at": self._now(),
            }
            if tournament.status in (TournamentStatus.RUNNING, TournamentStatus.DONE_WITH_FAILURES):
                fields |= {"status": TournamentStatus.DONE.value, "total": str(tournament.done)}
            pipe.hset(key, mapping=fields)

        replies.transaction(self.redis, end, key)

    # -- the ladder's tables --------------------------------------------------------------------

    def ladder_members(self) -> list[str]:
        """The registered bots whose owners entered them in the ladder (any status)."""
        return sorted(replies.texts(self.redis.smembers(keys.LADDER_MEMBERS)))

    def open_ladder_tables(self) -> dict[str, tuple[str, ...]]:
        """The ladder's tables not yet closed, each with its participants."""
        raw = replies.fields(self.redis.hgetall(keys.LADDER_OPEN))
        return {tid: tuple(json.loads(seats)) for tid, seats in raw.items()}

    def close_ladder_table(self, tournament_id: str) -> None:
        self.redis.hdel(keys.LADDER_OPEN, tournament_id)

    def reopen_ladder_table(self, tournament_id: str, participants: Sequence[str]) -> None:
        """List a closed ladder table as open again (a rotation of it is played again)."""
        self.redis.hset(keys.LADDER_OPEN, tournament_id, codecs.dumps(list(participants)))

    def note_ladder_round(
        self,
        tables: Sequence[str],
        rerating_error: str = "",
        passed_over: Mapping[str, int] | None = None,
    ) -> None:
        """Keep when the matchmaker ran, the tables it seated and why its re-rating stopped, if
        it did (for ``/api/ladder/status``), and, when given, the members it passed over
        (:func:`arena.matchmaker.passed_over_after`: every other member's count is 0)."""
        fields = {
            "at": self._now(),
            "tables": codecs.dumps(list(tables)),
            "rerating_error": rerating_error,
        }
        pipe = self.redis.pipeline()
        pipe.hset(keys.LADDER_ROUND, mapping=fields)
        pipe.hincrby(keys.LADDER_ROUND, "rounds", 1)
        if passed_over is not None:
            pipe.delete(keys.LADDER_PASSED)
            if passed_over:
                pipe.hset(keys.LADDER_PASSED, mapping=dict(passed_over))
        pipe.execute()

    def passed_over(self) -> dict[str, int]:
        """The ladder members the matchmaker passed over (each had room and was not seated),
        each with the rounds in a row."""
        raw = replies.fields(self.redis.hgetall(keys.LADDER_PASSED))
        return {bot_id: int(rounds) for bot_id, rounds in raw.items()}

    def last_ladder_round(self) -> dict[str, Any]:
        """When the matchmaker last ran, the tables it seated then, why its re-rating stopped
        (None if it did not), how many rounds ran, and the members it passed over
        (:meth:`passed_over`)."""
        raw = replies.fields(self.redis.hgetall(keys.LADDER_ROUND))
        return {
            "at": raw.get("at"),
            "tables": json.loads(raw.get("tables", "[]")),
            "rerating_error": raw.get("rerating_error") or None,
            "rounds": int(raw.get("rounds", 0)),
            "passed_over": self.passed_over(),
        }

    def move_tournament(
        self,
        tournament_id: str,
        to: TournamentStatus,
        *,
        allowed_from: Sequence[TournamentStatus],
    ) -> Tournament:
        """Change the status if it is one of ``allowed_from`` (checked and set atomically)."""
        key = keys.tournament(tournament_id)

        def move(pipe: Pipeline) -> None:
            status = replies.text(pipe.hget(key, "status"))
            if status is None:
                raise NotFoundError(f"there is no tournament {tournament_id}")
            current = TournamentStatus(status)
            if current not in allowed_from:
                raise WrongStateError(
                    f"tournament {tournament_id} is {current.value}; it can be "
                    f"{to.value} only when {' or '.join(s.value for s in allowed_from)}"
                )
            pipe.multi()
            pipe.hset(key, mapping={"status": to.value, "updated_at": self._now()})

        replies.transaction(self.redis, move, key)
        tournament = self.get_tournament(tournament_id)
        assert tournament is not None
        return tournament

    def set_tournament_total(self, tournament_id: str, total: int) -> None:
        """The number of matches the tournament plays (the workers set it when expanding)."""
        self.redis.hset(keys.tournament(tournament_id), "total", str(total))

    # -- schedules ------------------------------------------------------------------------------

    def create_schedule(self, cron: str, template: TournamentSpec) -> Schedule:
        schedule = Schedule(new_id("s"), cron, template, self._now())
        self.redis.hset(keys.SCHEDULES, schedule.id, codecs.to_json(schedule))
        return schedule

    def list_schedules(self) -> list[Schedule]:
        raw = replies.fields(self.redis.hgetall(keys.SCHEDULES))
        schedules = [codecs.from_json(v, Schedule) for v in raw.values()]
        return sorted(schedules, key=lambda s: (s.created_at, s.id))

    def delete_schedule(self, schedule_id: str) -> bool:
        return replies.boolean(self.redis.hdel(keys.SCHEDULES, schedule_id))

    # -- matches --------------------------------------------------------------------------------

    def create_match(
        self,
        match_id: str,
        *,
        seats: Sequence[str],
        tournament_id: str | None = None,
        table_id: str | None = None,
        deal_label: str = "",
    ) -> None:
        """Announce a planned match (the workers do, when expanding a tournament) and the label
        of its deal sequence; a second call for the same id changes nothing."""
        if not replies.boolean(
            self.redis.hsetnx(keys.match(match_id), "status", MatchStatus.QUEUED.value)
        ):
            return
        pipe = self.redis.pipeline()
        planned = Match(
            match_id,
            tournament_id,
            table_id,
            tuple(seats),
            MatchStatus.QUEUED,
            self._now(),
            deal_label=deal_label,
        )
        pipe.hset(keys.match(match_id), mapping=codecs.planned_match_fields(planned))
        if tournament_id and deal_label:
            pipe.hincrby(keys.unfinished_deals(tournament_id), deal_label, 1)
        self._index_match(pipe, match_id, seats, tournament_id, self._seq())
        pipe.execute()

    def mark_match_running(self, match_id: str) -> None:
        """The match started; a recorded match stays done."""
        if replies.blob(self.redis.hget(keys.match(match_id), "result")) is None:
            self.redis.hset(keys.match(match_id), "status", MatchStatus.RUNNING.value)

    def embargo(self, match: Match) -> Embargo | None:
        """Why nothing about ``match``'s hands may be shown yet, or None: its deal is still being
        played by another match of its tournament, and the tournament is not over."""
        if match.tournament_id is None or not match.deal_label:
            return None
        pipe = self.redis.pipeline(transaction=False)
        pipe.hget(keys.tournament(match.tournament_id), "status")
        pipe.hget(keys.unfinished_deals(match.tournament_id), match.deal_label)
        status, unfinished = map(replies.text, pipe.execute())
        if status is None or TournamentStatus(status).is_over:
            return None
        if unfinished is None or int(unfinished) <= 0:
            return None
        return Embargo(match.tournament_id, match.deal_label, int(unfinished))

    def kept_replay_key(self, candidate: bytes) -> bytes:
        """The replay key (PEM) kept in Redis for the whole arena: ``candidate``, if no key was
        kept before (:meth:`arena.context.Arena.replay_key` decides when it is used)."""
        self.redis.set(keys.REPLAY_KEY, candidate, nx=True)
        pem = replies.blob(self.redis.get(keys.REPLAY_KEY))
        assert pem is not None
        return pem

    def verification(self, match_id: str, fingerprint: str) -> dict[str, Any] | None:
        """The stored verification of the match's log under ``fingerprint`` (what it depends
        on: the log, the key, the revealed secret), or None."""
        raw = replies.blob(self.redis.hget(keys.verifications(match_id), fingerprint))
        return None if raw is None else dict(json.loads(raw))

    def keep_verification(self, match_id: str, fingerprint: str, report: Mapping[str, Any]) -> None:
        self.redis.hset(keys.verifications(match_id), fingerprint, codecs.dumps(report))

    def get_match(self, match_id: str) -> Match | None:
        raw = replies.fields(self.redis.hgetall(keys.match(match_id)))
        return codecs.match_from(match_id, raw) if "seats" in raw else None

    def list_matches(
        self,
        *,
        page: int,
        per_page: int,
        tournament_id: str | None = None,
        bot_id: str | None = None,
    ) -> Page[Match]:
        indexes = [keys.tournament_matches(tournament_id)] if tournament_id else []
        indexes += [keys.bot_matches(bot_id)] if bot_id else []
        if len(indexes) < 2:
            ids, total = self._page(indexes[0] if indexes else keys.MATCHES, page, per_page)
        else:
            every = replies.texts(self.redis.zinter(indexes, aggregate="MAX"))[::-1]
            start = (page - 1) * per_page
            ids, total = every[start : start + per_page], len(every)
        return Page(self.get_matches(ids), total, page, per_page)

    def faults(self, bot_id: str, *, page: int, per_page: int) -> Page[BotFault]:
        """A participant's faults, newest first (the last :data:`~arena.store.keys.FAULTS_KEPT`)."""
        start = (page - 1) * per_page
        pipe = self.redis.pipeline(transaction=False)
        pipe.lrange(keys.faults(bot_id), start, start + per_page - 1)
        pipe.llen(keys.faults(bot_id))
        raw, total = pipe.execute()
        found = [codecs.from_json(item, BotFault) for item in replies.texts(raw)]
        return Page(found, replies.number(total), page, per_page)

    def deal_matches(self, tournament_id: str, deal_label: str) -> list[Match]:
        """The tournament's matches that play the deal ``deal_label`` (its rotations)."""
        ids = replies.texts(self.redis.zrange(keys.tournament_matches(tournament_id), 0, -1))
        pipe = self.redis.pipeline(transaction=False)
        for match_id in ids:
            pipe.hget(keys.match(match_id), "deal_label")
        labels = zip(ids, map(replies.text, pipe.execute()), strict=True)
        return self.get_matches([m for m, label in labels if label == deal_label])

    # -- divergences ----------------------------------------------------------------------------

    def deals_to_index(self) -> list[tuple[str, str]]:
        """The deals (tournament id, deal label) whose last match is recorded and whose
        divergences are not yet indexed."""
        found = (json.loads(d) for d in replies.texts(self.redis.smembers(keys.DEALS_TO_INDEX)))
        return sorted((str(tid), str(label)) for tid, label in found)

    def index_divergences(
        self, deal: tuple[str, str], entries: Mapping[str, Sequence[DivergenceEntry]]
    ) -> None:
        """Keep each participant's ``entries`` of ``deal`` and take the deal off
        :meth:`deals_to_index`, at once. Idempotent: an entry is kept under its id."""
        pipe = self.redis.pipeline()
        for bot_id, found in entries.items():
            if found:
                rows = {e.id: codecs.to_json(e) for e in found}
                pipe.hset(keys.divergence_entries(bot_id), mapping=rows)
                pipe.zadd(keys.divergences(bot_id), {e.id: e.cost for e in found})
        pipe.srem(keys.DEALS_TO_INDEX, codecs.dumps(list(deal)))
        pipe.execute()

    def divergences(self, bot_id: str, *, page: int, per_page: int) -> Page[DivergenceEntry]:
        """A participant's divergences, costliest first."""
        ids, total = self._page(keys.divergences(bot_id), page, per_page)
        raw = self.redis.hmget(keys.divergence_entries(bot_id), ids) if ids else []
        found = [codecs.from_json(r, DivergenceEntry) for r in replies.blobs(raw) if r]
        return Page(found, total, page, per_page)

    def get_matches(self, match_ids: Sequence[str]) -> list[Match]:
        """The stored matches among ``match_ids``, in the order given (one round trip)."""
        found: list[Match] = []
        hashes = self._hashes(keys.match(m) for m in match_ids)
        for match_id, fields in zip(match_ids, hashes, strict=True):
            if "seats" in fields:
                found.append(codecs.match_from(match_id, fields))
        return found

    def replay_blob(self, match_id: str, *, keep: bool = True) -> bytes | None:
        """The packed sealed log (``replays.integrity.unpack`` reads it), None before the match
        is recorded: read by the name its record keeps from the cache, else from Redis if the
        archive has not taken it yet (:meth:`held_logs`), else from the archive; checked (an
        :class:`~arena.errors.ArchiveError` if neither can return exactly that log: never
        another) and, unless ``keep`` is false (a reader of every log, which would fill Redis
        with them), kept ``replay_cache_s`` in Redis for the next reader, in the form that reads
        without rebuilding (:func:`replays.packing.whole`), bound to its name by an HMAC (an
        entry that is not that log's is dropped, never served). A log recorded before the
        archive is read from its own key until it is migrated (:meth:`migrate_replay`)."""
        digest = replies.text(self.redis.hget(keys.match(match_id), "log_sha256"))
        if digest is None:
            return replies.blob(self.redis.get(keys.replay(match_id)))
        pipe = self.redis.pipeline(transaction=False)
        pipe.get(keys.log_cache(digest))
        pipe.hget(keys.HELD_LOGS, digest)
        cached, held = replies.blobs(pipe.execute())
        if cached is not None:
            found = self._from_cache(digest, cached)
            if found is not None:
                return found
            self.redis.delete(keys.log_cache(digest))  # another log's, or damaged: never served
        try:
            if held is not None and digest_of(held) == digest:
                blob = whole(held)
            else:  # not held, or (damaged) held: the archive's, if it has it
                blob = whole(self.archive.get(digest))
        except (IntegrityError, PackingError) as error:  # intact, yet not the sealed log rebuilt
            raise ArchiveError(f"the log {digest} does not read: {error}") from None
        if keep and self._replay_cache_s > 0:
            entry = self._cached(digest, blob)
            self.redis.set(keys.log_cache(digest), entry, ex=self._replay_cache_s)
        return blob

    def _cached(self, digest: str, blob: bytes) -> bytes:
        """A cache entry for the log named ``digest``: ``blob`` after its HMAC over both, so that
        an entry is never taken for another log's (a key the arena's secret key makes)."""
        return self._cache_mac(digest, blob) + blob

    def _from_cache(self, digest: str, entry: bytes) -> bytes | None:
        """The log a cache entry holds, if it is the entry :meth:`_cached` made for ``digest``."""
        mac, blob = entry[:MAC_BYTES], entry[MAC_BYTES:]
        return blob if hmac.compare_digest(mac, self._cache_mac(digest, blob)) else None

    def _cache_mac(self, digest: str, blob: bytes) -> bytes:
        return hmac.new(self._cache_key, digest.encode() + blob, hashlib.sha256).digest()

    def record_result(self, match_id: str, sealed: Mapping[str, Any]) -> bool:
        """Store a finished match's sealed log, its result, the tournament's standings and
        progress and the ladder, all at once. Returns False, changing nothing, if the match was
        already recorded: a replayed job cannot count twice.

        The log is written to the archive first, durably, and the result names it. If the
        archive cannot take it, the log is held in Redis in the result's own transaction
        (:meth:`held_logs`) and the result names it all the same, until it is moved into the
        archive; past ``hold_bytes`` of logs held, the archive's error is raised and nothing is
        recorded (the match's job fails this run)."""
        log = MatchLog.from_json(sealed)
        if log.match_id != match_id:
            raise ValueError(f"the log is of match {log.match_id!r}, not {match_id!r}")
        blob = pack(sealed)
        digest = digest_of(blob)
        unarchived: ArchiveError | None = None
        try:
            self.archive.put(blob)  # durable before the result names it
        except ArchiveError as error:
            unarchived = error
        seats = [s.bot_id for s in log.seats]
        rated = is_rated(log)
        watched = [keys.match(match_id)]
        if log.tournament_id:
            tid = log.tournament_id
            watched += [keys.tournament(tid), keys.standings(tid), keys.failed(tid)]
        if rated:
            self.ratings_scale()  # a store's first rated match names its ratings' scale
            watched += [keys.rating(bot_id) for bot_id in seats]
            watched += [keys.rating_versions(bot_id) for bot_id in seats]
            watched.append(keys.RATINGS_SCALE)
        if unarchived is not None:
            watched.append(keys.HELD_BYTES)
        seq = self._seq()

        def record(pipe: Pipeline) -> bool:
            if replies.blob(pipe.hget(keys.match(match_id), "result")) is not None:
                return False
            if unarchived is not None:
                held = int(replies.text(pipe.get(keys.HELD_BYTES)) or 0)
                if held + len(blob) > self._hold_bytes:
                    raise ArchiveError(
                        f"{unarchived}; and the logs held in Redis until the archive takes them "
                        f"are at their bound ({held:,} bytes; GONGZHU_ARCHIVE_HOLD_MB)"
                    )
            self._write_result(pipe, log, (digest, len(blob)), rated, seq)
            if unarchived is not None:
                pipe.hset(keys.HELD_LOGS, mapping={digest: blob})
                pipe.incrby(keys.HELD_BYTES, len(blob))
            if self._replay_cache_s > 0:  # its first viewers, soon, need not rebuild it
                entry = self._cached(digest, quick(canonical(sealed)))
                pipe.set(keys.log_cache(digest), entry, ex=self._replay_cache_s)
            return True

        return replies.transaction(self.redis, record, *watched)

    def _write_result(
        self, pipe: Pipeline, log: MatchLog, archived: tuple[str, int], rated: bool, seq: int
    ) -> None:
        """Read what the update needs (the pipeline is watching), then queue every write."""
        seats = [s.bot_id for s in log.seats]
        tid = log.tournament_id
        standings: dict[str, Standing] = {}
        tournament: dict[str, str] = {}
        failed, was_failed = 0, False
        label = log.deals.label if log.deals.scheme is DealScheme.COMMITTED else ""
        last_of_deal = False
        if tid:
            tournament = replies.fields(pipe.hgetall(keys.tournament(tid)))
            if label:  # its deal's count is read while the tournament is watched
                left = replies.text(pipe.hget(keys.unfinished_deals(tid), label))
                last_of_deal = left is not None and int(left) <= 1
            failed = replies.number(pipe.scard(keys.failed(tid)))
            was_failed = replies.boolean(pipe.sismember(keys.failed(tid), log.match_id))
            stored = {b: self._standing_in(pipe, tid, b) for b in dict.fromkeys(seats)}
            standings = add_to_standings(stored, log)
        registered = [
            (seat, info.bot_id)
            for seat, info in enumerate(log.seats)
            if info.kind == "http" and replies.boolean(pipe.exists(keys.bot(info.bot_id)))
        ]
        now = self._now()
        ratings: list[Rating] = []
        before: list[Rating] = []
        # an unrated match reads no rating; ratings awaiting re-rating are not moved (the
        # re-rating rates this match too, from the journal of rated matches)
        if rated and replies.text(pipe.get(keys.RATINGS_SCALE)) == SCALE:
            before = [self._version_rating(pipe, s.bot_id, s.version) for s in log.seats]
            ratings = rate(log, before, at=now)
        pipe.multi()
        pipe.hset(
            keys.match(log.match_id),
            mapping=codecs.recorded_match_fields(log, finished_at=log.finished_at or now),
        )
        self._name_log(pipe, log.match_id, *archived)
        pipe.hdel(keys.match(log.match_id), "failure")
        if ratings:  # what the match did to each seat's rating, for a ruling to withdraw
            effect = codecs.to_json(list(zip(before, ratings, strict=True)))
            pipe.hset(keys.match(log.match_id), "rating_effect", effect)
        pipe.hsetnx(keys.match(log.match_id), "created_at", log.started_at or now)
        self._index_match(pipe, log.match_id, seats, tid, seq, only_new=True)
        for seat, bot_id in registered:  # counters only: a bot's other fields are not rewritten
            pipe.hincrby(keys.bot(bot_id), "faults", log.faults[seat])
            pipe.hincrby(keys.bot(bot_id), "fallbacks", own_fallbacks(log, seat))
        for bot_id, faults in faults_of(log).items():
            if faults:
                pipe.lpush(keys.faults(bot_id), *map(codecs.to_json, faults))
                pipe.ltrim(keys.faults(bot_id), 0, keys.FAULTS_KEPT - 1)
        if tid and tournament:
            if label:
                pipe.hincrby(keys.unfinished_deals(tid), label, -1)
            if last_of_deal:  # for arena.divergences to index, once (it removes it then)
                pipe.sadd(keys.DEALS_TO_INDEX, codecs.dumps([tid, label]))
            for bot_id, standing in standings.items():
                pipe.hset(keys.standings(tid), bot_id, codecs.to_json(standing))
            if was_failed:  # it failed, and was played after all (queued again by hand)
                pipe.srem(keys.failed(tid), log.match_id)
                failed -= 1
            done = int(tournament.get("done", 0)) + 1
            status = _status_after(tournament, done=done, failed=failed)
            fields = {"done": str(done), "status": status, "updated_at": now}
            pipe.hset(keys.tournament(tid), mapping=fields)
        for rating in ratings:
            point = RatingPoint(log.match_id, rating.mu, rating.sigma, now)
            pipe.set(keys.rating(rating.bot_id), codecs.to_json(rating))
            pipe.hset(keys.rating_versions(rating.bot_id), rating.version, codecs.to_json(rating))
            pipe.zadd(keys.LADDER, {rating.bot_id: rating.conservative})
            pipe.rpush(keys.history(rating.bot_id, rating.version), codecs.to_json(point))
        if rated:
            pipe.rpush(keys.RATED, codecs.dumps([log.match_id, now]))
            for bot_id, opponent, figures in head_to_head(log):
                for figure, value in figures.items():
                    pipe.hincrby(keys.head_to_head(bot_id), f"{opponent}|{figure}", value)

    @staticmethod
    def _name_log(pipe: Pipeline, match_id: str, digest: str, size: int) -> None:
        """Queue the archived log's name and size in its match's record, and the name among
        the blobs that matches reference."""
        pipe.hset(keys.match(match_id), mapping=codecs.log_fields(digest, size))
        pipe.sadd(keys.LOGS, digest)

    # -- the archive --------------------------------------------------------------------------

    def replays_in_redis(self) -> list[str]:
        """The matches whose logs are still kept in Redis (recorded before the archive)."""
        found = []
        for key in self.redis.scan_iter(match=keys.REPLAY_PATTERN, count=1000):
            name = replies.blob(key)
            if name is not None:
                found.append(keys.replay_match_id(name))
        return sorted(found)

    def migrate_replay(self, match_id: str, verified: Callable[[bytes], bytes]) -> bool:
        """Move the match's log from Redis to the archive: ``verified`` turns the Redis blob
        into the blob to archive (raising if the log is not what was sealed); it is written,
        read back and compared, then the match names it and the Redis key goes, in one
        transaction. Returns False if there was nothing to move (moved meanwhile). Stopped at
        any point, it leaves the log readable, and is done again from the start."""
        key = keys.replay(match_id)
        blob = replies.blob(self.redis.get(key))
        if blob is None:
            return False
        archived = verified(blob)
        digest = self.archive.put(archived)
        self.archive.get(digest)  # read back: an ArchiveError unless it returns it intact

        def move(pipe: Pipeline) -> bool:
            if replies.blob(pipe.get(key)) != blob:
                return False
            pipe.multi()
            self._name_log(pipe, match_id, digest, len(archived))
            pipe.delete(key)
            return True

        return replies.transaction(self.redis, move, key)

    def held_logs(self) -> list[str]:
        """The names of the logs held in Redis because the archive could not take them when
        their matches were recorded (:mod:`arena.archiving` moves them)."""
        return sorted(replies.texts(self.redis.hkeys(keys.HELD_LOGS)))

    def held_log(self, digest: str) -> bytes | None:
        """The stored log held under ``digest`` (as it was packed: unchecked), or None."""
        return replies.blob(self.redis.hget(keys.HELD_LOGS, digest))

    def held_size(self) -> tuple[int, int]:
        """How many logs are held in Redis, and their bytes."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.hlen(keys.HELD_LOGS)
        pipe.get(keys.HELD_BYTES)
        count, size = pipe.execute()
        return replies.number(count), int(replies.text(size) or 0)

    def release_held(self, digest: str) -> bool:
        """Forget the held log ``digest`` (the archive has it now); False if it was not held."""

        def release(pipe: Pipeline) -> bool:
            size = replies.number(pipe.hstrlen(keys.HELD_LOGS, digest))
            if not size:
                return False
            pipe.multi()
            pipe.hdel(keys.HELD_LOGS, digest)
            pipe.decrby(keys.HELD_BYTES, size)
            return True

        return replies.transaction(self.redis, release, keys.HELD_LOGS)

    def log_referenced(self, digest: str) -> bool:
        """Whether a recorded match names the archive's blob ``digest``."""
        return replies.boolean(self.redis.sismember(keys.LOGS, digest))

    def _index_match(
        self,
        pipe: Pipeline,
        match_id: str,
        seats: Sequence[str],
        tournament_id: str | None,
        seq: int,
        *,
        only_new: bool = False,
    ) -> None:
        indexes = [keys.MATCHES, *(keys.bot_matches(b) for b in set(seats))]
        if tournament_id:
            indexes.append(keys.tournament_matches(tournament_id))
        for key in indexes:
            pipe.zadd(key, {match_id: seq}, nx=only_new)

    # -- failed matches -------------------------------------------------------------------------

    def mark_match_failed(self, match_id: str, reason: str) -> bool:
        """Note that the match's job failed for good, and why. A tournament whose every match is
        now recorded or failed is ``done_with_failures``. Returns False, changing nothing, if
        the match is recorded or already failed (or not a tournament's)."""
        match_key = keys.match(match_id)
        tid = replies.text(self.redis.hget(match_key, "tournament_id"))
        if not tid:
            return False

        def mark(pipe: Pipeline) -> bool:
            match_status = replies.text(pipe.hget(match_key, "status"))
            marked = replies.boolean(pipe.sismember(keys.failed(tid), match_id))
            if match_status is None or match_status == MatchStatus.DONE or marked:
                return False
            tournament = replies.fields(pipe.hgetall(keys.tournament(tid)))
            failed = replies.number(pipe.scard(keys.failed(tid))) + 1
            status = _status_after(tournament, done=int(tournament["done"]), failed=failed)
            pipe.multi()
            pipe.hset(match_key, mapping={"status": MatchStatus.FAILED.value, "failure": reason})
            pipe.sadd(keys.failed(tid), match_id)
            pipe.hset(keys.tournament(tid), mapping={"status": status, "updated_at": self._now()})
            return True

        watched = (match_key, keys.tournament(tid), keys.failed(tid))
        return replies.transaction(self.redis, mark, *watched)

    def match_statuses(self, match_ids: Sequence[str]) -> dict[str, MatchStatus]:
        """The status of each stored match among ``match_ids`` (one round trip)."""
        pipe = self.redis.pipeline(transaction=False)
        for match_id in match_ids:
            pipe.hget(keys.match(match_id), "status")
        found = zip(match_ids, map(replies.text, pipe.execute()), strict=True)
        return {m: MatchStatus(status) for m, status in found if status is not None}

    def failed_matches(self, tournament_id: str) -> list[str]:
        return sorted(replies.texts(self.redis.smembers(keys.failed(tournament_id))))

    def unfail_matches(self, tournament_id: str, match_ids: Sequence[str]) -> list[str]:
        """Put those of ``match_ids`` that are still failed back to ``queued`` (their jobs are
        queued again) and the tournament back to ``running``; returns the ids it moved."""
        tournament, failed = keys.tournament(tournament_id), keys.failed(tournament_id)

        def unfail(pipe: Pipeline) -> list[str]:
            still = [m for m in match_ids if replies.boolean(pipe.sismember(failed, m))]
            stored = replies.text(pipe.hget(tournament, "status"))
            status = None if stored is None else TournamentStatus(stored)
            after = requeued_status(status) if still and status else status
            pipe.multi()
            for match_id in still:
                pipe.srem(failed, match_id)
                pipe.hset(keys.match(match_id), "status", MatchStatus.QUEUED.value)
                pipe.hdel(keys.match(match_id), "failure")
            if after is not status and after is not None:
                pipe.hset(tournament, mapping={"status": after.value, "updated_at": self._now()})
            return still

        watched = (tournament, failed, *map(keys.match, match_ids))
        return replies.transaction(self.redis, unfail, *watched)

    def heals(self) -> dict[str, tuple[int, float]]:
        """The matches an outage failed that :mod:`arena.healing` has seen: each with how often
        it was queued again and when it may be next (seconds since the epoch)."""
        raw = replies.fields(self.redis.hgetall(keys.HEALS))
        found = {match_id: json.loads(entry) for match_id, entry in raw.items()}
        return {match_id: (int(count), float(due)) for match_id, (count, due) in found.items()}

    def note_heal(self, match_id: str, count: int, due: float) -> None:
        self.redis.hset(keys.HEALS, match_id, codecs.dumps([count, due]))

    def forget_heals(self, match_ids: Sequence[str]) -> None:
        if match_ids:
            self.redis.hdel(keys.HEALS, *match_ids)

    # -- standings and the ladder ---------------------------------------------------------------

    def standings(self, tournament_id: str) -> list[Standing]:
        raw = replies.fields(self.redis.hgetall(keys.standings(tournament_id)))
        return ranked([codecs.from_json(v, Standing) for v in raw.values()])

    def rating(self, bot_id: str) -> Rating | None:
        """The participant's rating, of the version it played last."""
        return self._rating_in(self.redis, bot_id)

    def _rating_in(self, client: redis.Redis, bot_id: str) -> Rating | None:
        raw = replies.blob(client.get(keys.rating(bot_id)))
        return codecs.from_json(raw, Rating) if raw else None

    def ratings(self, bot_ids: Sequence[str]) -> dict[str, Rating]:
        """The current ratings of those of ``bot_ids`` that have one, by id (one round trip)."""
        if not bot_ids:
            return {}
        raw = replies.blobs(self.redis.mget([keys.rating(b) for b in bot_ids]))
        return {b: codecs.from_json(r, Rating) for b, r in zip(bot_ids, raw, strict=True) if r}

    def _version_rating(self, pipe: Pipeline, bot_id: str, version: str) -> Rating:
        """The rating ``version`` of the participant plays from: its own, or where it starts."""

        def level() -> float:  # a newcomer starts at house Normal's level: watched from here
            replies.watch(pipe, keys.rating(ANCHOR))
            return self._level_in(pipe)

        current = self._rating_in(pipe, bot_id)
        kept_raw = None
        if current is None or current.version != version:
            kept_raw = replies.blob(pipe.hget(keys.rating_versions(bot_id), version))
        kept = None if kept_raw is None else codecs.from_json(kept_raw, Rating)
        return playing_rating(bot_id, version, current, kept, level)

    def _level_in(self, client: redis.Redis) -> float:
        """House Normal's current μ: where a newcomer starts, the shown scale's zero."""
        anchor = self._rating_in(client, ANCHOR)
        return 0.0 if anchor is None else anchor.mu

    def rating_level(self) -> float | None:
        """House Normal's current μ, which every shown rating is relative to
        (:func:`arena.ratings.shown`); None while the stored ratings are on another scale and
        await re-rating (:mod:`arena.store.rerating`)."""
        named, anchor = replies.blobs(self.redis.mget(keys.RATINGS_SCALE, keys.rating(ANCHOR)))
        scale = self.ratings_scale() if named is None else named.decode()
        if scale != SCALE:
            return None
        return 0.0 if anchor is None else codecs.from_json(anchor, Rating).mu

    def ratings_await_rerating(self) -> bool:
        """Whether the stored ratings are on another scale than :data:`arena.ratings.SCALE`:
        the ladder's next round (or ``gongzhu rerate``) rates every rated match again."""
        return self.ratings_scale() != SCALE

    def ratings_scale(self) -> str:
        """The scale of the stored ratings (:data:`arena.ratings.SCALE` when current). A store
        without a name for it is named here: the current scale if it holds no rating yet, else
        :data:`OLD_SCALE` (ratings made before the scale was named, by openskill over places)."""
        named = replies.text(self.redis.get(keys.RATINGS_SCALE))
        if named is not None:
            return named

        def name(pipe: Pipeline) -> str:
            named = replies.text(pipe.get(keys.RATINGS_SCALE))
            if named is None:
                named = OLD_SCALE if replies.number(pipe.zcard(keys.LADDER)) else SCALE
                pipe.multi()
                pipe.set(keys.RATINGS_SCALE, named)
            return named

        return replies.transaction(self.redis, name, keys.RATINGS_SCALE, keys.LADDER)

    def rating_versions(self, bot_id: str) -> list[Rating]:
        """Every version's rating, the one played latest first (a rating from before versions
        were kept has the version "")."""
        raw = replies.fields(self.redis.hgetall(keys.rating_versions(bot_id)))
        current = self.rating(bot_id)
        others = [
            codecs.from_json(r, Rating)
            for v, r in raw.items()
            if not current or v != current.version
        ]
        others.sort(key=lambda r: (r.last_match, r.version), reverse=True)
        return [current, *others] if current else others

    def head_to_head(self, bot_id: str) -> list[HeadToHead]:
        """Its figures against each opponent of its rated matches, most matches first."""
        counters: dict[str, dict[str, int]] = {}
        for field, value in replies.fields(self.redis.hgetall(keys.head_to_head(bot_id))).items():
            opponent, _, figure = field.rpartition("|")
            counters.setdefault(opponent, {})[figure] = int(value)
        found = [HeadToHead(opponent, **figures) for opponent, figures in counters.items()]
        return sorted(found, key=lambda h: (-h.matches, h.opponent))

    def _standing_in(self, pipe: Pipeline, tournament_id: str, bot_id: str) -> Standing | None:
        raw = replies.blob(pipe.hget(keys.standings(tournament_id), bot_id))
        return codecs.from_json(raw, Standing) if raw else None

    def ladder(self, *, page: int, per_page: int) -> Page[tuple[int, Rating]]:
        """Ratings best first, each with its rank (1 = best)."""
        ids, total = self._page(keys.LADDER, page, per_page)
        first = (page - 1) * per_page + 1
        rated = self.ratings(ids)
        found = [(first + i, rated[b]) for i, b in enumerate(ids) if b in rated]
        return Page(found, total, page, per_page)

    def rating_history(self, bot_id: str, version: str | None = None) -> list[RatingPoint]:
        """One version's rating after each of its rated matches, oldest first (default: the
        version it played last)."""
        if version is None:
            current = self.rating(bot_id)
            version = "" if current is None else current.version
        points = replies.texts(self.redis.lrange(keys.history(bot_id, version), 0, -1))
        return [codecs.from_json(p, RatingPoint) for p in points]

    # -- human games ----------------------------------------------------------------------------

    def create_human_game(self, game: HumanGame) -> HumanGame:
        """Store a new human game with its first decisions (the computers' before the person's
        first turn); its version becomes 1."""
        stored = replace(game, version=1)
        pipe = self.redis.pipeline()
        self._write_human_game(pipe, stored, stored.moves)
        pipe.execute()
        return stored

    def get_human_game(self, game_id: str) -> HumanGame | None:
        pipe = self.redis.pipeline()
        pipe.hgetall(keys.play(game_id))
        pipe.lrange(keys.play_moves(game_id), 0, -1)
        raw, moves = pipe.execute()
        if not raw:
            return None
        return codecs.human_game_from(game_id, replies.fields(raw), replies.texts(moves))

    def save_human_game(self, game: HumanGame, new_moves: Sequence[DecisionRecord]) -> HumanGame:
        """Store ``game`` with ``new_moves`` appended, if the stored version is still
        ``game.version``; else raise :class:`StaleVersionError`, changing nothing. Tried once,
        not retried like the other transactions: a game written meanwhile (another tab) is
        stale for this move too."""
        key = keys.play(game.id)
        saved = replace(game, version=game.version + 1, moves=(*game.moves, *new_moves))
        with self.redis.pipeline() as pipe:
            try:
                replies.watch(pipe, key)
                version = replies.text(pipe.hget(key, "version"))
                if version is None:
                    raise NotFoundError(f"there is no game {game.id}")
                if int(version) != game.version:
                    raise StaleVersionError(
                        f"game {game.id} has changed since version {game.version} "
                        f"(it is at {int(version)}): reload it"
                    )
                pipe.multi()
                self._write_human_game(pipe, saved, new_moves)
                pipe.execute()
            except redis.WatchError:
                raise StaleVersionError(
                    f"game {game.id} changed while this move was made: reload it"
                ) from None
        return saved

    def mark_human_game_recorded(self, game: HumanGame) -> HumanGame:
        """Note that the game's match is recorded (no new version: nothing the player sees)."""
        self.redis.hset(keys.play(game.id), "recorded", "1")
        return replace(game, recorded=True)

    def _write_human_game(
        self, pipe: Pipeline, game: HumanGame, new_moves: Sequence[DecisionRecord]
    ) -> None:
        pipe.hset(
            keys.play(game.id),
            mapping={**codecs.human_game_fields(game), "updated_at": self._now()},
        )
        if new_moves:
            pipe.rpush(keys.play_moves(game.id), *map(codecs.to_json, new_moves))
        pipe.expire(keys.play(game.id), keys.HUMAN_GAME_TTL_S)
        pipe.expire(keys.play_moves(game.id), keys.HUMAN_GAME_TTL_S)

    # -- helpers --------------------------------------------------------------------------------

    def _page(self, key: str, page: int, per_page: int) -> tuple[list[str], int]:
        """One page of a sorted set, highest score first, and the set's size."""
        start = (page - 1) * per_page
        pipe = self.redis.pipeline()
        pipe.zrevrange(key, start, start + per_page - 1)
        pipe.zcard(key)
        ids, total = pipe.execute()
        return replies.texts(ids), replies.number(total)


def _status_after(tournament: Mapping[str, str], *, done: int, failed: int) -> str:
    """The status to store for ``tournament`` (its hash's fields) with these counts."""
    status = TournamentStatus(tournament["status"])
    total = int(tournament.get("total", 0))
    return tournament_status(status, total=total, done=done, failed=failed).value
