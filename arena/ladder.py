"""The ladder that runs itself: matchmaking rounds, and each table's rotations played in turn.

**Rounds.** ``rq cron`` (the arena's ``cron`` process) queues :func:`matchmake` every
``GONGZHU_LADDER_INTERVAL_S`` seconds and a worker runs it. A round first moves every open
table on (:func:`advance`), then seats up to ``GONGZHU_LADDER_TABLES`` new tables among the
members with room (:func:`arena.matchmaker.choose_tables`), those it passed over before
first, and keeps which members it passed over. The members are the house bots named by
``GONGZHU_LADDER_HOUSE`` and every registered bot whose owner entered it (``ladder``) and
that is active (a pull bot: connected too).

**Tables.** A table is a rated, duplicate tournament of its four participants, flagged as the
ladder's: its deal sequence is played in all four seat rotations, each a match of
``GONGZHU_LADDER_HANDS`` hands, so the ladder is duplicate too (and each deal is embargoed
until its rotations are over, as in any tournament). The rotations are played **one after
another**: a worker that records a rotation releases the next (and so does every round, which
catches a release lost to a crash). So a table holds each of its bots in at most one match at
a time, and a bot sits at no more open tables than its owner's ``max_concurrent``: the limit
on its concurrent ladder matches holds by construction.

**Crashes.** Every step can be taken again: a round that dies after storing a table and before
releasing its first rotation leaves it for the next round, which plans and releases it; a
rotation recorded but not followed by its release is released by the next round.

**Stopping.** A table whose bot is paused, retired or taken out of the ladder is cancelled
before its next rotation (what was played stays rated). A rotation whose job failed for good
is marked failed by the workers' sweep (:mod:`arena.failures`) and the table moves on; a table
with no rotation left to play is closed, so its bots are free for new tables.

One round at a time: a round holds the ladder's lock (redis-py's ``Lock``); a round that
finds it held does nothing, and a release waits for it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from arena import tournaments
from arena.config import Config
from arena.context import Arena
from arena.errors import ArchiveError, NotFoundError, WrongStateError
from arena.matchmaker import Member, Table, choose_tables, passed_over_after
from arena.queue import release_match
from arena.ratings import shown, shown_point, starting_rating
from arena.records import (
    HOUSE_PARTICIPANTS,
    BotStatus,
    Format,
    HeadToHead,
    MatchStatus,
    Page,
    Rating,
    RatingPoint,
    TournamentSpec,
    TournamentStatus,
    Transport,
)
from arena.store import keys
from arena.store.rerating import rerate
from referee import Rules
from replays.log import TimeControl

TIME_CONTROL = TimeControl(decision_ms=1000, bank_ms=30_000, fault_limit=5)
"""The ladder's clock: the tournaments' default."""
LOCK_TIMEOUT_S = 120
"""A round's lock expires after this, should its worker die holding it."""
RELEASE_WAIT_S = 10
"""How long a release waits for a running round to finish."""


@dataclass(frozen=True)
class Status:
    """The matchmaker's settings and what it last did."""

    interval_s: int
    tables_per_round: int
    hands: int
    house: tuple[str, ...]
    open_tables: int
    last_round: dict[str, object]
    anchor_level: float | None
    """House Normal's stored μ, which every shown μ has subtracted (None: awaiting
    re-rating)."""
    rerating: bool


def matchmake(arena: Arena) -> list[str]:
    """One matchmaking round; returns the tables it seated (none if another round holds the
    lock, or the matchmaker is off)."""
    config = arena.config
    if not config.ladder_interval_s:
        return []
    with arena.store.held(keys.LADDER_LOCK, timeout_s=LOCK_TIMEOUT_S, wait_s=None) as taken:
        if not taken:
            return []
        rerating_error = ""
        if arena.store.ratings_await_rerating():
            try:
                rerate(arena.store)
            except (ArchiveError, ValueError) as error:  # a rated match's log does not read:
                rerating_error = str(error)  # the operator's to mend; the ladder plays on
        for table_id in arena.store.open_ladder_tables():
            _advance(arena, table_id)
        members = ladder_members(arena)
        rng = random.Random(f"ladder:{arena.store.last_ladder_round()['rounds']}")
        tables = choose_tables(members, tables=config.ladder_tables, rng=rng)
        seated = [seat_table(arena, table) for table in tables]
        arena.store.note_ladder_round(seated, rerating_error, passed_over_after(members, tables))
        return seated


