"""The pages in real headless Chromium against the served arena, with real data."""

from __future__ import annotations

from playwright.sync_api import Browser, Page, expect

from bot_sdk.protocol import Status
from referee import card_name
from tests.pages.conftest import Arena, csp_violations, screenshot

SEAT_NAMES = ["alpha", "beta", "house:easy", "house:hard"]
"""Who sits where in m_rich: the registered bots by name, the house bots by id."""


def column(page: Page, table: str, index: int) -> list[str]:
    return page.locator(f"#{table} tbody tr td:nth-child({index})").all_inner_texts()


def test_the_ladder_lists_every_rated_bot_and_sorts(page: Page, arena: Arena) -> None:
    page.goto(arena.url + "/")
    expect(page.locator("h1")).to_have_text("Ladder")
    expect(page.locator("#ladder tbody tr")).to_have_count(4)
    names = column(page, "ladder", 2)
    assert sorted(names) == ["alpha", "beta", "house:easy", "house:hard"]
    ratings = [float(r) for r in column(page, "ladder", 3)]
    assert ratings == sorted(ratings, reverse=True)
    page.get_by_role("button", name="Bot").click()
    assert column(page, "ladder", 2) == sorted(names)
    page.get_by_role("button", name="Rating").click()
    assert [float(r) for r in column(page, "ladder", 3)] == sorted(ratings)
    page.get_by_role("button", name="Rating").click()
    assert [float(r) for r in column(page, "ladder", 3)] == sorted(ratings, reverse=True)
    screenshot(page, "ladder")
    page.get_by_role("link", name="alpha").first.click()
    expect(page.locator("h1")).to_have_text("alpha")


def test_the_tournament_page_shows_progress_standings_and_tables(page: Page, arena: Arena) -> None:
    page.goto(f"{arena.url}/tournaments/{arena.tournament_id}")
    expect(page.locator("h1")).to_have_text("spring cup")
    expect(page.locator("#progress-text")).to_have_text("2 / 4 matches done · 1 running · 1 queued")
    bar = page.get_by_role("progressbar")
    expect(bar).to_have_attribute("value", "2")
    expect(bar).to_have_attribute("max", "4")
    expect(page.locator("#standings tbody tr")).to_have_count(4)
    for match_id in [*arena.tournament_matches, "m_t2", "m_t3"]:
        expect(page.get_by_role("link", name=match_id)).to_be_visible()
    screenshot(page, "tournament")
    page.get_by_role("link", name=arena.tournament_matches[0]).click()
    expect(page.locator("h1")).to_have_text(f"Match {arena.tournament_matches[0]}")


def test_the_bot_page_shows_its_record_matches_and_rating_chart(page: Page, arena: Arena) -> None:
    bot_id = arena.bots[0]
    page.goto(f"{arena.url}/bots/{bot_id}")
    expect(page.locator("h1")).to_have_text("alpha")
    history = arena.store.rating_history(bot_id)
    assert len(history) == 3
    expect(page.locator("svg.chart")).to_be_visible()
    expect(page.locator("svg.chart circle")).to_have_count(3)
    expect(page.locator("#matches tbody tr")).to_have_count(5)  # 3 played, 2 to come
    expect(page.locator("[aria-labelledby=record-h] .facts")).to_contain_text("Rated matches")
    expect(page.locator("#decision-counts")).to_contain_text("Fallbacks by the bot")
    screenshot(page, "bot")


def test_unknown_ids_get_the_friendly_404_page(page: Page, arena: Arena) -> None:
    for path in ["/matches/m_nope", "/bots/bot_nope", "/tournaments/t_nope"]:
        response = page.goto(arena.url + path)
        assert response is not None and response.status == 404
        assert response.headers["content-type"].startswith("text/html")
        expect(page.locator("h1")).to_have_text("Not found")
    screenshot(page, "not-found")
    response = page.goto(arena.url + "/api/matches/m_nope")
    assert response is not None and response.json()["error"] == "not_found"


def shown_trick(page: Page) -> list[str]:
    return page.locator("#trick .play .card").evaluate_all(
        "cards => cards.map(c => c.dataset.card)"
    )


def expected_trick(arena: Arena, hand: int, trick: int) -> list[str]:
    return [card_name(c) for c in arena.rich.hands[hand - 1].tricks[trick - 1].cards]


def winner_text(arena: Arena, hand: int, trick: int) -> str:
    seat = arena.rich.hands[hand - 1].tricks[trick - 1].winner
    return f"Won by seat {seat} ({SEAT_NAMES[seat]})"


