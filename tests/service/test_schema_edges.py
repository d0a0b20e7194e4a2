"""What the API accepts, at each edge, and what its OpenAPI document says of it: every length and
range bound of a request field, the last value accepted and the first refused (a `422` in the one
error shape, whose message names the bound), the same bound in `/api/openapi.json`, each required
field refused when missing, the defaults, and which answer fields the document lists as required
or as possibly null. A bound, a default or a documented flag moved by one fails here."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from typing import Any

import pytest
from flask.testing import FlaskClient
from marshmallow import ValidationError
from marshmallow.validate import Length, Range
from werkzeug.test import TestResponse

from arena.ladder import Row
from arena.records import HOUSE_PARTICIPANTS, NO_SEATS, Rating, SeatFigures, Standing
from arena.store import Store
from service import Config, create_app
from service.schemas import LadderRowSchema, StandingSchema
from tests.service.play_support import ALL_EASY
from tests.service.service_support import bearer, operator
from tests.service.test_edges import TOURNAMENT_BOUNDS

Json = dict[str, Any]
ENDPOINT = "http://127.0.0.1:9/"
"""An endpoint the test arena takes (private addresses allowed) and never calls here."""
CLUBS = [f"{rank}C" for rank in "23456789TJQKA"]
LEFT_OUT = object()
"""A field's value that leaves the field out of the request."""
_names = itertools.count()


def _body(defaults: Json, fields: Json) -> Json:
    return {k: v for k, v in {**defaults, **fields}.items() if v is not LEFT_OUT}


class Arena:
    """The test arena, with limits no test here reaches, and what the requests need: bots, a
    game."""

    def __init__(self, client: FlaskClient, store: Store) -> None:
        self.client = client
        self.store = store
        self._bots: list[str] = []
        self._game: Json | None = None

    def register(self, **fields: Any) -> TestResponse:
        """A registration under a name of its own."""
        body = {"name": f"edge {next(_names)}", "endpoint": ENDPOINT, "contact": "me@example.com"}
        return self.client.post("/api/bots", json=_body(body, fields))

    def update(self, **fields: Any) -> TestResponse:
        """A change to a new pending bot (its endpoint is only checked as a URL)."""
        made = self.register()
        assert made.status_code == 201, made.json
        bot_id, token = made.json["bot"]["id"], made.json["token"]
        return self.client.patch(f"/api/bots/{bot_id}", json=fields, headers=bearer(token))

    def bots(self, count: int) -> list[str]:
        """``count`` active bots (made in the store: a handshake each would be slow)."""
        while len(self._bots) < count:
            bot, _ = self.store.create_bot(
                name=f"entrant {len(self._bots)}",
                endpoint=ENDPOINT,
                description="",
                contact="me@example.com",
                version="1",
                secret="s",
            )
            self._bots.append(bot.id)
        return self._bots[:count]

    def tournament(self, **fields: Any) -> TestResponse:
        body = _body({"name": "edges", "participants": self.bots(1)}, fields)
        return self.client.post("/api/tournaments", json=body, headers=operator())

    def schedule(self, **fields: Any) -> TestResponse:
        body = _body({"cron": "0 3 * * *", "template": {"name": "nightly"}}, fields)
        return self.client.post("/api/schedules", json=body, headers=operator())

    def start(self, **fields: Any) -> TestResponse:
        """A human game against three easy house bots."""
        return self.client.post("/api/play", json=_body({"opponents": ALL_EASY}, fields))

    def game(self) -> Json:
        """One game started, its first state (practice deals: the same every run)."""
        if self._game is None:
            made = self.start(seat=0, seed="1")
            assert made.status_code == 201, made.json
            self._game = dict(made.json)
        return self._game

    def move(self, path: str, **fields: Any) -> TestResponse:
        return self.client.post(f"/api/play/{self.game()['id']}/{path}", json=fields)

    def play(self, **fields: Any) -> TestResponse:
        """A move in the game, on its current version."""
        return self.move("move", version=self.game()["version"], **fields)

    def state(self, **query: Any) -> TestResponse:
        return self.client.get(f"/api/play/{self.game()['id']}", query_string=query)

    def matches(self, **query: Any) -> TestResponse:
        return self.client.get("/api/matches", query_string=query)


@pytest.fixture
def arena(config: Config, store: Store) -> Arena:
    roomy = "1000 per minute"
    app = create_app(
        dataclasses.replace(
            config, register_limit=roomy, play_limit=roomy, endpoint_check_limit=roomy
        )
    )
    return Arena(app.test_client(), store)


