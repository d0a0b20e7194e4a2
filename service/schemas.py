"""Marshmallow schemas: the API's JSON, at the HTTP edge only. Inside, plain dataclasses: the
response schemas dump the arena's records (``arena.records``) and the use cases' results as
they are, computing only what the API shows derived (a rating rounded, a count)."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates

from arena.endpoints import MAX_URL_LENGTH
from arena.matchmaker import MAX_CONCURRENT
from arena.ratings import ANCHOR
from arena.records import (
    HOUSE_LEVELS,
    HOUSE_PARTICIPANTS,
    PROVISIONAL_SIGMA,
    SeatFigures,
    Transport,
)
from bot_sdk.sequential import (
    ALPHA_RANGE,
    BETA_RANGE,
    DEALS_RANGE,
    DELTA_RANGE,
    VERDICT_TEXT,
    Hypotheses,
)
from referee import Rules, RulesError

MAX_PER_PAGE = 100


class PageArgs(Schema):
    page = fields.Integer(load_default=1, validate=validate.Range(min=1, max=1_000_000))
    per_page = fields.Integer(load_default=20, validate=validate.Range(min=1, max=MAX_PER_PAGE))


# The lists' paging is their own, not flask-smorest's @blp.paginate: its query parameters are
# page (unbounded) and page_size, and it answers the totals in an X-Pagination header, not in
# the body; the API's are page (at most 1,000,000) and per_page, its totals in the body.


@functools.cache
def page_of(item: type[Schema]) -> type[Schema]:
    """A page of ``item`` (an ``arena.records.Page``): ``{"items", "total", "page",
    "per_page"}``; one schema per item schema, however many endpoints page it."""
    return Schema.from_dict(
        {
            "items": fields.List(fields.Nested(item), required=True),
            "total": fields.Integer(required=True),
            "page": fields.Integer(required=True),
            "per_page": fields.Integer(required=True),
        },
        name=f"{item.__name__.removesuffix('Schema')}Page",
    )


class Rounded(fields.Float):
    """A number shown rounded to ``places`` decimals; null when it is not finite (an interval
    with no width yet)."""

    def __init__(self, places: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.places = places

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        shown = None if value is None or not math.isfinite(value) else round(value, self.places)
        return super()._serialize(shown, attr, obj, **kwargs)


# -- bots ---------------------------------------------------------------------------------------


LADDER_HELP = "enter the bot in the ladder: the matchmaker seats it in rated matches"
CONCURRENT_HELP = "the most ladder matches it plays at once"
MAX_CONCURRENT_RANGE = validate.Range(min=1, max=MAX_CONCURRENT)


class BotRegistration(Schema):
    name = fields.String(
        required=True,
        validate=validate.Regexp(
            r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,47}$",
            error="1 to 48 letters, digits, spaces, dots, dashes or underscores, "
            "starting with a letter or digit",
        ),
    )
    transport = fields.Enum(
        Transport,
        by_value=True,
        load_default=Transport.PUSH,
        metadata={
            "description": "push: the arena calls the bot's endpoint; pull: the bot connects "
            "out to the arena (behind NAT or a firewall) and has no endpoint"
        },
    )
    endpoint = fields.String(
        load_default=None,
        validate=validate.Length(min=1, max=MAX_URL_LENGTH),
        metadata={"description": "the URL the arena POSTs to: required for a push bot only"},
    )
    description = fields.String(load_default="", validate=validate.Length(max=1000))
    contact = fields.String(required=True, validate=validate.Length(min=3, max=200))
    ladder = fields.Boolean(load_default=False, metadata={"description": LADDER_HELP})
    max_concurrent = fields.Integer(
        load_default=1, validate=MAX_CONCURRENT_RANGE, metadata={"description": CONCURRENT_HELP}
    )


class BotUpdate(Schema):
    endpoint = fields.String(validate=validate.Length(min=1, max=MAX_URL_LENGTH))
    description = fields.String(validate=validate.Length(max=1000))
    contact = fields.String(validate=validate.Length(min=3, max=200))
    allow_human_games = fields.Boolean(
        metadata={"description": "let people choose the bot as an opponent on the Play page"}
    )
    ladder = fields.Boolean(metadata={"description": LADDER_HELP})
    max_concurrent = fields.Integer(
        validate=MAX_CONCURRENT_RANGE, metadata={"description": CONCURRENT_HELP}
    )


class BotPublicSchema(Schema):
    id = fields.String()
    name = fields.String()
    description = fields.String()
    status = fields.String(
        metadata={
            "description": "pending (until its endpoint is verified), active, paused, retired"
        }
    )
    version = fields.String(metadata={"description": "as the bot said in its last handshake"})
    transport = fields.Enum(
        Transport,
        by_value=True,
        metadata={"description": "push (the arena calls its endpoint) or pull (it connects out)"},
    )
    connected = fields.Boolean(
        allow_none=True,
        metadata={"description": "a pull bot's stream is open now; null for a push bot"},
    )
    created_at = fields.String()
    allow_human_games = fields.Boolean()
    ladder = fields.Boolean(metadata={"description": LADDER_HELP})
    max_concurrent = fields.Integer(metadata={"description": CONCURRENT_HELP})
    faults = fields.Integer(
        metadata={"description": "its decisions the arena answered with the fallback (faults)"}
    )
    fallbacks = fields.Integer(
        metadata={
            "description": "its answers that were its own fallback, by their note ('fallback: ')"
        }
    )


class BotSchema(BotPublicSchema):
    """What the owner sees."""

    endpoint = fields.String()
    contact = fields.String()
    updated_at = fields.String()


class BotCredentials(Schema):
    bot = fields.Nested(BotSchema, required=True)
    token = fields.String(
        required=True, metadata={"description": "the management token: shown once, keep it"}
    )
    signing_secret = fields.String(
        required=True, metadata={"description": "the request-signing secret: shown once"}
    )


class DoctorCheckSchema(Schema):
    name = fields.String(required=True)
    ok = fields.Boolean(required=True)
    detail = fields.String(required=True, metadata={"description": "what was found"})


class LatencySchema(Schema):
    p50 = fields.Integer(required=True)
    p90 = fields.Integer(required=True)
    p99 = fields.Integer(required=True)
    max = fields.Integer(required=True)


class DoctorReportSchema(Schema):
    """An ``arena.doctor.Report``."""

    endpoint = fields.String(required=True)
    ok = fields.Boolean(required=True, metadata={"description": "every check passed"})
    time_limit_ms = fields.Integer(required=True)
    checks = fields.List(fields.Nested(DoctorCheckSchema), required=True)
    latency_ms = fields.Nested(
        LatencySchema,
        allow_none=True,
        required=True,
        metadata={"description": "of every probed decision; null when none was answered"},
    )


class SecretSchema(Schema):
    signing_secret = fields.String(required=True)
    previous_valid_for_s = fields.Integer(
        required=True, metadata={"description": "how long the old secret still signs requests"}
    )


# -- tournaments --------------------------------------------------------------------------------


class FormatSchema(Schema):
    kind = fields.String(
        load_default="round_robin",
        dump_default="round_robin",
        validate=validate.OneOf(["round_robin"]),
    )
    duplicate = fields.Boolean(load_default=True)
    matches_per_table = fields.Integer(load_default=1, validate=validate.Range(min=1, max=100))
    hands = fields.Integer(
        load_default=None,
        allow_none=True,
        validate=validate.Range(min=1, max=1000),
        metadata={"description": "a fixed number of hands per match; null: to the rules' end"},
    )


class TimeControlSchema(Schema):
    decision_ms = fields.Integer(load_default=1000, validate=validate.Range(min=50, max=60_000))
    bank_ms = fields.Integer(load_default=30_000, validate=validate.Range(min=0, max=600_000))
    fault_limit = fields.Integer(load_default=5, validate=validate.Range(min=1, max=1000))


class RulesField(fields.Dict):
    """A rules profile: a JSON object checked by ``Rules.from_json``; loads as :class:`Rules`."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if not isinstance(value, Mapping):
            raise self.make_error("invalid")
        try:
            return Rules.from_json(dict(value))
        except (RulesError, TypeError, ValueError) as error:
            raise ValidationError(str(error)) from None

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return None if value is None else value.to_json()


