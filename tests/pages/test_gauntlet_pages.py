"""The gauntlet pages in the browser: the list, and a gauntlet's verdict, chart and deals, from
deals written to the store (tests/workers/test_gauntlets.py plays real ones)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from arena import gauntlets
from arena.context import Arena as ArenaContext
from arena.records import OPERATOR, Format, Gauntlet, GauntletDeal, TournamentSpec
from bot_sdk.sequential import Verdict
from referee import Rules
from replays.log import TimeControl
from tests.pages.conftest import HOSTILE_NAME, Arena, screenshot
from tests.pages.pages_support import utc_iso

DEALS = [(-40, -120, 16), (-20, -150, 16), (-60, -90, 16), (0, -130, 16), (-10, -110, 16)]
"""(candidate's points, baseline's points, hands) of each counted deal."""


@pytest.fixture(scope="module")
def gauntlet_id(arena: Arena) -> str:
    context = ArenaContext.from_config(arena.config)
    request = gauntlets.Request(
        "house:normal", "house:easy", ("house:hard", "house:hard"), delta=5.0, max_deals=50
    )
    made = gauntlets.create(context, request, started_by=OPERATOR, manages=[])
    context.queue.empty()  # no worker plays it here: its deals are written below
    deals = [GauntletDeal(n, c, b, h) for n, (c, b, h) in enumerate(DEALS[:2], start=1)]
    deals.append(GauntletDeal(3, void="a rotation failed: killed"))
    deals += [GauntletDeal(n, c, b, h) for n, (c, b, h) in enumerate(DEALS[2:], start=4)]
    for deal in deals:
        arena.store.note_gauntlet_deal(made.id, deal)
    arena.store.end_gauntlet(made.id, Verdict.BETTER.value)
    return made.id


def test_the_gauntlet_page_shows_the_verdict_the_chart_and_each_deal(
    page: Page, arena: Arena, gauntlet_id: str
) -> None:
    shown = gauntlets.progress(ArenaContext.from_config(arena.config), gauntlet_id)
    page.goto(f"{arena.url}/gauntlets")
    row = page.locator(f'#gauntlets tr[data-id="{gauntlet_id}"]')
    expect(row.locator(".verdict")).to_have_text("better")
    expect(row.locator("td").nth(3)).to_have_text("5")  # deals counted
    row.locator(".verdict").click()
    expect(page.locator("h1")).to_contain_text("Is house:normal better than house:easy?")
    expect(page.locator("#verdict")).to_have_text("Better")
    state = shown.state
    estimate = page.locator("#estimate")
    expect(estimate).to_contain_text(f"After 5 deals: Δ = {state.mean:+.2f} points per hand")
    expect(estimate).to_contain_text(f"95% interval {state.low:+.2f} to {state.high:+.2f}")
    # the chart: a point per counted deal, the line through them, the band, and 0 and ±δ
    dots = page.locator("svg.chart circle.dot")
    expect(dots).to_have_count(5)
    titles = dots.evaluate_all("dots => dots.map(d => d.textContent)")
    assert (
        titles[-1]
        == f"after deal 6: Δ {state.mean:+.2f}, interval {state.low:+.2f} to {state.high:+.2f}"
    )
    assert titles[0].startswith(f"after deal 1: Δ {(-40 + 120) / 16:+.2f}")
    expect(page.locator("svg.chart text.tick", has_text="−δ")).to_have_count(1)
    # the deals, the void one with its reason, each with links to its four rotations
    rows = page.locator("#deals tbody tr")
    expect(rows).to_have_count(6)
    expect(rows.nth(0).locator("td").nth(4)).to_have_text(f"{(-40 + 120) / 16:+.2f}")
    expect(rows.nth(2)).to_contain_text("void, not counted: a rotation failed: killed")
    links = rows.nth(3).locator("a").evaluate_all("links => links.map(a => a.pathname)")
    assert links == [f"/matches/{gauntlets.match_id(gauntlet_id, 4, r)}" for r in range(4)]
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"]  # type: ignore[index]
    screenshot(page, "gauntlet")


def test_the_gauntlet_page_names_who_started_it(page: Page, arena: Arena, gauntlet_id: str) -> None:
    started = arena.store.get_tournament(gauntlet_id)
    assert started is not None
    page.goto(f"{arena.url}/gauntlets/{gauntlet_id}")
    expect(page.locator("#starter")).to_have_text("the operator")
    when = page.locator(".lead time")
    expect(when).to_have_attribute("datetime", utc_iso(started.created_at))
    # an owner's gauntlet: its bot by name, linked, the name shown as text (it is markup)
    owner = arena.ladder.hostile
    question = Gauntlet(
        "house:normal", "house:easy", ("house:hard", "house:hard"), 5.0, 0.05, 0.05, 10, owner
    )
    spec = TournamentSpec(
        "Gauntlet", ("house:normal", "house:easy", "house:hard", "house:hard"),
        Format(duplicate=True, matches_per_table=1), Rules(), TimeControl(1000, 30000, 5),
        rated=False,
    )  # fmt: skip
    by_owner = arena.store.create_tournament(spec, gauntlet=question)
    page.goto(f"{arena.url}/gauntlets/{by_owner}")
    starter = page.locator("#starter a")
    expect(starter).to_have_text(HOSTILE_NAME)
    expect(starter).to_have_attribute("href", f"/bots/{owner}")
    expect(page.locator("#starter")).not_to_contain_text(owner)
    assert page.evaluate("window.pwned") is None


def test_a_bots_page_lists_its_gauntlets(page: Page, arena: Arena, gauntlet_id: str) -> None:
    page.goto(f"{arena.url}/bots/house:easy")  # the baseline
    row = page.locator(f'#gauntlet-list tr[data-id="{gauntlet_id}"]')
    expect(row.locator("td").nth(2)).to_have_text("better")
    row.locator("td").nth(2).locator("a").click()
    expect(page).to_have_url(f"{arena.url}/gauntlets/{gauntlet_id}")
    page.goto(f"{arena.url}/bots/{arena.bots[0]}")  # in none
    expect(page.locator("#gauntlets")).to_contain_text("No gauntlet yet")


def test_an_unknown_gauntlet_gets_the_friendly_404(page: Page, arena: Arena) -> None:
    answer = page.goto(f"{arena.url}/gauntlets/t_nope")
    assert answer is not None and answer.status == 404
    expect(page.locator("main")).to_contain_text("There is no gauntlet t_nope.")
    expect(page.locator("nav a", has_text="Gauntlets")).to_have_count(1)