def advance(arena: Arena, table_id: str) -> None:
    """Release the table's next rotation, or close the table (a worker calls this when it has
    recorded one of the table's matches). Nothing is lost if this does not happen (a worker
    dies first, or a round holds the lock too long): the next round advances every open table."""
    with arena.store.held(
        keys.LADDER_LOCK, timeout_s=LOCK_TIMEOUT_S, wait_s=RELEASE_WAIT_S
    ) as taken:
        if taken:  # else a round held it all along: the next round releases the rotation
            _advance(arena, table_id)


def _advance(arena: Arena, table_id: str) -> None:
    store = arena.store
    table = store.get_tournament(table_id)
    if table is None or table.status.is_over:
        store.close_ladder_table(table_id)
        return
    if table.status in (TournamentStatus.CREATED, TournamentStatus.QUEUED):
        # its round died between storing the table and releasing its first rotation
        if table.status is TournamentStatus.CREATED:
            store.move_tournament(
                table_id, TournamentStatus.QUEUED, allowed_from=[TournamentStatus.CREATED]
            )
        tournaments.expand(arena, table_id)
        return
    if not _all_playing(arena, table.spec.participants):
        try:
            store.move_tournament(
                table_id,
                TournamentStatus.CANCELLED,
                allowed_from=[TournamentStatus.RUNNING, TournamentStatus.DONE_WITH_FAILURES],
            )
        except WrongStateError:
            return  # not expanded yet, or ended meanwhile: the next round looks again
        store.close_ladder_table(table_id)
        return
    matches = store.list_matches(page=1, per_page=4, tournament_id=table_id).items
    waiting = sorted(
        (m for m in matches if m.status not in (MatchStatus.DONE, MatchStatus.FAILED)),
        key=lambda m: m.id,
    )
    if waiting:
        release_match(arena.queue, waiting[0].id)
    else:  # every rotation recorded or failed for good: the table has ended
        store.close_ladder_table(table_id)


def replay_rotation(arena: Arena, table_id: str, match_id: str) -> bool:
    """Play again a rotation of the table that an outage failed (:mod:`arena.healing`), with the
    table open again meanwhile, so that its bots count it against their ``max_concurrent``.
    Returns False, changing nothing, while the table plays another rotation, a bot of it is no
    longer playing, or one has no room for one more table."""
    store = arena.store
    with store.held(keys.LADDER_LOCK, timeout_s=LOCK_TIMEOUT_S, wait_s=RELEASE_WAIT_S) as taken:
        table = store.get_tournament(table_id) if taken else None
        if table is None:
            return False
        seats = table.spec.participants
        rotations = store.list_matches(page=1, per_page=4, tournament_id=table_id).items
        if any(m.status in (MatchStatus.QUEUED, MatchStatus.RUNNING) for m in rotations):
            return False
        if not _all_playing(arena, seats) or not _room(arena, table_id, seats):
            return False
        # open first: a crash after it leaves an open table with nothing to play, which the
        # next round closes; the match's job queued before its record says queued, as always
        store.reopen_ladder_table(table_id, seats)
        tournaments.requeue(arena, table_id, [match_id])
        return True


def _room(arena: Arena, table_id: str, participants: Sequence[str]) -> bool:
    """Every registered participant has room for one more table than its open ones but this."""
    busy: dict[str, int] = {}
    for open_id, seats in arena.store.open_ladder_tables().items():
        for participant in seats if open_id != table_id else ():
            busy[participant] = busy.get(participant, 0) + 1
    found = arena.store.get_bots(p for p in participants if p not in HOUSE_PARTICIPANTS)
    return all(busy.get(bot.id, 0) < bot.max_concurrent for bot in found.values())


def _all_playing(arena: Arena, participants: Sequence[str]) -> bool:
    """Every registered participant is active and still in the ladder."""
    registered = [p for p in participants if p not in HOUSE_PARTICIPANTS]
    found = arena.store.get_bots(registered)
    return all(
        p in found and found[p].status is BotStatus.ACTIVE and found[p].ladder for p in registered
    )