@pytest.fixture(scope="module")
def document(redis_server: str, secret_key: str) -> Json:
    """The OpenAPI document as the app serves it (read once: it does not change)."""
    app = create_app(Config(redis_url=redis_server, secret_key=secret_key))
    served: Json = app.test_client().get("/api/openapi.json").json
    return served


def documented(document: Json, where: str) -> Json:
    """What the document says of the field ``where`` names: ``Component.field`` (with ``[]``:
    each item of the list) for a body field, ``/path?name`` for a query parameter of
    ``GET /path``."""
    if "?" in where:
        path, name = where.split("?")
        (parameter,) = (
            p for p in document["paths"][path]["get"]["parameters"] if p["name"] == name
        )
        query: Json = parameter["schema"]
        return query
    schema, prop = where.removesuffix("[]").split(".")
    described: Json = document["components"]["schemas"][schema]["properties"][prop]
    return described["items"] if where.endswith("[]") else described


# The values a request carries, of size (or value) n.
Value = Callable[[Arena, int], Any]


def text(arena: Arena, n: int) -> str:
    return "x" * n


def number(arena: Arena, n: int) -> int:
    return n


def url(arena: Arena, n: int) -> str:
    """A URL of ``n`` characters (shorter than ``ENDPOINT``: not a URL)."""
    return ENDPOINT + "a" * (n - len(ENDPOINT)) if n >= len(ENDPOINT) else "h" * n


def cron(arena: Arena, n: int) -> str:
    """A valid cron expression padded with spaces to ``n`` characters (below 9, a cut one)."""
    return "* * * * *"[:n].ljust(n)


def entrants(arena: Arena, n: int) -> list[str]:
    """``n`` participants: registered bots first (a tournament needs one), then house bots."""
    return [*arena.bots(62), *HOUSE_PARTICIPANTS][:n]


def one_of(arena: Arena, n: int) -> list[str]:
    """A list of one id of ``n`` characters."""
    return ["x" * n]


def easy(arena: Arena, n: int) -> list[str]:
    return ALL_EASY[:1] * n


def first_of_three(arena: Arena, n: int) -> list[str]:
    """Three opponents, the first named by an id of ``n`` characters."""
    return ["x" * n, *ALL_EASY[1:]]


def clubs(arena: Arena, n: int) -> list[str]:
    return [*CLUBS, "2D"][:n]


def ask(action: str, **values: Value) -> Callable[[Arena, int], TestResponse]:
    """The request ``Arena.action`` with each field's value of size n."""

    def request(arena: Arena, n: int) -> TestResponse:
        send: Callable[..., TestResponse] = getattr(arena, action)
        return send(**{name: value(arena, n) for name, value in values.items()})

    return request


@dataclasses.dataclass(frozen=True)
class Bound:
    """One bound of a request field: the field (as :func:`documented` reads it), its rule as
    documented, and a request carrying a value of size ``n``."""

    where: str
    rule: Length | Range
    taken: tuple[int, ...]
    """The edges at which the whole request succeeds; at the others the field passes its bound
    and a later check refuses the request for another reason, ``later`` (no such bot, a card
    not held)."""
    request: Callable[[Arena, int], TestResponse]
    later: str = ""

    @property
    def field(self) -> str:
        """The field's key in a refusal's ``errors`` (a list's first item: ``name.0``)."""
        name = self.where.split("?")[-1].split(".")[-1]
        return f"{name.removesuffix('[]')}.0" if name.endswith("[]") else name

    def span(self) -> tuple[int | None, int | None]:
        """The lowest and the highest size (or value) taken; None: unbounded."""
        rule = self.rule
        if isinstance(rule, Length) and rule.equal is not None:
            return rule.equal, rule.equal
        low: int | None = rule.min
        high: int | None = rule.max
        return low, high

    def edges(self) -> list[int]:
        return sorted({n for n in self.span() if n is not None})

    def beyond(self) -> list[int]:
        low, high = self.span()
        return ([] if low is None else [low - 1]) + ([] if high is None else [high + 1])

    def refusal(self, n: int) -> list[str]:
        """What the rule says of a value of size ``n``: the message of the refused field."""
        value: Any = "x" * n if isinstance(self.rule, Length) else n
        try:
            self.rule(value)
        except ValidationError as error:
            return list(error.messages)
        raise AssertionError(f"{self.rule} takes {n}")

    def keywords(self, described: Json) -> Json:
        """The bound as the OpenAPI keywords of the type described."""
        if isinstance(self.rule, Range):
            names = ("minimum", "maximum")
        elif described["type"] == "array":
            names = ("minItems", "maxItems")
        else:
            names = ("minLength", "maxLength")
        return {k: v for k, v in zip(names, self.span(), strict=True) if v is not None}


