"""Fixtures of the page tests: a real redis-server, the service served on loopback with real
data (bots, a tournament in progress, sealed match logs), and Debian's Chromium via Playwright."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet
from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Page,
    Playwright,
    Route,
    sync_playwright,
)

from arena.records import (
    Format,
    HeadToHead,
    Rating,
    SeatFigures,
    TournamentSpec,
    TournamentStatus,
)
from arena.redis_server import start_redis
from arena.store import Store
from referee import Rules
from replays.integrity import generate_key, private_key_pem
from replays.log import MatchLog, TimeControl
from service import Config, create_app
from service.pages.views import TABLES_PER_PAGE
from tests.pages.pages_support import faulty_log, serving, write_head_to_head, write_version
from tests.service.service_support import sealed_log

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-output" / "screenshots"
HOSTILE_NAME = "<script>window.pwned = 1</script>"
HOSTILE_VERSION = '<img src=x onerror="window.pwned = 2">'
VETERAN_V1 = [(n * 1.5, 40.0 - n * 2.5) for n in range(10)]
"""Version 1.0 of the veteran, in points per hand: ten matches, provisional throughout (σ
from 40 to 17.5)."""
VETERAN_V2 = [(20.0, 20.0), (21.0, 14.0), (21.5, 11.0), (22.0, 9.8), (22.4, 9.2), (23.0, 8.8)]
"""Version 2.0: six matches, no longer provisional from the fourth (σ 9.8) on."""
OPPONENTS = 25
"""The veteran's head-to-head opponents: more than one page of them."""


@dataclass(frozen=True)
class Ladder:
    """What the tests wrote for the ladder's pages, besides the recorded matches."""

    veteran: str
    """A registered bot in the ladder (3 at once), with two rated versions, 1.0 (provisional)
    and 2.0 (the latest, σ ≤ 10), and head-to-head figures against ``OPPONENTS`` opponents."""
    hostile: str
    """A registered bot whose name and version are markup."""
    table_id: str
    """A running table of the ladder (veteran, hostile, house:normal, house:easy): its four
    rotations queued, none played yet. The newest of the ladder's tables: a page of older ones,
    closed, comes before it."""
    round_at: str
    """When the matchmaker's last round ran."""


@dataclass(frozen=True)
class Arena:
    """The served arena and what the tests stored in it."""

    url: str
    bots: list[str]
    """Alpha, beta (registered) and two house bots: every match's four seats."""
    tournament_id: str
    tournament_matches: list[str]
    rich: MatchLog
    """A three-hand match with faults, outside the tournament."""
    embargoed: MatchLog
    """A one-hand unrated match with faults, in a second tournament ("summer cup"), whose
    replay is embargoed: the other match of its deal is still to play."""
    store: Store
    config: Config
    ladder: Ladder
    """The ladder's data written straight to the store (house Normal's rating too)."""


@pytest.fixture(scope="session")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    redis = start_redis(tmp_path_factory.mktemp("pages-redis"), fsync="everysec")
    key_path = tmp_path_factory.mktemp("pages-keys") / "replay.pem"
    key_path.write_bytes(private_key_pem(generate_key()))
    config = Config(
        redis_url=redis.url,
        secret_key=Fernet.generate_key().decode(),
        replay_key_path=key_path,
        archive=str(tmp_path_factory.mktemp("pages-archive")),
        play_limit="1000 per minute",  # the page tests start many games from one address
        read_limit="1000 per minute",  # and open replays and ask hints from it
    )
    store = Store.from_config(config)
    bots = [_bot(store, "alpha"), _bot(store, "beta"), "house:easy", "house:hard"]
    spec = TournamentSpec(
        "spring cup", tuple(bots), Format(), Rules(fixed_hands=1), TimeControl(1000, 30000, 5)
    )
    tid = store.create_tournament(spec)
    store.set_tournament_total(tid, 4)
    store.move_tournament(tid, TournamentStatus.RUNNING, allowed_from=[TournamentStatus.CREATED])
    done = [f"m_t{n}" for n in range(2)]
    for seed, match_id in enumerate(done, start=1):
        seats = bots[seed:] + bots[:seed]
        store.record_result(match_id, sealed_log(config, match_id, seats, tournament_id=tid))
    store.create_match("m_t2", seats=bots, tournament_id=tid, table_id="table-1")
    store.mark_match_running("m_t2")
    store.create_match("m_t3", seats=bots, tournament_id=tid, table_id="table-1")
    rich = faulty_log(config, "m_rich", bots, hands=3)
    store.record_result("m_rich", rich)
    embargoed = _embargoed_match(config, store, ["house:normal", *bots[1:]])
    ladder = _ladder(store)
    with serving(create_app(config, store=store)) as url:
        yield Arena(
            url,
            bots,
            tid,
            done,
            MatchLog.from_json(rich),
            MatchLog.from_json(embargoed),
            store,
            config,
            ladder,
        )
    redis.stop()


def _embargoed_match(config: Config, store: Store, seats: list[str]) -> dict[str, Any]:
    """Record the first of two matches sharing a deal label in a running tournament."""
    spec = TournamentSpec(
        "summer cup", tuple(seats), Format(), Rules(fixed_hands=1), TimeControl(1000, 30000, 5)
    )
    tid = store.create_tournament(spec)
    store.set_tournament_total(tid, 2)
    store.move_tournament(tid, TournamentStatus.RUNNING, allowed_from=[TournamentStatus.CREATED])
    for match_id in ("m_s1", "m_s2"):
        store.create_match(match_id, seats=seats, tournament_id=tid, deal_label="t1:d1")
    log = faulty_log(config, "m_s1", seats, hands=1, tournament_id=tid, rated=False)
    store.record_result("m_s1", log)
    return log