def ladder_members(arena: Arena) -> list[Member]:
    """The ladder's members now, each with its rating and how many more tables it may join."""
    store = arena.store
    bots = store.get_bots(store.ladder_members())
    pulled = [b.id for b in bots.values() if b.transport is Transport.PULL]
    connected = store.mailbox.connected(pulled)
    playing = [
        b
        for b in bots.values()
        if b.ladder
        and b.status is BotStatus.ACTIVE
        and (b.transport is Transport.PUSH or b.id in connected)
    ]
    busy: dict[str, int] = {}
    for seats in store.open_ladder_tables().values():
        for participant in seats:
            busy[participant] = busy.get(participant, 0) + 1
    house = arena.config.ladder_house
    ratings = store.ratings([*house, *(b.id for b in playing)])
    level = store.rating_level() or 0.0
    passed = store.passed_over()
    members = []
    for bot_id, room, is_house in [
        *((h, 0, True) for h in house),
        *((b.id, b.max_concurrent - busy.get(b.id, 0), False) for b in playing),
    ]:
        rating = ratings.get(bot_id) or starting_rating(bot_id, "", None, level=level)
        members.append(
            Member(
                bot_id,
                rating.mu,
                rating.sigma,
                rating.matches,
                room,
                is_house,
                passed.get(bot_id, 0),
            )
        )
    return members


def table_spec(config: Config, table: Table) -> TournamentSpec:
    """What a ladder table of ``table``'s participants, in that seat order, plays."""
    return TournamentSpec(
        name="Ladder table",
        participants=table,
        format=Format(duplicate=True, matches_per_table=1, hands=config.ladder_hands or None),
        rules=Rules(),
        time_control=TIME_CONTROL,
        rated=True,
    )


def seat_table(arena: Arena, table: Table) -> str:
    """Store a new ladder table of ``table``'s participants, in that seat order, and release
    its first rotation."""
    table_id = arena.store.create_tournament(table_spec(arena.config, table), ladder=True)
    arena.store.move_tournament(
        table_id, TournamentStatus.QUEUED, allowed_from=[TournamentStatus.CREATED]
    )
    tournaments.expand(arena, table_id)
    return table_id


def status(arena: Arena) -> Status:
    config = arena.config
    return Status(
        interval_s=config.ladder_interval_s,
        tables_per_round=config.ladder_tables,
        hands=config.ladder_hands,
        house=config.ladder_house,
        open_tables=len(arena.store.open_ladder_tables()),
        last_round=arena.store.last_ladder_round(),
        anchor_level=(level := arena.store.rating_level()),
        rerating=level is None,
    )


# -- what the ladder shows ------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """A row of the ladder: the participant's rank and name, and its latest version's rating."""

    rank: int
    name: str
    rating: Rating


def standings(arena: Arena, *, page: int, per_page: int) -> Page[Row]:
    """The ladder, best conservative rating first, each rating shown relative to house Normal
    (:func:`arena.ratings.shown`); empty while the ratings await re-rating."""
    level = arena.store.rating_level()
    if level is None:
        return Page([], 0, page, per_page)
    found = arena.store.ladder(page=page, per_page=per_page)
    names = arena.store.bot_names(r.bot_id for _, r in found.items)
    rows = [
        Row(rank, names.get(r.bot_id, r.bot_id), shown(r, level=level)) for rank, r in found.items
    ]
    return Page(rows, found.total, found.page, found.per_page)


def rating(arena: Arena, participant: str) -> Rating | None:
    """Its current rating as shown (relative to house Normal); None if it has none, or while
    the ratings await re-rating."""
    level = arena.store.rating_level()
    found = arena.store.rating(participant)
    return None if found is None or level is None else shown(found, level=level)


def _known(arena: Arena, participant: str) -> Rating | None:
    """Its current rating; NotFoundError if it is neither rated nor a registered bot."""
    rating = arena.store.rating(participant)
    if rating is None and arena.store.get_bot(participant) is None:
        raise NotFoundError(f"there is no bot {participant}")
    return rating


def versions(arena: Arena, participant: str) -> list[Rating]:
    """Every rated version of the participant, the one played latest first, as shown."""
    _known(arena, participant)
    level = arena.store.rating_level()
    if level is None:
        return []
    return [shown(r, level=level) for r in arena.store.rating_versions(participant)]


def rating_history(
    arena: Arena, participant: str, version: str | None = None
) -> tuple[str, list[RatingPoint]]:
    """A version's rating after each of its rated matches, oldest first (default: the version
    played latest), and which version that is."""
    current = _known(arena, participant)
    if version is None:
        version = "" if current is None else current.version
    level = arena.store.rating_level()
    if level is None:
        return version, []
    points = arena.store.rating_history(participant, version)
    return version, [shown_point(p, level=level) for p in points]


def head_to_head(arena: Arena, participant: str, *, page: int, per_page: int) -> Page[HeadToHead]:
    """Its figures against each opponent of its rated matches, most matches first."""
    _known(arena, participant)
    return Page.of(arena.store.head_to_head(participant), page=page, per_page=per_page)
