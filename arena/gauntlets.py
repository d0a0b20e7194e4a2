"""Gauntlets: is a candidate better than its baseline? Duplicate deals, one after another, until
a sequential test knows (:mod:`bot_sdk.sequential`: the hypotheses, the statistic and the
stopping rule).

**What is played.** A gauntlet is an unrated tournament flagged with its question
(:class:`~arena.records.Gauntlet`), of one table: the candidate and the baseline across from
each other, the same opponent on both sides between them (:func:`bot_sdk.sequential.table`).
Its deals are dealt one at a time: deal ``k`` is four matches of ``hands`` hands, its seat
rotations (``{id}-t1-d{k}-r1`` … ``-r4``), played one after another so that no bot of the table
is in two of them at once. When the fourth is recorded, the deal's result is kept (the two
bots' points over the four, and the hands), the test is run on every deal so far, and either
the gauntlet is done with its verdict or the next deal is dealt.

**Stopping.** A gauntlet one of whose bots is paused, retired or otherwise no longer active is
cancelled before its next rotation (what was played stays); so is one its starter or the
operator cancels.

**Void deals.** A rotation whose job failed for good (:mod:`arena.failures`) makes its deal
void: it is not counted, its other rotations are not played, and the gauntlet deals the next.
The cap on deals counts every deal dealt, void ones too, so a gauntlet always ends.

**Crashes.** Every step can be taken again and changes nothing the second time: a deal's
matches are created once, a rotation's job is queued once, a deal's result is the same from the
same recorded matches, and the verdict is kept once. A worker that records a rotation moves
the gauntlet on (:func:`advance`); one that dies first leaves it to its match job's retry, which
finds the match recorded and moves on, and to the ``cron`` process's sweep every
``GONGZHU_GAUNTLET_SWEEP_S`` seconds (:func:`sweep`). One gauntlet moves at a time: a step
holds its lock (redis-py's ``Lock``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from arena import tournaments
from arena.context import Arena
from arena.errors import (
    InvalidError,
    NotAllowedError,
    NotFoundError,
    TooManyError,
    WrongStateError,
)
from arena.pairing import PlannedMatch, rotated
from arena.queue import release_match
from arena.records import (
    HOUSE_PARTICIPANTS,
    OPERATOR,
    BotStatus,
    Format,
    Gauntlet,
    GauntletDeal,
    Match,
    MatchStatus,
    Page,
    Tournament,
    TournamentSpec,
    TournamentStatus,
)
from arena.store import keys
from bot_sdk.sequential import (
    DEALS_RANGE,
    Hypotheses,
    HypothesesError,
    State,
    Verdict,
    default_opponents,
    evaluate,
    table,
    trajectory,
)
from referee import Rules, Variant
from replays.log import TimeControl

ROTATIONS = 4
HANDS_RANGE = (1, 20)
DEFAULT_HANDS = 4
TIME_CONTROL = TimeControl(decision_ms=1000, bank_ms=30_000, fault_limit=5)
"""The gauntlets' clock: the tournaments' default."""
LOCK_TIMEOUT_S = 60
LOCK_WAIT_S = 10


@dataclass(frozen=True)
class Request:
    """What a caller asks a gauntlet to test; ``opponents`` None: the default pair
    (:func:`bot_sdk.sequential.default_opponents`)."""

    candidate: str
    baseline: str
    opponents: tuple[str, str] | None = None
    delta: float = Hypotheses.delta
    alpha: float = Hypotheses.alpha
    beta: float = Hypotheses.beta
    max_deals: int = 200
    hands: int = DEFAULT_HANDS
    rules: Rules = field(default_factory=Rules)


@dataclass(frozen=True)
class Progress:
    """A gauntlet as it stands: its tournament, its deals so far, the test after each counted
    deal (``trajectory``) and now (``state``), and the verdict (the kept one once it stopped)."""

    tournament: Tournament
    gauntlet: Gauntlet
    deals: tuple[GauntletDeal, ...]
    trajectory: tuple[State, ...]
    state: State
    verdict: str
    hypotheses: Hypotheses

    @property
    def id(self) -> str:
        return self.tournament.id


def create(arena: Arena, request: Request, *, started_by: str, manages: Sequence[str]) -> Progress:
    """Store a gauntlet and deal its first deal. ``started_by`` is the owner's bot id (or
    :data:`OPERATOR`); ``manages`` the bots the caller proved it owns (the operator: ignored,
    any bot may play). Refusals: :class:`InvalidError` (the question or the participants),
    :class:`NotAllowedError` (a bot the caller does not own), :class:`TooManyError` (the
    owner's live gauntlets)."""
    operator = started_by == OPERATOR
    hypotheses = _hypotheses(request)
    opponents = request.opponents or _house_pair(request.candidate, request.baseline)
    _check_question(request, opponents)
    _check_participants(arena, request, opponents, operator=operator, manages=manages)
    if not operator:
        live = [b for b in arena.store.live_gauntlets().values() if b == started_by]
        limit = arena.config.gauntlets_per_bot
        if len(live) >= limit:
            raise TooManyError(
                f"{started_by} has {len(live)} gauntlets running, the most allowed at once is "
                f"{limit}: wait for one to end, or cancel one"
            )
    gauntlet = Gauntlet(
        candidate=request.candidate,
        baseline=request.baseline,
        opponents=opponents,
        delta=hypotheses.delta,
        alpha=hypotheses.alpha,
        beta=hypotheses.beta,
        max_deals=request.max_deals,
        started_by=started_by,
    )
    spec = TournamentSpec(
        name=f"Gauntlet: {request.candidate} against {request.baseline}",
        participants=table(request.candidate, request.baseline, opponents),
        format=Format(duplicate=True, matches_per_table=1, hands=request.hands),
        rules=request.rules,
        time_control=TIME_CONTROL,
        rated=False,
    )
    store = arena.store
    tournament_id = store.create_tournament(spec, gauntlet=gauntlet)
    store.set_tournament_total(tournament_id, ROTATIONS * request.max_deals)
    advance(arena, tournament_id)
    return progress(arena, tournament_id)


def _house_pair(candidate: str, baseline: str) -> tuple[str, str]:
    """The default opponents (:func:`bot_sdk.sequential.default_opponents`) as participants."""
    first, second = default_opponents(candidate, baseline)
    return (f"house:{first}", f"house:{second}")


def _hypotheses(request: Request) -> Hypotheses:
    try:
        return Hypotheses(request.delta, request.alpha, request.beta)
    except HypothesesError as error:
        raise InvalidError(error.detail, field=error.field) from None


def _check_question(request: Request, opponents: tuple[str, str]) -> None:
    low, high = DEALS_RANGE
    if not low <= request.max_deals <= high:
        raise InvalidError(
            f"must be between {low} and {high}, not {request.max_deals}",
            field="max_deals",
        )
    low, high = HANDS_RANGE
    if not low <= request.hands <= high:
        raise InvalidError(f"must be between {low} and {high}, not {request.hands}", field="hands")
    if Variant.TEAMS in request.rules.variants:
        raise InvalidError(
            "a gauntlet compares two bots playing for themselves; the teams variant "
            "would make the candidate and the baseline partners",
            field="rules",
        )
    if request.candidate == request.baseline:
        raise InvalidError("choose a bot other than the candidate", field="baseline")
    if opponents[0] != opponents[1]:
        raise InvalidError(
            "name the same bot twice, so that the candidate and the baseline have "
            "the same neighbours (docs/GAUNTLETS.md)",
            field="opponents",
        )
    if opponents[0] in (request.candidate, request.baseline):
        raise InvalidError(
            "the opponent must be neither the candidate nor the baseline",
            field="opponents",
        )


def _check_participants(
    arena: Arena,
    request: Request,
    opponents: tuple[str, str],
    *,
    operator: bool,
    manages: Sequence[str],
) -> None:
    """Each participant exists and is active; an owner plays its own bots and house bots, and
    only house bots as opponents."""
    named = {"candidate": request.candidate, "baseline": request.baseline}
    named["opponents"] = opponents[0]
    registered = [p for p in named.values() if p not in HOUSE_PARTICIPANTS]
    found = arena.store.get_bots(registered)
    for role, participant in named.items():
        if participant in HOUSE_PARTICIPANTS:
            continue
        bot = found.get(participant)
        if bot is None:
            raise InvalidError(f"{participant} is not a registered bot", field=role)
        if bot.status is not BotStatus.ACTIVE:
            raise InvalidError(f"{participant} is {bot.status.value}, not active", field=role)
        if operator:
            continue
        if role == "opponents":
            raise NotAllowedError(
                "an owner's gauntlet plays house bots as opponents; the operator may choose others",
                field=role,
            )
        if participant not in manages:
            raise NotAllowedError(
                f"{participant} is not yours: a gauntlet plays your own bots and the "
                "house bots (send the baseline's token as baseline_token to prove it is yours)",
                field=role,
            )


def match_id(tournament_id: str, deal: int, rotation: int) -> str:
    """The id of rotation ``rotation`` (0 to 3) of deal ``deal`` (from 1)."""
    return _planned(("", "", "", ""), deal, rotation).match_id(tournament_id)


def _planned(seats: Sequence[str], deal: int, rotation: int) -> PlannedMatch:
    a, b, c, d = seats
    return PlannedMatch(0, deal - 1, rotation, rotated((a, b, c, d), rotation))


def advance(arena: Arena, tournament_id: str) -> None:
    """Move the gauntlet on: keep the results of its finished deals, stop it when its test
    knows, else release its next rotation or deal its next deal. Safe to call at any time and
    again (a worker calls it after recording a rotation, the sweep for every live gauntlet)."""
    key = keys.gauntlet_lock(tournament_id)
    with arena.store.held(key, timeout_s=LOCK_TIMEOUT_S, wait_s=LOCK_WAIT_S) as taken:
        if taken:  # else another step held it: it moved the gauntlet on, or the sweep will
            _advance(arena, tournament_id)


def sweep(arena: Arena) -> None:
    """Move every live gauntlet on (the ``cron`` process queues this)."""
    for tournament_id in arena.store.live_gauntlets():
        advance(arena, tournament_id)


def _advance(arena: Arena, tournament_id: str) -> None:
    store = arena.store
    tournament = store.get_tournament(tournament_id)
    if (
        tournament is None
        or tournament.gauntlet is None
        or tournament.status is TournamentStatus.CANCELLED
        or tournament.gauntlet.verdict != Verdict.RUNNING.value
    ):
        store.end_gauntlet(tournament_id, None)
        return
    if tournament.status in (TournamentStatus.CREATED, TournamentStatus.QUEUED):
        with contextlib.suppress(WrongStateError):  # another step moved it first
            store.move_tournament(
                tournament_id, TournamentStatus.RUNNING, allowed_from=[tournament.status]
            )
    gauntlet = tournament.gauntlet
    kept = {d.deal: d for d in store.gauntlet_deals(tournament_id)}
    dealt = len(kept)
    waiting: list[Match] = []
    while not waiting:
        deal = dealt + 1
        if deal > gauntlet.max_deals:
            break
        rotations = _deal(arena, tournament, deal)
        result = _result(gauntlet, deal, rotations)
        if result is None:
            waiting = [m for m in rotations if m.status is not MatchStatus.DONE]
            break
        store.note_gauntlet_deal(tournament_id, result)
        kept[deal] = result
        dealt = deal
        verdict = _verdict(gauntlet, kept.values())
        if verdict.is_final:
            store.end_gauntlet(tournament_id, verdict.value)
            return
    if not waiting:  # every deal dealt and over: the cap, void deals included
        store.end_gauntlet(tournament_id, Verdict.CAP.value)
        return
    if waiting[0].status is not MatchStatus.QUEUED:
        return  # being played
    if not _all_active(arena, tournament.spec.participants):
        with contextlib.suppress(WrongStateError):
            tournaments.cancel(arena, tournament_id)
        store.end_gauntlet(tournament_id, None)
        return
    release_match(arena.queue, waiting[0].id)


def _all_active(arena: Arena, participants: Sequence[str]) -> bool:
    """Every registered participant is still active (not paused, retired or pending)."""
    registered = [p for p in participants if p not in HOUSE_PARTICIPANTS]
    found = arena.store.get_bots(registered)
    return all(p in found and found[p].status is BotStatus.ACTIVE for p in registered)


def _deal(arena: Arena, tournament: Tournament, deal: int) -> list[Match]:
    """Deal ``deal``'s four rotations, created (again: each once) and read back."""
    store = arena.store
    ids = [match_id(tournament.id, deal, r) for r in range(ROTATIONS)]
    found = store.get_matches(ids)
    if len(found) < ROTATIONS:
        for rotation in range(ROTATIONS):
            planned = _planned(tournament.spec.participants, deal, rotation)
            store.create_match(
                planned.match_id(tournament.id),
                seats=planned.seats,
                tournament_id=tournament.id,
                table_id=planned.table_id,
                deal_label=planned.deal_label,
            )
        found = store.get_matches(ids)
    return found


def _result(gauntlet: Gauntlet, deal: int, rotations: Sequence[Match]) -> GauntletDeal | None:
    """The deal's result once its rotations are over (void if one failed), else None."""
    failed = [m for m in rotations if m.status is MatchStatus.FAILED]
    if failed:
        return GauntletDeal(deal, void=f"{failed[0].id} failed: {failed[0].failure or ''}")
    if any(m.status is not MatchStatus.DONE or m.result is None for m in rotations):
        return None
    candidate = baseline = hands = 0
    for match in rotations:
        assert match.result is not None
        hands += match.result.hands
        for seat, participant in enumerate(match.seats):
            if participant == gauntlet.candidate:
                candidate += match.result.totals[seat]
            elif participant == gauntlet.baseline:
                baseline += match.result.totals[seat]
    return GauntletDeal(deal, candidate, baseline, hands)


def differences(deals: Iterable[GauntletDeal]) -> list[float]:
    """The counted deals' paired differences, in points per hand, in the order dealt."""
    return [d.difference for d in sorted(deals, key=lambda d: d.deal) if not d.void]


def _verdict(gauntlet: Gauntlet, deals: Iterable[GauntletDeal]) -> Verdict:
    return evaluate(differences(deals), _of(gauntlet), max_deals=gauntlet.max_deals).verdict


def _of(gauntlet: Gauntlet) -> Hypotheses:
    return Hypotheses(gauntlet.delta, gauntlet.alpha, gauntlet.beta)


# -- what a gauntlet shows ----------------------------------------------------------------------


def progress(arena: Arena, tournament_id: str) -> Progress:
    """The gauntlet as it stands; :class:`NotFoundError` if there is none of that id."""
    tournament = arena.store.get_tournament(tournament_id)
    if tournament is None or tournament.gauntlet is None:
        raise NotFoundError(f"there is no gauntlet {tournament_id}")
    return _progress(arena, tournament, tournament.gauntlet)


def _progress(arena: Arena, tournament: Tournament, gauntlet: Gauntlet) -> Progress:
    deals = tuple(arena.store.gauntlet_deals(tournament.id))
    hypotheses = _of(gauntlet)
    steps = tuple(trajectory(differences(deals), hypotheses, max_deals=gauntlet.max_deals))
    state = steps[-1] if steps else evaluate([], hypotheses, max_deals=gauntlet.max_deals)
    verdict = gauntlet.verdict
    if tournament.status is TournamentStatus.CANCELLED and verdict == Verdict.RUNNING.value:
        verdict = "cancelled"
    return Progress(tournament, gauntlet, deals, steps, state, verdict, hypotheses)


def listing(arena: Arena, *, page: int, per_page: int, bot_id: str | None = None) -> Page[Progress]:
    """The gauntlets, newest first: all, or those of one bot (its candidate or baseline)."""
    found = arena.store.list_gauntlets(page=page, per_page=per_page, bot_id=bot_id)
    shown = [_progress(arena, t, t.gauntlet) for t in found.items if t.gauntlet]
    return Page(shown, found.total, page, per_page)


def cancel(arena: Arena, tournament_id: str, *, by: str) -> Progress:
    """Stop a gauntlet (its owner or the operator): no more deals; what was played stays."""
    shown = progress(arena, tournament_id)
    if by not in (OPERATOR, shown.gauntlet.started_by):
        raise NotAllowedError(f"gauntlet {tournament_id} was started by another bot's owner")
    tournaments.cancel(arena, tournament_id)
    arena.store.end_gauntlet(tournament_id, None)
    return progress(arena, tournament_id)