class TournamentTemplate(Schema):
    """What a tournament plays: shared by tournaments and schedules."""

    name = fields.String(required=True, validate=validate.Length(min=1, max=100))
    format = fields.Nested(FormatSchema, load_default=lambda: FormatSchema().load({}))
    rules = RulesField(load_default=Rules, metadata={"description": "rules profile"})
    time_control = fields.Nested(
        TimeControlSchema, load_default=lambda: TimeControlSchema().load({})
    )
    rated = fields.Boolean(load_default=True)


class TournamentCreate(TournamentTemplate):
    participants = fields.List(
        fields.String(validate=validate.Length(min=1, max=64)),
        required=True,
        validate=validate.Length(min=1, max=64),
        metadata={"description": f"bot ids and house bots ({', '.join(HOUSE_PARTICIPANTS)})"},
    )

    @validates("participants")
    def _unique(self, value: list[str], **_: Any) -> None:
        if len(set(value)) != len(value):
            raise ValidationError("each participant may be named once")


class MatchFailureSchema(Schema):
    match_id = fields.String(required=True)
    reason = fields.String(
        required=True, metadata={"description": "the last line of the error of its last run"}
    )


class TournamentSchema(Schema):
    """An ``arena.tournaments.Shown``: the tournament, and its deal secret once revealed."""

    id = fields.String(attribute="tournament.id")
    name = fields.String(attribute="tournament.spec.name")
    participants = fields.List(fields.String(), attribute="tournament.spec.participants")
    format = fields.Nested(FormatSchema, attribute="tournament.spec.format")
    rules = RulesField(attribute="tournament.spec.rules")
    time_control = fields.Nested(TimeControlSchema, attribute="tournament.spec.time_control")
    rated = fields.Boolean(attribute="tournament.spec.rated")
    status = fields.String(
        attribute="tournament.status",
        metadata={"description": "created, queued, running, done, done_with_failures or cancelled"},
    )
    progress = fields.Dict(
        keys=fields.String(),
        values=fields.Integer(),
        metadata={"description": "matches done (recorded), failed and total (planned)"},
    )
    failures = fields.List(
        fields.Nested(MatchFailureSchema),
        attribute="tournament.failures",
        metadata={"description": "the matches whose jobs failed for good, and why"},
    )
    created_at = fields.String(attribute="tournament.created_at")
    updated_at = fields.String(attribute="tournament.updated_at")
    schedule_id = fields.String(allow_none=True, attribute="tournament.schedule_id")
    deal_commitment = fields.String(
        attribute="tournament.deal_commitment",
        metadata={"description": "SHA-256 (hex) of the secret every deal comes from"},
    )
    deal_secret = fields.String(
        allow_none=True,
        attribute="deal_secret_hex",
        metadata={
            "description": "the secret (hex), revealed when the tournament is done or "
            "cancelled; null before (docs/REPLAYS.md, fair deals)"
        },
    )


