"""The tournament list and a bot's fault list, in Chromium, with recorded matches that have
faults (one of them embargoed), and the replay viewer opened at a listed fault."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from replays.log import MatchLog
from tests.pages.conftest import Arena, screenshot


def faults_of_seat(log: MatchLog, seat: int) -> list[tuple[int, int, str, str]]:
    """(hand, decision index, status, message) of the seat's faults, read from the log itself."""
    return [
        (hand.hand_number, index, record.status.value, record.fault or "")
        for hand in log.hands
        for index, record in enumerate(hand.decisions)
        if record.seat == seat and record.status.value != "ok"
    ]


def test_the_tournament_list_shows_every_tournament_newest_first(page: Page, arena: Arena) -> None:
    page.goto(arena.url + "/")
    page.get_by_role("navigation", name="Site").get_by_role("link", name="Tournaments").click()
    expect(page.locator("h1")).to_have_text("Tournaments")
    rows = page.locator("#tournaments tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("summer cup")
    expect(rows.nth(0)).to_contain_text("running")
    expect(rows.nth(0).locator(".progress-text")).to_have_text("1 / 2")
    expect(rows.nth(1)).to_contain_text("spring cup")
    expect(rows.nth(1).locator(".progress-text")).to_have_text("2 / 4")
    expect(rows.nth(1).get_by_role("progressbar")).to_have_attribute("value", "2")
    screenshot(page, "tournaments")
    rows.nth(1).get_by_role("link", name="spring cup").click()
    expect(page).to_have_url(f"{arena.url}/tournaments/{arena.tournament_id}")


def test_a_bots_faults_are_listed_newest_first_and_open_the_replay_there(
    page: Page, arena: Arena
) -> None:
    beta = arena.bots[1]  # seat 1 in both matches, the faulty one
    rich = faults_of_seat(arena.rich, 1)
    hidden = faults_of_seat(arena.embargoed, 1)
    assert len(rich) >= 2 and len(hidden) >= 1
    page.goto(f"{arena.url}/bots/{beta}")
    rows = page.locator("#fault-list tbody tr")
    expect(rows).to_have_count(len(rich) + len(hidden))
    screenshot(page, "bot-faults")

    # the embargoed match (recorded last) comes first: listed, but no cards, no replay link
    for n in range(len(hidden)):
        row = rows.nth(n)
        expect(row).to_have_class("embargoed")
        expect(row).to_contain_text("m_s1")
        expect(row.locator("a.open-fault")).to_have_count(0)
        for _, _, _, message in hidden:
            assert message and message not in row.inner_text()

    # then m_rich's, newest first, each with the log's status and message
    shown = rows.locator("a.open-fault")
    expect(shown).to_have_count(len(rich))
    for n, (hand, decision, status, message) in enumerate(reversed(rich)):
        row = rows.nth(len(hidden) + n)
        expect(row.locator("td").nth(1)).to_have_text(str(hand))
        expect(row.locator("td").nth(2)).to_contain_text(f"#{decision}")
        expect(row.locator(".status")).to_have_text(status)
        expect(row).to_contain_text(message)

    # the oldest fault opens the viewer at its hand and trick, the fault marked
    hand, decision, status, _ = rich[0]
    shown.last.click()
    expect(page).to_have_url(re.compile(rf"/matches/m_rich\?hand={hand}&decision={decision}"))
    linked = page.locator(".fault.linked")
    expect(linked).to_have_count(1)
    expect(linked).to_have_attribute("data-decision", str(decision))
    expect(linked).to_contain_text(f"seat 1 (beta): {status}")
    expect(page.locator("#position")).to_contain_text(f"Hand {hand} of 3")
    screenshot(page, "replay-linked-fault")
    page.get_by_role("button", name="Trick ▶").click()  # stepping away forgets the decision
    expect(page.locator(".fault.linked")).to_have_count(0)
    assert "decision=" not in page.url


def test_the_embargoed_match_opens_no_replay(page: Page, arena: Arena) -> None:
    hand, decision, _, _ = faults_of_seat(arena.embargoed, 1)[0]
    page.goto(f"{arena.url}/matches/m_s1?hand={hand}&decision={decision}")
    expect(page.locator("#embargo")).to_be_visible()
    expect(page.locator("#viewer")).to_have_count(0)
    expect(page.locator("#replay-data")).to_have_count(0)


def test_a_bot_without_faults_says_so(page: Page, arena: Arena) -> None:
    page.goto(f"{arena.url}/bots/{arena.bots[0]}")
    expect(page.locator("#faults")).to_contain_text("No faults or fallbacks recorded.")
