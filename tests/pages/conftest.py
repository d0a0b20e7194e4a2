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

from arena.records import Format, TournamentSpec, TournamentStatus
from arena.redis_server import start_redis
from arena.store import Store
from referee import Rules
from replays.integrity import generate_key, private_key_pem
from replays.log import MatchLog, TimeControl
from service import Config, create_app
from tests.pages.pages_support import faulty_log, serving
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


@pytest.fixture(scope="session")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    redis = start_redis(tmp_path_factory.mktemp("pages-redis"), fsync="everysec")
    key_path = tmp_path_factory.mktemp("pages-keys") / "replay.pem"
    key_path.write_bytes(private_key_pem(generate_key()))
    config = Config(
        redis_url=redis.url,
        secret_key=Fernet.generate_key().decode(),
        replay_key_path=key_path,
        play_limit="1000 per minute",  # the page tests start many games from one address
    )
    store = Store.from_url(config.redis_url, config.secret_key)
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
    with serving(create_app(config, store=store)) as url:
        yield Arena(
            url, bots, tid, done, MatchLog.from_json(rich), MatchLog.from_json(embargoed), store
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


def _bot(store: Store, name: str) -> str:
    bot, _ = store.create_bot(
        name=name,
        endpoint="http://127.0.0.1:9/bot",
        description=f"{name}, a test bot",
        contact="me@example.com",
        version="1.0",
        secret="s",
    )
    return bot.id


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