# -- gauntlets ----------------------------------------------------------------------------------


class GauntletCreate(Schema):
    candidate = fields.String(
        required=True,
        validate=validate.Length(min=1, max=64),
        metadata={"description": "the bot tested: yours (its token authorises the request)"},
    )
    baseline = fields.String(
        required=True,
        validate=validate.Length(min=1, max=64),
        metadata={"description": "what it is tested against: a house bot or another of yours"},
    )
    baseline_token = fields.String(
        load_default=None,
        validate=validate.Length(min=1, max=200),
        metadata={"description": "the baseline's management token, when it is a bot of yours"},
    )
    opponents = fields.List(
        fields.String(validate=validate.Length(min=1, max=64)),
        load_default=None,
        validate=validate.Length(equal=2),
        metadata={
            "description": "the two other seats, the same bot twice (default: house Normal, or "
            "the first of Easy and Hard that is neither candidate nor baseline)"
        },
    )
    delta = fields.Float(
        load_default=Hypotheses.delta,
        validate=validate.Range(*DELTA_RANGE),
        metadata={"description": "the least difference worth knowing, in points per hand"},
    )
    alpha = fields.Float(
        load_default=Hypotheses.alpha,
        validate=validate.Range(*ALPHA_RANGE),
        metadata={"description": 'the chance of saying "better" (or "worse") wrongly'},
    )
    beta = fields.Float(
        load_default=Hypotheses.beta,
        validate=validate.Range(*BETA_RANGE),
        metadata={"description": "the chance of missing a difference of delta"},
    )
    max_deals = fields.Integer(
        load_default=200,
        validate=validate.Range(*DEALS_RANGE),
        metadata={"description": "the cap: deals dealt at most (each played 4 times)"},
    )
    hands = fields.Integer(
        load_default=4,
        validate=validate.Range(1, 20),
        metadata={"description": "hands in each match (each of a deal's four rotations)"},
    )
    rules = RulesField(load_default=Rules, metadata={"description": "rules profile (not teams)"})


class GauntletArgs(PageArgs):
    bot = fields.String(
        load_default=None,
        validate=validate.Length(min=1, max=64),
        metadata={"description": "only the gauntlets this bot is the candidate or baseline of"},
    )


class GauntletDealSchema(Schema):
    deal = fields.Integer(required=True)
    candidate_points = fields.Integer(required=True)
    baseline_points = fields.Integer(required=True)
    hands = fields.Integer(required=True)
    difference = fields.Method(
        "_difference",
        allow_none=True,
        metadata={"description": "points per hand, candidate less baseline; null when void"},
    )
    void = fields.String(
        required=True, metadata={"description": "why the deal does not count ('' if it does)"}
    )

    def _difference(self, deal: Any) -> float | None:
        return None if deal.void else round(deal.difference, 3)


class GauntletStateSchema(Schema):
    """A :class:`bot_sdk.sequential.State`."""

    deals = fields.Integer(metadata={"description": "deals counted"})
    mean = Rounded(3, metadata={"description": "Δ: the mean difference, points per hand"})
    low = Rounded(3, allow_none=True, metadata={"description": "95% interval, low end"})
    high = Rounded(3, allow_none=True, metadata={"description": "95% interval, high end"})
    evidence = Rounded(
        3,
        metadata={
            "description": 'the evidence of a difference (a log mixture ratio): "better" or '
            '"worse", by the sign of mean, once it reaches bounds.difference'
        },
    )
    llr_better = Rounded(3, metadata={"description": "Wald's log ratio of Δ = δ to Δ = 0"})
    llr_worse = Rounded(3, metadata={"description": "Wald's log ratio of Δ = −δ to Δ = 0"})
    verdict = fields.String()