def test_the_replay_viewer_steps_with_buttons_and_keys(page: Page, arena: Arena) -> None:
    page.goto(f"{arena.url}/matches/m_rich")
    position = page.locator("#position")
    expect(position).to_have_text("Hand 1 of 3 · before the first trick")
    expect(page.locator("#trick")).to_have_attribute("aria-live", "polite")
    page.get_by_role("button", name="Trick ▶").click()
    expect(position).to_have_text("Hand 1 of 3 · trick 1 of 13")
    assert shown_trick(page) == expected_trick(arena, 1, 1)
    expect(page.locator("#winner")).to_have_text(winner_text(arena, 1, 1))
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(position).to_have_text("Hand 1 of 3 · trick 3 of 13")
    assert shown_trick(page) == expected_trick(arena, 1, 3)
    page.get_by_role("button", name="◀ Trick").click()
    expect(position).to_have_text("Hand 1 of 3 · trick 2 of 13")
    assert shown_trick(page) == expected_trick(arena, 1, 2)
    page.keyboard.press("ArrowDown")
    expect(position).to_have_text("Hand 2 of 3 · before the first trick")
    page.keyboard.press("PageDown")
    expect(position).to_have_text("Hand 3 of 3 · before the first trick")
    page.keyboard.press("ArrowUp")
    expect(position).to_have_text("Hand 2 of 3 · before the first trick")
    page.keyboard.press("ArrowLeft")
    expect(position).to_have_text("Hand 1 of 3 · trick 13 of 13")
    assert "hand=1" in page.url and "trick=13" in page.url
    screenshot(page, "replay")


def test_the_score_panel_is_the_logs_hand_result(page: Page, arena: Arena) -> None:
    for hand in arena.rich.hands:
        page.goto(f"{arena.url}/matches/m_rich?hand={hand.hand_number}&trick=13")
        before = [0, 0, 0, 0] if hand.hand_number == 1 else None
        for seat, score in enumerate(hand.result.seats):
            expected = {
                "hearts": score.hearts,
                "pig": score.pig,
                "goat": score.goat,
                "transformer": score.transformer_bonus,
                "multiplier": score.multiplier,
                "qd": score.qd_bonus,
                "score": score.score,
                "total": hand.result.totals[seat],
            }
            if before is not None:
                expected["before"] = before[seat]
            for field, value in expected.items():
                cell = page.locator(f'#score-table td[data-seat="{seat}"][data-field="{field}"]')
                expect(cell).to_have_text(str(value))


def test_faults_show_where_they_happened(page: Page, arena: Arena) -> None:
    faults = [
        (hand.hand_number, index, record)
        for hand in arena.rich.hands
        for index, record in enumerate(hand.decisions)
        if record.status is not Status.OK
    ]
    assert {record.status for _, _, record in faults} == {Status.ILLEGAL, Status.ERROR}
    for hand_number, index, record in faults:
        hand = arena.rich.hands[hand_number - 1]
        plays_before = sum(1 for d in hand.decisions[:index] if d.kind.value == "play")
        trick = plays_before // 4 + 1
        page.goto(f"{arena.url}/matches/m_rich?hand={hand_number}&trick={trick}")
        fault = page.locator(".fault")
        expect(fault).to_have_count(1)
        expect(fault).to_contain_text(f"seat 1 ({SEAT_NAMES[1]}): {record.status}")
        expect(fault).to_contain_text(f"after {record.latency_ms} ms")
        if record.answer is not None:
            expect(fault.locator("code")).to_have_text(record.answer)
        page.get_by_role("button", name="Trick ▶").click()
        expect(page.locator(".fault")).to_have_count(0)


def test_one_seats_view_hides_the_other_hands(page: Page, arena: Arena) -> None:
    page.goto(f"{arena.url}/matches/m_rich?hand=1&trick=4")
    expect(page.locator(".seat .hidden-hand")).to_have_count(0)
    page.get_by_label("View").select_option("2")
    expect(page.locator(".seat .hidden-hand")).to_have_count(3)
    expect(page.locator('.seat[data-seat="2"] .hand .card')).to_have_count(9)
    for seat in (0, 1, 3):
        expect(page.locator(f'.seat[data-seat="{seat}"] .hand .card')).to_have_count(0)
    assert "seat=2" in page.url
    screenshot(page, "replay-seat-view")
    page.get_by_label("View").select_option("all")
    expect(page.locator(".seat .hand .card")).to_have_count(36)


def test_a_deep_link_opens_the_hand_and_trick(page: Page, arena: Arena) -> None:
    page.goto(f"{arena.url}/matches/m_rich?hand=2&trick=5")
    expect(page.locator("#position")).to_have_text("Hand 2 of 3 · trick 5 of 13")
    assert shown_trick(page) == expected_trick(arena, 2, 5)
    expect(page.locator("#winner")).to_have_text(winner_text(arena, 2, 5))


def test_pages_fit_a_phone_without_sideways_scrolling(page: Page, arena: Arena) -> None:
    for path in ["/", f"/tournaments/{arena.tournament_id}", f"/bots/{arena.bots[0]}"]:
        page.goto(arena.url + path)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= page.viewport_size["width"]  # type: ignore[index]
    page.goto(f"{arena.url}/matches/m_rich?hand=1&trick=1")
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]  # type: ignore[index]


def test_the_pages_policy_refuses_inline_style_and_script(browser: Browser, arena: Arena) -> None:
    """The Content-Security-Policy is really enforced (and the page fixture really sees its
    violations): an inline style and an inline script put into a served page are refused."""
    context = browser.new_context()
    page = context.new_page()
    violations = csp_violations(page)
    page.goto(f"{arena.url}/tournaments/{arena.tournament_id}")
    page.evaluate(
        """() => {
            document.body.setAttribute("style", "background: red");
            const script = document.createElement("script");
            script.textContent = "window.ran = true";
            document.body.append(script);
        }"""
    )
    ran = page.evaluate("() => window.ran === true")
    context.close()
    assert not ran
    assert any("style" in v for v in violations) and any("script" in v for v in violations), (
        violations
    )
