"""What the arena stores, as plain dataclasses: bots, tournaments, matches, standings, ratings.

:mod:`arena.store` turns them into Redis keys and back; the service turns them into JSON at
its edge. Nothing here does I/O.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from bot_sdk.sequential import paired_difference
from referee import Rules
from replays.deals import DealSource
from replays.log import DecisionRecord, TimeControl

HOUSE_PARTICIPANTS = ("house:easy", "house:normal", "house:hard")
"""Participants played in-process by the workers; every other participant is a registered bot."""


def house_level(participant: str) -> str:
    """The level of a house participant: ``house_level("house:hard") == "hard"``."""
    return participant.split(":", 1)[1]


HOUSE_LEVELS = tuple(house_level(p) for p in HOUSE_PARTICIPANTS)
"""The house bots' levels, easiest first."""

T = TypeVar("T")


class BotStatus(enum.StrEnum):
    PENDING = "pending"
    """Registered, its endpoint not yet verified (``verify-endpoint``): it never plays."""
    ACTIVE = "active"
    PAUSED = "paused"
    """Kept out of new tournaments until resumed."""
    RETIRED = "retired"
    """For good: never scheduled again, cannot be resumed or changed."""


class Transport(enum.StrEnum):
    """How the arena reaches a bot (docs/PROTOCOL.md)."""

    PUSH = "push"
    """The arena POSTs each request to the bot's endpoint."""
    PULL = "pull"
    """The bot connects out to the arena, holds a stream open and POSTs its answers back:
    a bot behind NAT or a firewall, with no endpoint of its own."""


class TournamentStatus(enum.StrEnum):
    CREATED = "created"
    """Stored, not started."""
    QUEUED = "queued"
    """Started: its job waits for a worker."""
    RUNNING = "running"
    DONE = "done"
    DONE_WITH_FAILURES = "done_with_failures"
    """Every match ended, some of them failed (``failures`` says which and why); the operator
    can queue those again, or cancel the tournament. Not over: its deal secret stays secret
    while its failed matches may still be played."""
    CANCELLED = "cancelled"

    @property
    def is_over(self) -> bool:
        """No more of its matches will be played: its deal secret is revealed."""
        return self in (TournamentStatus.DONE, TournamentStatus.CANCELLED)