class GauntletSchema(Schema):
    """An ``arena.gauntlets.Progress``."""

    id = fields.String()
    status = fields.String(attribute="tournament.status")
    candidate = fields.String(attribute="gauntlet.candidate")
    baseline = fields.String(attribute="gauntlet.baseline")
    opponents = fields.List(fields.String(), attribute="gauntlet.opponents")
    delta = fields.Float(attribute="gauntlet.delta")
    alpha = fields.Float(attribute="gauntlet.alpha")
    beta = fields.Float(attribute="gauntlet.beta")
    max_deals = fields.Integer(attribute="gauntlet.max_deals")
    hands = fields.Integer(attribute="tournament.spec.format.hands")
    rules = RulesField(attribute="tournament.spec.rules")
    started_by = fields.String(attribute="gauntlet.started_by")
    verdict = fields.String(
        metadata={
            "description": "running, better, worse, no_difference (smaller than delta either "
            "way), cap (no difference shown within the cap) or cancelled"
        }
    )
    verdict_text = fields.Method("_verdict_text")
    bounds = fields.Method(
        "_bounds",
        metadata={
            "description": "where the test stops: evidence at difference, both Wald ratios at "
            "no_difference (docs/GAUNTLETS.md)"
        },
    )
    state = fields.Nested(GauntletStateSchema)
    deals = fields.List(fields.Nested(GauntletDealSchema))
    trajectory = fields.List(
        fields.Nested(GauntletStateSchema), metadata={"description": "the test after each deal"}
    )
    matches = fields.Integer(attribute="tournament.done", metadata={"description": "recorded"})
    created_at = fields.String(attribute="tournament.created_at")
    updated_at = fields.String(attribute="tournament.updated_at")

    def _verdict_text(self, shown: Any) -> str:
        return str(VERDICT_TEXT.get(shown.verdict, shown.verdict))

    def _bounds(self, shown: Any) -> dict[str, float]:
        return {
            "difference": round(shown.hypotheses.upper, 3),
            "no_difference": round(shown.hypotheses.lower, 3),
        }


class GauntletSummarySchema(GauntletSchema):
    """A gauntlet in a list: without its deals and trajectory."""

    class Meta:
        exclude = ("deals", "trajectory")


class ScheduleCreate(Schema):
    cron = fields.String(
        required=True,
        validate=validate.Length(min=9, max=100),
        metadata={"description": "five-field cron syntax, e.g. '0 3 * * *'"},
    )
    template = fields.Nested(TournamentTemplate, required=True)


class ScheduleSchema(Schema):
    id = fields.String()
    cron = fields.String()
    template = fields.Dict()
    created_at = fields.String()


# -- matches and standings ----------------------------------------------------------------------


class MatchArgs(PageArgs):
    tournament = fields.String(validate=validate.Length(min=1, max=64))
    bot = fields.String(validate=validate.Length(min=1, max=64))


class MatchResultSchema(Schema):
    places = fields.List(fields.Integer())
    totals = fields.List(fields.Integer())
    faults = fields.List(fields.Integer())
    forfeited = fields.List(fields.Integer())
    hands = fields.Integer()
    termination = fields.String()


class MatchSchema(Schema):
    id = fields.String()
    tournament_id = fields.String(allow_none=True)
    table_id = fields.String(allow_none=True)
    seats = fields.List(fields.String())
    status = fields.String()
    created_at = fields.String()
    finished_at = fields.String(allow_none=True)
    result = fields.Nested(MatchResultSchema, allow_none=True)
    failure = fields.String(
        allow_none=True, metadata={"description": "why a failed match failed (else null)"}
    )
    deal_label = fields.String(
        allow_none=True,
        metadata={"description": "its deal sequence in the tournament; rotations share it"},
    )
    versions = fields.List(
        fields.String(),
        metadata={"description": "each seat's version, as its bot answered in hello (recorded)"},
    )
    voided_by = fields.String(
        allow_none=True,
        metadata={"description": "the dispute whose ruling voided it: its result no longer counts"},
    )
    replaced_by = fields.String(
        allow_none=True, metadata={"description": "the match that replays it, once voided"}
    )
    replaces = fields.String(
        allow_none=True, metadata={"description": "the voided match it replays (same deal, seats)"}
    )


class VerificationSchema(Schema):
    ok = fields.Boolean(required=True)
    integrity = fields.String(
        required=True, metadata={"description": "'ok', or why the seal does not match"}
    )
    hands = fields.Integer()
    decisions = fields.Integer()
    requests_checked = fields.Integer()
    deals_checked = fields.Boolean(
        metadata={
            "description": "every deal was checked against its source: the tournament's secret "
            "(once revealed) or a practice seed"
        }
    )
    discrepancy = fields.String(allow_none=True)