# A bot's text fields, the same when it is registered and when it is changed: the rule, a
# value, the edges taken and what refuses the others.
BOT_FIELDS: dict[str, tuple[Length, Value, tuple[int, ...], str]] = {
    "endpoint": (Length(1, 2048), url, (2048,), "http:// or https://"),
    "description": (Length(max=1000), text, (1000,), ""),
    "contact": (Length(3, 200), text, (3, 200), ""),
}
BOUNDS = [
    *(
        Bound(f"{schema}.{field}", rule, taken, ask(action, **{field: value}), later)
        for schema, action in (("BotRegistration", "register"), ("BotUpdate", "update"))
        for field, (rule, value, taken, later) in BOT_FIELDS.items()
    ),
    Bound("TournamentCreate.name", Length(1, 100), (1, 100), ask("tournament", name=text)),
    Bound(
        "TournamentCreate.participants",
        Length(1, 64),
        (1, 64),
        ask("tournament", participants=entrants),
    ),
    *(  # an id in a list: within its bound, it is refused for naming no one known
        Bound(f"{schema}.{field}[]", Length(1, 64), (), ask(action, **{field: value}), later)
        for schema, field, action, value, later in (
            ("TournamentCreate", "participants", "tournament", one_of, "is not a registered bot"),
            ("PlayCreate", "opponents", "start", first_of_three, "there is no bot"),
        )
    ),
    Bound("ScheduleCreate.cron", Length(9, 100), (9, 100), ask("schedule", cron=cron)),
    Bound("/api/matches?tournament", Length(1, 64), (1, 64), ask("matches", tournament=text)),
    Bound("/api/matches?bot", Length(1, 64), (1, 64), ask("matches", bot=text)),
    Bound("PlayCreate.opponents", Length(equal=3), (3,), ask("start", opponents=easy)),
    Bound("PlayCreate.seed", Length(1, 64), (1, 64), ask("start", seed=text)),
    Bound("PlayCreate.seat", Range(0, 3), (0, 3), ask("start", seat=number)),
    Bound("PlayMove.cards", Length(max=13), (), ask("play", cards=clubs), "You do not hold"),
    Bound("/api/play/{game_id}?since", Range(min=0), (0,), ask("state", since=number)),
]


@pytest.mark.parametrize("bound", BOUNDS, ids=[bound.where for bound in BOUNDS])
def test_each_bound_takes_its_last_value_and_refuses_the_next(arena: Arena, bound: Bound) -> None:
    messages = {message for n in bound.beyond() for message in bound.refusal(n)}
    for n in bound.edges():
        answer = bound.request(arena, n)
        if n in bound.taken:
            assert answer.status_code in (200, 201), (n, answer.json)
        else:  # refused, but not by this bound
            assert answer.status_code == 422 and bound.later in answer.json["message"], answer.json
            assert not messages & set(answer.json.get("errors", {}).get(bound.field, []))
    for n in bound.beyond():
        refused = bound.request(arena, n)
        assert refused.status_code == 422, (n, refused.json)
        assert refused.json["status"] == 422 and refused.json["error"] == "invalid"
        assert refused.json["errors"] == {bound.field: bound.refusal(n)}
        assert bound.field in refused.json["message"]


@pytest.mark.parametrize("bound", BOUNDS, ids=[bound.where for bound in BOUNDS])
def test_the_document_states_each_bound(document: Json, bound: Bound) -> None:
    described = documented(document, bound.where)
    stated = {
        k: described[k]
        for k in ("minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems")
        if k in described
    }
    assert stated == bound.keywords(described)


def test_the_document_states_the_bounds_of_pages_and_time_controls(document: Json) -> None:
    for path in ("/api/bots", "/api/matches", "/api/tournaments", "/api/ladder"):
        page, per_page = (
            documented(document, f"{path}?page"),
            documented(document, f"{path}?per_page"),
        )
        assert (page["minimum"], page["maximum"], page["default"]) == (1, 1_000_000, 1)
        assert (per_page["minimum"], per_page["maximum"], per_page["default"]) == (1, 100, 20)
    for (section, name), low, high in TOURNAMENT_BOUNDS:
        schema = {"time_control": "TimeControl", "format": "Format"}[section]
        described = documented(document, f"{schema}.{name}")
        assert (described["minimum"], described["maximum"]) == (low, high)