class MatchStatus(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    """Its job failed every time it was run (a bug, a deal that cannot be played, a horse
    killed again and again); ``failure`` says why. Not recorded, so never counted."""


@dataclass(frozen=True)
class RegisteredBot:
    id: str
    name: str
    endpoint: str
    description: str
    contact: str
    status: BotStatus
    version: str
    """What the bot said in its last handshake."""
    created_at: str
    updated_at: str
    allow_human_games: bool = False
    """The owner lets people choose the bot as an opponent on the Play page."""
    faults: int = 0
    """Its decisions in recorded matches that the arena answered with the fallback (faults)."""
    fallbacks: int = 0
    """Its decisions that the bot itself answered with a fallback, saying so in its note
    (``bot_sdk.protocol.FALLBACK_NOTE``): counted, not faults."""
    transport: Transport = Transport.PUSH
    """A pull bot has no endpoint (``endpoint`` is empty)."""
    connected: bool | None = None
    """A pull bot's stream is open now: not stored, filled in when the bot is shown
    (:func:`arena.bots.with_presence`); None for a push bot, or when not looked up."""
    ladder: bool = False
    """The owner entered it in the ladder: the matchmaker seats it in rated matches."""
    max_concurrent: int = 1
    """The most ladder matches the owner lets it play at once."""


@dataclass(frozen=True)
class Format:
    """Round-robin tables of four. ``duplicate``: each table's deals are played once per seat
    rotation. ``hands``: a fixed number of hands per match (None: to the rules' end)."""

    duplicate: bool = True
    matches_per_table: int = 1
    hands: int | None = None


@dataclass(frozen=True)
class TournamentSpec:
    """What an operator asks for; a scheduled tournament stores one as its template."""

    name: str
    participants: tuple[str, ...]
    format: Format
    rules: Rules
    time_control: TimeControl
    rated: bool = True


@dataclass(frozen=True)
class MatchFailure:
    match_id: str
    reason: str


OPERATOR = "operator"
"""Who started what the operator started (a gauntlet)."""


@dataclass(frozen=True)
class Gauntlet:
    """A gauntlet's question (:mod:`arena.gauntlets`): is ``candidate`` better than
    ``baseline`` by ``delta`` points per hand, with error rates ``alpha`` and ``beta``, within
    ``max_deals`` deals; who started it (a bot's id, or ``operator``) and, once its test has
    stopped, its verdict (a :class:`bot_sdk.sequential.Verdict` value)."""

    candidate: str
    baseline: str
    opponents: tuple[str, str]
    delta: float
    alpha: float
    beta: float
    max_deals: int
    started_by: str
    verdict: str = "running"


@dataclass(frozen=True)
class GauntletDeal:
    """One deal of a gauntlet once its four rotations are over: the candidate's and the
    baseline's points over the four and the hands they played, or why it does not count
    (``void``: a rotation failed)."""

    deal: int
    candidate_points: int = 0
    baseline_points: int = 0
    hands: int = 0
    void: str = ""

    @property
    def difference(self) -> float:
        """The deal's paired difference, points per hand (a counted deal's)."""
        return paired_difference(self.candidate_points, self.baseline_points, self.hands)


@dataclass(frozen=True)
class Tournament:
    id: str
    spec: TournamentSpec
    status: TournamentStatus
    done: int
    """Matches recorded."""
    total: int
    """Matches planned (0 until the workers expand the tournament)."""
    created_at: str
    updated_at: str
    schedule_id: str | None = None
    failures: tuple[MatchFailure, ...] = ()
    """Its failed matches, by match id."""
    deal_commitment: str = ""
    """The SHA-256 of the tournament's deal secret, public from its creation
    (:mod:`replays.deals`)."""
    ladder: bool = False
    """A table the ladder's matchmaker seated (:mod:`arena.ladder`): listed with the ladder,
    not with the tournaments; its rotations are played one after another."""
    gauntlet: Gauntlet | None = None
    """What the gauntlet that this tournament is tests (:mod:`arena.gauntlets`): listed with
    the gauntlets, its deals planned one at a time until its test stops."""


@dataclass(frozen=True)
class Schedule:
    """A recurring ladder round among all active bots, run by ``rq cron``."""

    id: str
    cron: str
    template: TournamentSpec
    """Its participants are ignored: each round takes the bots active at that time."""
    created_at: str


@dataclass(frozen=True)
class MatchResult:
    places: tuple[int, ...]
    totals: tuple[int, ...]
    faults: tuple[int, ...]
    forfeited: tuple[int, ...]
    hands: int
    termination: str


@dataclass(frozen=True)
class BotFault:
    """One decision of a participant whose status is not ``ok``, or whose answer the bot said
    was its own fallback, as the per-bot fault index keeps it: where it is in its match's log
    (the replay viewer opens there) and what went wrong."""

    match_id: str
    hand: int
    """The hand's number in the match (1 first)."""
    decision: int
    """The decision's index in the hand's decisions (0 first), as the replay viewer numbers it."""
    trick: int
    """The trick it was played in (1-13), 0 for a pass or an exposure."""
    kind: str
    status: str
    """The log's status name (timeout, error, invalid, illegal), or ``fallback`` for the bot's
    own fallback."""
    message: str
    """The log's fault message, or the bot's note (may name cards: not shown while the match is
    embargoed)."""
    latency_ms: int | None = None


@dataclass(frozen=True)
class DivergenceEntry:
    """One of a participant's divergences, as its index keeps it: the match and seat of its
    line of a duplicate deal, the first decision where it chose what no other holder of those
    cards chose (:mod:`replays.divergence`), and the points of the lines on that deal."""

    match_id: str
    seat: int
    tournament_id: str
    deal_label: str
    hand: int
    """The divergence's hand (1 first)."""
    step: str
    """Which of the seat's decisions of the hand: ``pass``, ``exposure``, ``trick 5``."""
    decision: int
    """Its index in the hand's decisions of the match's log, as the replay viewer numbers it."""
    points: int
    """What the participant's line scored holding the seat's cards on the deal."""
    others: float
    """What the other lines scored with the same cards, on average."""
    lines: int
    """How many lines were compared, its own included."""

    @property
    def id(self) -> str:
        return f"{self.match_id}/{self.seat}"

    @property
    def cost(self) -> float:
        """The points it scored less than the other lines' average (negative: more)."""
        return self.others - self.points


@dataclass(frozen=True)
class Match:
    id: str
    tournament_id: str | None
    table_id: str | None
    seats: tuple[str, ...]
    """The participant id in each seat."""
    status: MatchStatus
    created_at: str
    finished_at: str | None = None
    result: MatchResult | None = None
    failure: str | None = None
    """Why a failed match failed."""
    deal_label: str | None = None
    """The label of its deal sequence in its tournament (rotations of one deal share it)."""
    versions: tuple[str, ...] = ()
    """What each seat's bot answered as its version in ``hello`` (recorded matches)."""
    voided_by: str | None = None
    """The dispute whose ruling voided it (docs/DISPUTES.md): its result no longer counts."""
    replaces: str | None = None
    """The voided match it replays (the same deal and seats), by a dispute's ruling."""
    replaced_by: str | None = None
    """The match that replays it, once voided."""


@dataclass(frozen=True)
class Embargo:
    """A finished match whose deal is still being played by other matches of its tournament:
    nothing about its hands is public until they have finished or the tournament is over."""

    tournament_id: str
    deal_label: str
    unfinished: int
    """The matches of the deal not yet finished."""

    @property
    def message(self) -> str:
        matches = "match" if self.unfinished == 1 else "matches"
        return (
            f"this deal is still being played in tournament {self.tournament_id} ({self.unfinished}"
            f" {matches} of deal {self.deal_label} unfinished): its replays, hands and decisions "
            "open when every match of the deal has finished, or when the tournament ends"
        )


@dataclass(frozen=True)
class Standing:
    """One participant's record in one tournament; ``rank`` is set when standings are read."""

    bot_id: str
    matches: int = 0
    wins: int = 0
    placement_sum: int = 0
    points: int = 0
    hands: int = 0
    faults: int = 0
    forfeits: int = 0
    amended: int = 0
    """Its results withdrawn by disputes' rulings (docs/DISPUTES.md)."""
    rank: int = 0

    @property
    def average_placement(self) -> float:
        return self.placement_sum / self.matches if self.matches else 0.0

    @property
    def points_per_hand(self) -> float:
        return self.points / self.hands if self.hands else 0.0


@dataclass(frozen=True)
class SeatFigures:
    """A participant's rated matches from one seat: how often, its places and points."""

    matches: int = 0
    placement_sum: int = 0
    points: int = 0
    hands: int = 0

    @property
    def average_placement(self) -> float:
        return self.placement_sum / self.matches if self.matches else 0.0

    @property
    def points_per_hand(self) -> float:
        return self.points / self.hands if self.hands else 0.0


NO_SEATS = (SeatFigures(), SeatFigures(), SeatFigures(), SeatFigures())


PROVISIONAL_SIGMA = 10.0
"""A rating is provisional while its uncertainty is above this, in points per hand
(:mod:`arena.ratings`)."""


@dataclass(frozen=True)
class Rating:
    """One version of a participant on the ladder: its estimated strength and uncertainty in
    points per hand (:mod:`arena.ratings`; stored absolute, shown relative to house Normal),
    and what its rated matches added up to."""

    bot_id: str
    mu: float
    sigma: float
    matches: int = 0
    points: int = 0
    hands: int = 0
    faults: int = 0
    decisions: int = 0
    """Decisions the bot was asked (not those auto-played after a forfeit)."""
    version: str = ""
    """What the bot answered in ``hello`` ("" for matches rated before versions were kept)."""
    seats: tuple[SeatFigures, SeatFigures, SeatFigures, SeatFigures] = NO_SEATS
    """Its rated matches by seat (0 to 3)."""
    first_match: str = ""
    last_match: str = ""
    """When its first and latest rated matches were recorded."""
    amended: int = 0
    """Its rated matches withdrawn by disputes' rulings (docs/DISPUTES.md)."""

    @property
    def conservative(self) -> float:
        """The rating shown and sorted on: 99.7 % sure the bot is at least this good."""
        return self.mu - 3 * self.sigma

    @property
    def provisional(self) -> bool:
        return self.sigma > PROVISIONAL_SIGMA

    @property
    def points_per_hand(self) -> float:
        return self.points / self.hands if self.hands else 0.0

    @property
    def fault_rate(self) -> float:
        return self.faults / self.decisions if self.decisions else 0.0


@dataclass(frozen=True)
class RatingPoint:
    """The rating after one match."""

    match_id: str
    mu: float
    sigma: float
    at: str

    @property
    def conservative(self) -> float:
        return self.mu - 3 * self.sigma


@dataclass(frozen=True)
class HeadToHead:
    """How a participant did against one opponent in the rated matches they both played."""

    opponent: str
    matches: int = 0
    ahead: int = 0
    """Matches it finished in a better place than the opponent."""
    behind: int = 0
    points: int = 0
    """Its points minus the opponent's, summed over those matches."""
    hands: int = 0

    @property
    def level(self) -> int:
        return self.matches - self.ahead - self.behind

    @property
    def points_per_hand(self) -> float:
        """Its points per hand minus the opponent's, over the hands they played together."""
        return self.points / self.hands if self.hands else 0.0


@dataclass(frozen=True)
class HumanGame:
    """A person's match against three computers, played one request at a time.

    Only the settings and the decisions so far are stored: the referee's game is rebuilt by
    replaying ``moves`` (see :mod:`arena.human`). ``version`` counts the writes, so that two
    tabs cannot both apply a move to the same state.
    """

    id: str
    match_id: str
    """The id the finished match is recorded under (a replay like any other)."""
    rules: Rules
    deals: DealSource
    """A secret the arena drew (committed, revealed in the finished game's log), or a seed the
    person chose (practice)."""
    seat: int
    """The person's seat; the computers sit at ``seat + 1``, ``seat + 2``, ``seat + 3``."""
    opponents: tuple[str, str, str]
    """The participant at each computer seat, in play order after the person."""
    created_at: str
    version: int = 0
    moves: tuple[DecisionRecord, ...] = ()
    acknowledged: int = 0
    """Hands whose result the person has seen ("Next hand"); the computers wait until then."""
    level_changes: tuple[tuple[int, str], ...] = ()
    """``(from_hand, level)``: the house bots' difficulty from that hand on (latest wins)."""
    recorded: bool = False

    @property
    def seed(self) -> str:
        """The seed the game is dealt from."""
        return self.deals.seed_with() or self.deals.seed or ""


@dataclass(frozen=True)
class Page(Generic[T]):
    items: Sequence[T]
    total: int
    page: int
    per_page: int

    @classmethod
    def of(cls, every: Sequence[T], *, page: int, per_page: int) -> Page[T]:
        """Page ``page`` (from 1) of ``every``, a list read whole.

        >>> Page.of("abcde", page=2, per_page=2)
        Page(items='cd', total=5, page=2, per_page=2)
        """
        start = (page - 1) * per_page
        return cls(every[start : start + per_page], len(every), page, per_page)


# -- disputes (docs/DISPUTES.md) -----------------------------------------------------------------


class DisputeStatus(enum.StrEnum):
    OPEN = "open"
    """Filed, not yet ruled on."""
    REJECTED = "rejected"
    UPHELD = "upheld"


class Remedy(enum.StrEnum):
    """What an upheld ruling does to the match's result."""

    REPLAY = "replay"
    """The match voided (its result, standings and rating effect withdrawn) and played again
    from its deal, with the same seats."""
    STRIKE = "strike"
    """The fault struck: the match voided as for ``REPLAY``, and continued by a replacement
    that re-enacts its decisions up to the contested one, applies that decision's recorded
    answer (it could stand) and plays on from there (:mod:`arena.strike`)."""


@dataclass(frozen=True)
class Ruling:
    """The operator's ruling on a dispute; ``applied`` once its remedy changed the results."""

    status: DisputeStatus
    reason: str
    ruled_at: str
    remedy: Remedy | None = None
    replacement: str | None = None
    """The match that replaces the voided one (``{match}-replay``, ``{match}-strike``)."""
    applied: bool = False


@dataclass(frozen=True)
class Dispute:
    """A bot's owner contesting one decision (or one hand) of a match its bot played."""

    id: str
    match_id: str
    tournament_id: str | None
    bot_id: str
    seat: int
    hand: int
    """From 1."""
    decision: int | None
    """Its index in the hand, from 0 (as the log counts them); None: the whole hand."""
    statement: str
    status: DisputeStatus
    filed_at: str
    ruling: Ruling | None = None

    @property
    def claim(self) -> str:
        """What it contests, as one open dispute at a time may: ``{match}/{hand}/{decision}``
        (``*`` for the whole hand)."""
        return f"{self.match_id}/{self.hand}/{'*' if self.decision is None else self.decision}"