class StandingSchema(Schema):
    rank = fields.Integer()
    bot_id = fields.String()
    matches = fields.Integer()
    wins = fields.Integer()
    average_placement = Rounded(3)
    points_per_hand = Rounded(3)
    faults = fields.Integer()
    forfeits = fields.Integer()
    amended = fields.Integer(
        metadata={"description": "its results withdrawn by disputes' rulings (docs/DISPUTES.md)"}
    )


class StandingsSchema(Schema):
    tournament_id = fields.String()
    standings = fields.List(fields.Nested(StandingSchema))


class SeatFiguresSchema(Schema):
    seat = fields.Integer()
    matches = fields.Integer()
    average_placement = Rounded(3)
    points_per_hand = Rounded(3)

    def get_attribute(self, obj: tuple[int, SeatFigures], attr: str, default: Any) -> Any:
        seat, figures = obj
        return seat if attr == "seat" else super().get_attribute(figures, attr, default)


SEAT_FIGURES = SeatFiguresSchema(many=True)
"""One schema for every rating's figures by seat: building one per row of the ladder took more
of its time than all its other fields (docs/BENCHMARKS.md)."""


MU = (
    "the estimated strength, in points per hand relative to house Normal's current "
    "estimate (0: as strong as house Normal)"
)
SIGMA = "the estimate's uncertainty (standard deviation), in points per hand"
CONSERVATIVE = "the conservative rating, mu - 3 sigma (points per hand): the ladder's order"


class RatingSchema(Schema):
    """One version of a participant on the ladder."""

    bot_id = fields.String()
    version = fields.String(
        metadata={"description": 'as the bot answered in hello ("": rated before versions)'}
    )
    mu = fields.Float(metadata={"description": MU})
    sigma = fields.Float(metadata={"description": SIGMA})
    rating = fields.Float(
        attribute="conservative",
        metadata={"description": CONSERVATIVE},
    )
    provisional = fields.Boolean(
        metadata={"description": f"sigma is still above {PROVISIONAL_SIGMA:g} points per hand"}
    )
    matches = fields.Integer()
    points_per_hand = Rounded(3)
    fault_rate = Rounded(4)
    seats = fields.Method("_seats", metadata={"description": "its rated matches by seat"})
    first_match = fields.String(metadata={"description": "when its first rated match ended"})
    last_match = fields.String(metadata={"description": "when its latest rated match ended"})
    amended = fields.Integer(
        metadata={"description": "its rated matches withdrawn by disputes' rulings"}
    )

    def _seats(self, obj: Any) -> list[dict[str, Any]]:
        seats = self.get_attribute(obj, "seats", ())  # a ladder row's are its rating's
        return list(SEAT_FIGURES.dump(list(enumerate(seats))))


class LadderRowSchema(RatingSchema):
    """A row of the ladder: a participant's rank, name and its latest version's rating."""

    rank = fields.Integer()
    name = fields.String()

    def get_attribute(self, obj: Any, attr: str, default: Any) -> Any:
        if attr in ("rank", "name"):
            return super().get_attribute(obj, attr, default)
        return super().get_attribute(obj.rating, attr, default)


class RatingPointSchema(Schema):
    match_id = fields.String()
    mu = fields.Float(metadata={"description": MU})
    sigma = fields.Float(metadata={"description": SIGMA})
    rating = fields.Float(attribute="conservative", metadata={"description": CONSERVATIVE})
    at = fields.String()


class RatingHistoryArgs(Schema):
    version = fields.String(
        validate=validate.Length(max=200),
        metadata={"description": "which version (default: the one played latest)"},
    )


class RatingHistorySchema(Schema):
    bot_id = fields.String()
    version = fields.String()
    history = fields.List(fields.Nested(RatingPointSchema))


class HeadToHeadSchema(Schema):
    opponent = fields.String()
    matches = fields.Integer()
    ahead = fields.Integer(metadata={"description": "matches it finished ahead of the opponent"})
    behind = fields.Integer()
    level = fields.Integer(metadata={"description": "matches they finished level"})
    points_per_hand = Rounded(
        3, metadata={"description": "its points per hand minus the opponent's, together"}
    )


class LadderStatusSchema(Schema):
    interval_s = fields.Integer(
        metadata={"description": "how often the matchmaker runs a round; 0: it is off"}
    )
    tables_per_round = fields.Integer()
    hands = fields.Integer(metadata={"description": "hands per ladder match; 0: to the end"})
    house = fields.List(fields.String(), metadata={"description": "the house bots in it"})
    open_tables = fields.Integer()
    last_round = fields.Dict(
        metadata={
            "description": "when it last ran (at), what it seated (tables), how many rounds "
            "ran, why its re-rating stopped (rerating_error; null if it did not), and the "
            "bots it passed over, each with the rounds in a row it had room and was not "
            "seated (passed_over; such a bot hosts one of the next round's tables first)"
        }
    )
    provisional_sigma = fields.Float(
        dump_default=PROVISIONAL_SIGMA,
        metadata={"description": "a rating is provisional while sigma is above this"},
    )
    anchor = fields.String(
        dump_default=ANCHOR,
        metadata={"description": "the participant every shown mu is relative to (its own: 0)"},
    )
    anchor_level = fields.Float(
        allow_none=True,
        metadata={
            "description": "its mu on the stored, absolute scale: what every shown mu has "
            "subtracted; null while the ratings await re-rating"
        },
    )
    rerating = fields.Boolean(
        metadata={
            "description": "the stored ratings were made on another scale and await "
            "re-rating (docs/OPERATIONS.md): the ladder shows none until then"
        }
    )