MISSING = "Missing data for required field."
REQUIRED: dict[str, tuple[str, Callable[[Arena], TestResponse]]] = {
    "registration name": ("name", lambda arena: arena.register(name=LEFT_OUT)),
    "registration contact": ("contact", lambda arena: arena.register(contact=LEFT_OUT)),
    "tournament name": ("name", lambda arena: arena.tournament(name=LEFT_OUT)),
    "tournament participants": (
        "participants",
        lambda arena: arena.tournament(participants=LEFT_OUT),
    ),
    "schedule cron": ("cron", lambda arena: arena.schedule(cron=LEFT_OUT)),
    "schedule template": ("template", lambda arena: arena.schedule(template=LEFT_OUT)),
    "schedule template name": ("template.name", lambda arena: arena.schedule(template={})),
    "move version": ("version", lambda arena: arena.move("move", cards=[])),
    "next hand version": ("version", lambda arena: arena.move("next-hand")),
    "difficulty version": ("version", lambda arena: arena.move("difficulty", level="hard")),
    "difficulty level": (
        "level",
        lambda arena: arena.move("difficulty", version=arena.game()["version"]),
    ),
}


@pytest.mark.parametrize(("field", "request_without"), REQUIRED.values(), ids=REQUIRED)
def test_a_required_field_left_out_is_refused_by_name(
    arena: Arena, field: str, request_without: Callable[[Arena], TestResponse]
) -> None:
    refused = request_without(arena)
    assert refused.status_code == 422, refused.json
    assert refused.json["error"] == "invalid" and refused.json["errors"] == {field: [MISSING]}


def test_a_push_bot_left_without_an_endpoint_is_refused_by_name(arena: Arena) -> None:
    refused = arena.register(endpoint=LEFT_OUT)  # a push bot, the default transport
    assert refused.status_code == 422, refused.json
    assert list(refused.json["errors"]) == ["endpoint"]
    assert "needs the endpoint" in refused.json["errors"]["endpoint"][0]


# What the document marks, in each schema of service/schemas.py, as required and as possibly
# null: in an answer, what a client may count on (a client generated from the document relies on
# both); in a request body, what it must send and what it may send as null.
ANSWERS: dict[str, tuple[set[str], set[str]]] = {
    "Bot": (set(), {"connected"}),
    "BotPublic": (set(), {"connected"}),
    "BotCredentials": ({"bot", "token", "signing_secret"}, set()),
    "DoctorCheck": ({"name", "ok", "detail"}, set()),
    "Latency": ({"p50", "p90", "p99", "max"}, set()),
    "DoctorReport": ({"endpoint", "ok", "time_limit_ms", "checks", "latency_ms"}, {"latency_ms"}),
    "Secret": ({"signing_secret", "previous_valid_for_s"}, set()),
    "Format": (set(), {"hands"}),
    "TimeControl": (set(), set()),
    "MatchFailure": ({"match_id", "reason"}, set()),
    "Tournament": (set(), {"schedule_id", "deal_secret"}),
    "Schedule": (set(), set()),
    "MatchResult": (set(), set()),
    "Match": (
        set(),
        {
            "tournament_id",
            "table_id",
            "finished_at",
            "result",
            "failure",
            "deal_label",
            "voided_by",
            "replaced_by",
            "replaces",
        },
    ),
    "Verification": ({"ok", "integrity"}, {"discrepancy"}),
    "Standing": (set(), set()),
    "Standings": (set(), set()),
    "Rating": (set(), set()),
    "RatingPoint": (set(), set()),
    "RatingHistory": (set(), set()),
    "PlayCard": (set(), {"reason", "refusal", "effect"}),
    "PlaySeat": (set(), set()),
    "PlayEvent": (set(), {"seat", "card", "trick", "winner", "exposed"}),
    "PlayState": (
        set(),
        {
            "to_move",
            "decision",
            "last_trick",
            "all_hearts_threat",
            "notice",
            "difficulty",
            "hand_result",
            "outcome",
        },
    ),
    "PlayHint": (set(), set()),
    "PlayOpponent": (set(), set()),
    "Health": ({"status"}, set()),
    "Ready": (
        {"status", "redis", "workers", "queue_depth", "pull_bots_connected", "referee", "builds"},
        set(),
    ),
    **{
        f"{item}Page": ({"items", "total", "page", "per_page"}, set())
        for item in ("BotPublic", "Tournament", "Match", "Rating")
    },
    # request bodies
    "BotRegistration": ({"name", "contact"}, {"endpoint"}),
    "BotUpdate": (set(), set()),
    "TournamentTemplate": ({"name"}, set()),
    "TournamentCreate": ({"name", "participants"}, set()),
    "ScheduleCreate": ({"cron", "template"}, set()),
    "PlayCreate": (set(), set()),
    "PlayVersion": ({"version"}, set()),
    "PlayMove": ({"version"}, set()),
    "PlayLevel": ({"version", "level"}, set()),
    "DisputeCreate": ({"match_id", "hand", "statement"}, {"decision"}),
    "RulingCreate": ({"status", "reason"}, {"remedy"}),
    "Dispute": (set(), {"tournament_id", "decision", "ruling"}),
    "DisputeShown": ({"dispute"}, {"evidence", "sealed_ruling"}),
}