def _bot(store: Store, name: str, **options: Any) -> str:
    bot, _ = store.create_bot(
        name=name,
        endpoint="http://127.0.0.1:9/bot",
        description=f"{name}, a test bot",
        contact="me@example.com",
        version=options.pop("version", "1.0"),
        secret="s",
        **options,
    )
    return bot.id


Seats = tuple[SeatFigures, SeatFigures, SeatFigures, SeatFigures]


def _seats(matches: int, placement_sum: int, points: int) -> Seats:
    """Four seats' figures of ``matches`` matches of 4 hands each, seat 0's the given ones and
    each later seat's a little worse."""
    a, b, c, d = (
        SeatFigures(matches, placement_sum + seat, points - 10 * seat, 4 * matches)
        for seat in range(4)
    )
    return a, b, c, d


def _ladder(store: Store) -> Ladder:
    """The veteran's two versions, the hostile bot, house Normal's rating (μ 0: every shown μ
    is then the stored one), a ladder
    table and a matchmaking round, written straight to the store."""
    veteran = _bot(store, "veteran", version="2.0", ladder=True, max_concurrent=3)
    hostile = _bot(store, HOSTILE_NAME, version=HOSTILE_VERSION, ladder=True)
    v1 = Rating(
        veteran, *VETERAN_V1[-1], matches=40, points=-400, hands=160, faults=2, decisions=4000,
        version="1.0", seats=_seats(10, 25, -100),
        first_match="2024-01-01T10:00:00+00:00", last_match="2024-01-10T10:00:00+00:00",
    )  # fmt: skip
    v2 = Rating(
        veteran, *VETERAN_V2[-1], matches=24, points=-120, hands=96, faults=0, decisions=2400,
        version="2.0", seats=_seats(6, 9, -30),
        first_match="2024-02-01T10:00:00+00:00", last_match="2024-02-20T10:00:00+00:00",
    )  # fmt: skip
    write_version(store, v1, VETERAN_V1)
    write_version(store, v2, VETERAN_V2)
    for n in range(OPPONENTS):  # opponent n: 30 - n matches, so the order is n's
        matches = 30 - n
        figures = HeadToHead(f"bot_opponent{n:02}", matches, matches - 1, 1, 10 - n, 4 * matches)
        write_head_to_head(store, veteran, figures.opponent, figures)
    hostile_rating = Rating(hostile, -5.0, 30.0, matches=2, hands=8, version=HOSTILE_VERSION)
    write_version(store, hostile_rating, [(-2.0, 35.0), (-5.0, 30.0)])
    write_version(store, Rating("house:normal", 0.0, 3.0, version="1"), [(0.0, 3.0)])
    seats = (veteran, hostile, "house:normal", "house:easy")
    spec = TournamentSpec(
        "Ladder table", seats, Format(hands=4), Rules(), TimeControl(1000, 30000, 5)
    )
    for _ in range(TABLES_PER_PAGE):  # older tables, closed: the tables page has two pages
        store.close_ladder_table(store.create_tournament(spec, ladder=True))
    table_id = store.create_tournament(spec, ladder=True)
    store.set_tournament_total(table_id, 4)
    store.move_tournament(
        table_id, TournamentStatus.RUNNING, allowed_from=[TournamentStatus.CREATED]
    )
    for rotation in range(4):
        store.create_match(
            f"m_l{rotation}",
            seats=seats[rotation:] + seats[:rotation],
            tournament_id=table_id,
            table_id="table-1",
        )
    store.note_ladder_round([table_id])
    round_at = store.last_ladder_round()["at"]
    return Ladder(veteran, hostile, table_id, round_at)


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as running:
        yield running


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium package (scripts/test does)")
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield browser
    browser.close()


def _local_only(page: Page, base: str) -> list[str]:
    """Abort, and collect, every request that is not to the test server."""
    elsewhere: list[str] = []

    def route(route: Route) -> None:
        url = route.request.url
        if url == base or url.startswith(base + "/"):
            route.continue_()
        else:
            elsewhere.append(url)
            route.abort()

    page.route("**/*", route)
    return elsewhere


@pytest.fixture(params=[(1280, 900), (390, 844)], ids=["desktop", "phone"])
def page(request: pytest.FixtureRequest, browser: Browser, arena: Arena) -> Iterator[Page]:
    """A page in a fresh context, desktop or phone sized; no request may leave the server."""
    width, height = request.param
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    violations = csp_violations(page)
    elsewhere = _local_only(page, arena.url)
    yield page
    context.close()
    assert elsewhere == [], f"requests left the test server: {elsewhere}"
    assert errors == [], f"script errors: {errors}"
    assert violations == [], f"Content-Security-Policy violations: {violations}"


def csp_violations(page: Page) -> list[str]:
    """Collects what Chromium reports refusing under the page's Content-Security-Policy."""
    found: list[str] = []

    def console(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text:
            found.append(message.text)

    page.on("console", console)
    return found


def screenshot(page: Page, name: str) -> None:
    """Save a full-page screenshot under test-output/screenshots/ (one per page and size)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    size = "phone" if page.viewport_size and page.viewport_size["width"] < 600 else "desktop"
    page.screenshot(path=str(SCREENSHOTS / f"{name}-{size}.png"), full_page=True)