# -- human games --------------------------------------------------------------------------------


class PlayCreate(Schema):
    opponents = fields.List(
        fields.String(validate=validate.Length(min=1, max=64)),
        load_default=lambda: ["house:normal"] * 3,
        validate=validate.Length(equal=3),
        metadata={
            "description": "the computers at your right, across and left: house bots "
            f"({', '.join(HOUSE_PARTICIPANTS)}) or registered bots whose owners allow human games"
        },
    )
    rules = RulesField(load_default=Rules, metadata={"description": "rules profile"})
    seed = fields.String(
        validate=validate.Length(min=1, max=64),
        metadata={
            "description": "a seed of your choice, for practice: the deals are then known in "
            "advance and the replay says so (default: the arena draws a secret and commits to it)"
        },
    )
    seat = fields.Integer(
        validate=validate.Range(min=0, max=3),
        metadata={"description": "your seat in play order (default: a random one)"},
    )


class PlayVersion(Schema):
    version = fields.Integer(
        required=True, metadata={"description": "the version of the state the move was made on"}
    )


class PlayMove(PlayVersion):
    card = fields.String(metadata={"description": "the card to play"})
    cards = fields.List(
        fields.String(),
        validate=validate.Length(max=13),
        metadata={"description": "the cards to expose (none: don't expose) or to pass"},
    )


class PlayLevel(PlayVersion):
    level = fields.String(
        required=True,
        validate=validate.OneOf(HOUSE_LEVELS),
        metadata={"description": "the house bots' difficulty from your next hand on"},
    )


class PlayStateArgs(Schema):
    since = fields.Integer(
        validate=validate.Range(min=0),
        metadata={"description": "answer the events of the decisions from this index on"},
    )


class PlayCardSchema(Schema):
    card = fields.String()
    playable = fields.Boolean(metadata={"description": "the referee allows choosing it now"})
    reason = fields.String(allow_none=True, metadata={"description": "why it cannot be played"})
    refusal = fields.Dict(
        allow_none=True,
        metadata={
            "description": "the referee's refusal of it: code (referee.Refusal) and parameters "
            "(cards by name, suit by letter), for wording the reason in another language"
        },
    )
    effect = fields.String(allow_none=True, metadata={"description": "exposing it: 'Pig ×2'"})


class PlaySeatSchema(Schema):
    seat = fields.Integer()
    position = fields.String(metadata={"description": "bottom (you), right, top or left"})
    name = fields.String()
    kind = fields.String(metadata={"description": "human, house or bot"})
    cards_held = fields.Integer()
    exposed = fields.List(fields.String(), metadata={"description": "exposed, not yet played"})
    taken = fields.List(fields.String(), metadata={"description": "scoring cards taken"})
    hand_score = fields.Integer(metadata={"description": "the cards taken so far, scored"})
    total = fields.Integer()


class PlayEventSchema(Schema):
    move = fields.Integer()
    kind = fields.String(metadata={"description": "play, or exposed (all revealed at once)"})
    hand = fields.Integer()
    seat = fields.Integer(allow_none=True)
    card = fields.String(allow_none=True)
    trick = fields.Integer(allow_none=True)
    winner = fields.Integer(allow_none=True, metadata={"description": "set on a trick's 4th card"})
    exposed = fields.List(fields.List(fields.String()), allow_none=True)


class PlayStateSchema(Schema):
    id = fields.String()
    match_id = fields.String()
    version = fields.Integer()
    moves = fields.Integer(metadata={"description": "decisions made so far"})
    seat = fields.Integer()
    opponents = fields.List(fields.String(), metadata={"description": "right, across, left"})
    rules = fields.Dict()
    deals = fields.Dict(
        metadata={
            "description": "where the deals come from: scheme committed (the commitment to the "
            "arena's secret; the secret once the game is over) or practice (the seed you chose)"
        }
    )
    phase = fields.String()
    hand_number = fields.Integer()
    trick_number = fields.Integer(metadata={"description": "1 to 13 in play, 0 before"})
    to_move = fields.Integer(allow_none=True, metadata={"description": "whose card is awaited"})
    decision = fields.Dict(allow_none=True, metadata={"description": "yours: kind and count"})
    hand = fields.List(fields.Nested(PlayCardSchema))
    seats = fields.List(fields.Nested(PlaySeatSchema))
    trick = fields.List(fields.Dict())
    last_trick = fields.Dict(allow_none=True)
    markers = fields.List(fields.Dict(), metadata={"description": "pig, goat, transformer played"})
    all_hearts_threat = fields.Integer(allow_none=True)
    notice = fields.String(allow_none=True)
    effects = fields.Dict(keys=fields.String(), values=fields.String())
    difficulty = fields.Dict(allow_none=True)
    hand_result = fields.Dict(allow_none=True, metadata={"description": "waiting for Next hand"})
    outcome = fields.Dict(allow_none=True)
    events = fields.List(fields.Nested(PlayEventSchema))