def _nullable(described: Json) -> bool:
    """``nullable``, or (a nested schema) one of its ``anyOf`` alternatives nullable."""
    return bool(described.get("nullable")) or any(
        alternative.get("nullable") for alternative in described.get("anyOf", [])
    )


@pytest.mark.parametrize(("name", "flags"), ANSWERS.items(), ids=ANSWERS)
def test_the_document_says_which_fields_are_always_there_and_which_may_be_null(
    document: Json, name: str, flags: tuple[set[str], set[str]]
) -> None:
    schema = document["components"]["schemas"][name]
    required, nullable = flags
    assert set(schema.get("required", [])) == required
    assert {
        prop for prop, described in schema["properties"].items() if _nullable(described)
    } == nullable


def test_what_a_tournament_a_game_and_a_page_get_when_left_out(arena: Arena) -> None:
    defaults = {
        "format": {"kind": "round_robin", "duplicate": True, "matches_per_table": 1, "hands": None},
        "time_control": {"decision_ms": 1000, "bank_ms": 30_000, "fault_limit": 5},
        "rated": True,
    }
    left_out = arena.tournament()
    assert left_out.status_code == 201 and {k: left_out.json[k] for k in defaults} == defaults
    empty = arena.tournament(format={}, time_control={})
    assert empty.status_code == 201 and {k: empty.json[k] for k in defaults} == defaults
    to_the_end = arena.tournament(format={"hands": None})  # null: to the rules' end
    assert to_the_end.status_code == 201 and to_the_end.json["format"]["hands"] is None
    game = arena.start(opponents=LEFT_OUT)
    assert game.status_code == 201 and game.json["opponents"] == ["house:normal"] * 3
    for path in ("/api/bots", "/api/matches"):
        listed = arena.client.get(path).json
        assert (listed["page"], listed["per_page"]) == (1, 20)


def test_a_ladder_row_and_a_standing_show_their_figures_rounded_as_documented() -> None:
    """What ``/api/ladder`` and ``/api/tournaments/{id}/standings`` show of a stored rating and
    standing: the rank beside the rating, points per hand and placement to 3 decimals, the
    fault rate to 4."""
    seat = SeatFigures(matches=3, placement_sum=7, points=10, hands=3)
    rating = Rating(
        "bot_a", mu=-7.123456, sigma=17.654321, matches=3, points=10, hands=3, faults=1,
        decisions=7, version="1.2", seats=(seat, NO_SEATS[1], NO_SEATS[2], NO_SEATS[3]),
        first_match="then", last_match="now",
    )  # fmt: skip
    no_seat = {"matches": 0, "average_placement": 0.0, "points_per_hand": 0.0}
    assert LadderRowSchema().dump(Row(5, "Alpha", rating)) == {
        "rank": 5,
        "bot_id": "bot_a",
        "name": "Alpha",
        "version": "1.2",
        "mu": -7.123456,
        "sigma": 17.654321,
        "rating": pytest.approx(-7.123456 - 3 * 17.654321),
        "provisional": True,
        "matches": 3,
        "points_per_hand": 3.333,
        "fault_rate": 0.1429,
        "seats": [
            {"seat": 0, "matches": 3, "average_placement": 2.333, "points_per_hand": 3.333},
            *({"seat": n, **no_seat} for n in (1, 2, 3)),
        ],
        "first_match": "then",
        "last_match": "now",
        "amended": 0,
    }
    standing = Standing(
        "bot_b",
        matches=3,
        wins=1,
        placement_sum=7,
        points=10,
        hands=3,
        faults=2,
        forfeits=1,
        rank=2,
    )
    assert StandingSchema().dump(standing) == {
        "rank": 2,
        "bot_id": "bot_b",
        "matches": 3,
        "wins": 1,
        "average_placement": 2.333,
        "points_per_hand": 3.333,
        "faults": 2,
        "forfeits": 1,
        "amended": 0,
    }
