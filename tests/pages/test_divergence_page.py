"""The divergence page in the browser: reached from the bot's costliest divergences and from
the match page, it lines the plays up, marks the divergence, and shows only what the seat could
see there: no card another seat held unseen is anywhere in the page."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from arena import divergences
from tests.pages.conftest import Arena, screenshot
from tests.replays.divergence_support import Deal, concealed

SUITS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


@pytest.fixture(scope="module")
def deal(arena: Arena) -> Iterator[Deal]:
    played = Deal(arena.config, arena.store, ["div-low", "div-low2", "high", "div-low3"])
    played.record(played.logs)
    yield played


def _shown(name: str) -> str:
    """A card as the page writes it: ``10♠``."""
    return ("10" if name[0] == "T" else name[0]) + SUITS[name[1]]


def _only_the_seats_own(page: Page, deal: Deal, match_id: str) -> None:
    """The page shows the seat's hand, and no card the other seats held unseen there."""
    found = divergences.divergence(deal.arena, match_id, bot=deal.high, seat=None, operator=False)
    point = found.report.divergence
    assert point is not None
    log = next(log for log in deal.logs if log.match_id == match_id)
    hidden = concealed(log, found.report.seat, point.step.hand, point.decision)
    assert len(hidden) > 13  # two other hands at least, still in play
    html, text = page.content(), page.inner_text("body")
    for name in hidden.names():
        assert f'data-card="{name}"' not in html, f"{name}, held unseen by another seat, is shown"
        assert _shown(name) not in text, f"{name}, held unseen by another seat, is shown"
    own = page.locator("#view-hand .card")
    expect(own).to_have_count(len(point.view.hand))
    assert sorted(own.evaluate_all("cards => cards.map(c => c.dataset.card)")) == sorted(
        point.view.hand.names()
    )


def test_the_divergence_page_shows_only_what_the_seat_could_see(
    page: Page, arena: Arena, deal: Deal
) -> None:
    page.goto(f"{arena.url}/bots/{deal.high}")
    rows = page.locator("#divergence-list tbody tr")
    expect(rows).to_have_count(4)
    links = [rows.nth(n).locator("a.open-divergence").get_attribute("href") for n in range(4)]
    for href in links:
        assert href is not None
        page.goto(arena.url + href)
        expect(page.locator("#divergence-row")).to_be_visible()
        expect(page.locator("#points tbody tr")).to_have_count(4)
        expect(page.locator("#points tr.selected")).to_have_count(1)
        match_id = re.sub(r"^/matches/([^/]+)/divergence.*$", r"\1", href)
        _only_the_seats_own(page, deal, match_id)
    screenshot(page, "divergence")


def test_the_match_page_links_each_seat_to_its_divergence(
    page: Page, arena: Arena, deal: Deal
) -> None:
    log = deal.logs[2]
    page.goto(f"{arena.url}/matches/{log.match_id}")
    links = page.locator("#seats a.divergence-link")
    expect(links).to_have_count(4)
    seat = next(s.seat for s in log.seats if s.bot_id == deal.high)
    links.nth(seat).click()
    expect(page.locator("h1")).to_contain_text("high")
    expect(page.locator("#where")).to_contain_text("Hand 1")
    page.goto(f"{arena.url}/matches/{arena.tournament_matches[0]}")  # not a duplicate deal's
    expect(page.locator("#seats a.divergence-link")).to_have_count(0)