class PlayHintSchema(Schema):
    kind = fields.String()
    cards = fields.List(fields.String())


class PlayOpponentSchema(Schema):
    id = fields.String()
    name = fields.String()
    kind = fields.String()


# -- divergences --------------------------------------------------------------------------------


class DivergenceArgs(Schema):
    bot = fields.String(
        required=True,
        validate=validate.Length(min=1, max=64),
        metadata={"description": "the participant whose line of the deal is compared"},
    )
    seat = fields.Integer(
        validate=validate.Range(min=0, max=3),
        metadata={"description": "its seat, needed only when it sat in two seats of the match"},
    )


class DivergenceLineSchema(Schema):
    match_id = fields.String(metadata={"description": "the rotation this line was played in"})
    participant = fields.String()
    name = fields.String(metadata={"description": "the name the match's log gives it"})
    points = fields.List(fields.Integer(), metadata={"description": "the seat's score, by hand"})
    total = fields.Integer()


class DivergenceCellSchema(Schema):
    cards = fields.List(
        fields.String(),
        allow_none=True,
        metadata={"description": "the cards chosen; null: cards this seat did not hold there"},
    )
    status = fields.String(metadata={"description": "the decision's log status (ok, a fault)"})
    same_position = fields.Boolean(
        metadata={"description": "the line's seat saw what this seat saw (totals aside)"}
    )


class DivergenceStepSchema(Schema):
    step = fields.String(
        attribute="step.label", metadata={"description": "pass, exposure, trick 5"}
    )
    kind = fields.Function(lambda row: row.step.kind.value)
    cells = fields.List(
        fields.Nested(DivergenceCellSchema, allow_none=True),
        metadata={"description": "each line's choice, in the order of lines (null: none made)"},
    )


class DivergencePointSchema(Schema):
    hand = fields.Integer(attribute="step.hand")
    step = fields.String(attribute="step.label")
    kind = fields.Function(lambda point: point.step.kind.value)
    decision = fields.Integer(
        metadata={"description": "its index in the hand's decisions of the log, from 0"}
    )
    view = fields.Function(
        lambda point: point.view.to_json(),
        metadata={"description": "the seat's observation there, as the bot was sent it"},
    )
    rows = fields.List(
        fields.Nested(DivergenceStepSchema),
        metadata={"description": "the hand's steps up to and including the divergence"},
    )


class DivergenceSchema(Schema):
    match_id = fields.String(attribute="match.id")
    tournament_id = fields.String(attribute="match.tournament_id")
    deal_label = fields.String(attribute="match.deal_label")
    seat = fields.Integer(attribute="report.seat")
    bot = fields.Integer(
        attribute="report.bot", metadata={"description": "the index of the bot's line in lines"}
    )
    lines = fields.List(fields.Nested(DivergenceLineSchema), attribute="report.lines")
    cost = Rounded(
        1,
        attribute="report.cost",
        metadata={"description": "the other lines' mean total minus the bot's line's"},
    )
    divergence = fields.Nested(
        DivergencePointSchema,
        attribute="report.divergence",
        allow_none=True,
        metadata={"description": "null: at every step, another line chose what the bot chose"},
    )


class DivergenceEntrySchema(Schema):
    match_id = fields.String()
    seat = fields.Integer()
    tournament_id = fields.String()
    deal_label = fields.String()
    hand = fields.Integer()
    step = fields.String()
    decision = fields.Integer()
    points = fields.Integer(metadata={"description": "what its line scored on the deal"})
    others = Rounded(1, metadata={"description": "what the other lines scored, on average"})
    cost = Rounded(1, metadata={"description": "others minus points"})
    lines = fields.Integer()


# -- health -------------------------------------------------------------------------------------


class HealthSchema(Schema):
    status = fields.String(required=True)


class ArchiveReadySchema(Schema):
    writable = fields.Boolean(
        required=True,
        metadata={
            "description": "the archive of match logs took a write just now (probed at most "
            "every 5 s in each web process)"
        },
    )
    logs_waiting = fields.Integer(
        required=True,
        metadata={
            "description": "recorded matches' logs held in Redis until the archive takes them "
            "(moved within `GONGZHU_RECOVERY_S` of its taking writes again)"
        },
    )
    bytes_waiting = fields.Integer(
        required=True,
        metadata={
            "description": "their bytes; past `GONGZHU_ARCHIVE_HOLD_MB` a match whose log "
            "cannot be archived fails its run"
        },
    )


class ReadySchema(Schema):
    status = fields.String(
        required=True,
        metadata={
            "description": "`ready`; `degraded` (still 200) while the archive takes no writes; "
            "`unavailable` (503) while Redis is unreachable"
        },
    )
    redis = fields.Boolean(required=True)
    archive = fields.Nested(
        ArchiveReadySchema,
        metadata={"description": "the archive of match logs (absent while Redis is unreachable)"},
    )
    workers = fields.Integer(required=True)
    queue_depth = fields.Integer(required=True)
    pull_bots_connected = fields.Integer(
        required=True, metadata={"description": "pull bots whose stream is open now"}
    )
    referee = fields.String(
        required=True,
        metadata={
            "description": "the referee's build in this process: `compiled (mypyc)`, or "
            "`pure Python (why)` (`python -m referee --version` says the same)"
        },
    )
    builds = fields.Dict(
        keys=fields.String(),
        values=fields.String(),
        required=True,
        metadata={
            "description": "the build of each compiled package in this process (referee, "
            "bot_sdk, replays): `compiled (mypyc)` or `pure Python (why)`"
        },
    )


# -- disputes (docs/DISPUTES.md) ----------------------------------------------------------------


class DisputeCreate(Schema):
    match_id = fields.String(required=True, validate=validate.Length(min=1, max=128))
    hand = fields.Integer(
        required=True,
        validate=validate.Range(min=1, max=1000),
        metadata={"description": "the hand, from 1"},
    )
    decision = fields.Integer(
        load_default=None,
        allow_none=True,
        validate=validate.Range(min=0, max=10_000),
        metadata={
            "description": "the decision's index in the hand, from 0, as the log counts them "
            "(null: the whole hand, each of your bot's decisions in it)"
        },
    )
    statement = fields.String(
        required=True,
        validate=validate.Length(min=1, max=2000),
        metadata={"description": "what you contest, briefly: the evidence does the rest"},
    )


class DisputeArgs(PageArgs):
    tournament = fields.String(
        load_default=None,
        validate=validate.Length(min=1, max=64),
        metadata={"description": "a tournament's ruled disputes (no token needed)"},
    )
    status = fields.String(
        load_default=None,
        validate=validate.OneOf(["open"]),
        metadata={"description": "open: only the disputes not yet ruled on (the operator)"},
    )


class RulingCreate(Schema):
    status = fields.String(required=True, validate=validate.OneOf(["rejected", "upheld"]))
    reason = fields.String(required=True, validate=validate.Length(min=1, max=2000))
    remedy = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.OneOf(["replay", "strike"]),
        metadata={
            "description": "an upheld ruling's remedy: replay (the match voided and played "
            "again from its deal with the same seats), or strike (the match voided and "
            "continued: its decisions re-enacted up to the contested one, whose recorded answer "
            "is applied without fault, then played on; only where the evidence's answer_check "
            "says the answer could stand, else 409)"
        },
    )


class RulingSchema(Schema):
    status = fields.String(metadata={"description": "rejected or upheld"})
    reason = fields.String()
    ruled_at = fields.String()
    remedy = fields.String(allow_none=True)
    replacement = fields.String(
        allow_none=True,
        metadata={
            "description": "the match that replaces the voided one: {match}-replay, or "
            "{match}-strike for a struck fault"
        },
    )
    applied = fields.Boolean(metadata={"description": "its remedy has changed the results"})


class DisputeSchema(Schema):
    """An ``arena.records.Dispute``."""

    id = fields.String()
    match_id = fields.String()
    tournament_id = fields.String(allow_none=True)
    bot_id = fields.String()
    seat = fields.Integer()
    hand = fields.Integer()
    decision = fields.Integer(allow_none=True, metadata={"description": "null: the whole hand"})
    statement = fields.String()
    status = fields.String(metadata={"description": "open, rejected or upheld"})
    filed_at = fields.String()
    ruling = fields.Nested(RulingSchema, allow_none=True)


class DisputeShownSchema(Schema):
    """An ``arena.disputes.Shown``: a dispute with its evidence (its owner and the operator)
    and its sealed ruling."""

    dispute = fields.Nested(DisputeSchema, required=True)
    evidence_ready = fields.Boolean(
        metadata={"description": "the evidence report is built (a worker builds it on filing)"}
    )
    evidence = fields.Dict(
        allow_none=True,
        metadata={
            "description": "the evidence report (docs/DISPUTES.md): its bot's owner and the "
            "operator only; null while it is built"
        },
    )
    sealed_ruling = fields.Dict(
        allow_none=True,
        metadata={
            "description": "the ruling's sealed record (gongzhu-ruling/1, docs/REPLAYS.md), "
            "once ruled"
        },
    )
