"""The pages in real headless Chromium against the served arena, with real data."""

from __future__ import annotations

import dataclasses
import re
from typing import Any
from urllib.parse import quote_plus

from playwright.sync_api import Browser, Locator, Page, expect

from bot_sdk.protocol import Status
from referee import card_name
from service import create_app
from service.pages.chart import rating_chart
from service.pages.views import HEAD_TO_HEAD_PER_PAGE, TABLES_PER_PAGE
from tests.pages.conftest import (
    HOSTILE_NAME,
    HOSTILE_VERSION,
    OPPONENTS,
    VETERAN_V1,
    VETERAN_V2,
    Arena,
    csp_violations,
    screenshot,
)
from tests.pages.pages_support import utc_iso

SEAT_NAMES = ["alpha", "beta", "house:easy", "house:hard"]
"""Who sits where in m_rich: the registered bots by name, the house bots by id."""
RATED = [*SEAT_NAMES, "veteran", HOSTILE_NAME, "house:normal"]
"""Every participant on the ladder, by the name it shows."""
PROVISIONAL_TITLE = "σ above 10.0 points per hand: too few rated matches to trust the place yet"


def column(page: Page, table: str, index: int, inner: str = "") -> list[str]:
    return page.locator(f"#{table} tbody tr td:nth-child({index}) {inner}").all_inner_texts()


def rated_ids(arena: Arena) -> list[str]:
    return [*arena.bots, arena.ladder.veteran, arena.ladder.hostile, "house:normal"]


def test_the_ladder_lists_every_rated_bot_and_sorts(page: Page, arena: Arena) -> None:
    page.goto(arena.url + "/")
    expect(page.locator("h1")).to_have_text("Ladder")
    expect(page.locator("#ladder tbody tr")).to_have_count(len(RATED))
    names = column(page, "ladder", 2)
    assert sorted(names) == sorted(RATED)
    ratings = [float(r) for r in column(page, "ladder", 4, ".value")]
    assert ratings == sorted(ratings, reverse=True)
    page.get_by_role("button", name="Bot", exact=True).click()
    assert column(page, "ladder", 2) == sorted(names, key=str.lower)
    rating = page.get_by_role("button", name="Rating μ − 3σ")  # then "… ▲" once sorted
    rating.click()
    assert [float(r) for r in column(page, "ladder", 4, ".value")] == sorted(ratings)
    rating.click()
    assert [float(r) for r in column(page, "ladder", 4, ".value")] == sorted(ratings, reverse=True)
    screenshot(page, "ladder")
    page.get_by_role("link", name="alpha").first.click()
    expect(page.locator("h1")).to_have_text("alpha")


def ladder_row(page: Page, bot_id: str) -> Locator:
    return page.locator(f'#ladder tbody tr[data-bot="{bot_id}"]')


def test_the_ladder_shows_each_rows_version_figures_and_provisional_mark(
    page: Page, arena: Arena
) -> None:
    page.goto(arena.url + "/")
    listed: list[dict[str, Any]] = page.request.get(f"{arena.url}/api/ladder").json()["items"]
    assert {row["bot_id"] for row in listed} == set(rated_ids(arena))
    for row in listed:  # the page shows what the API says
        shown = ladder_row(page, row["bot_id"])
        cells = shown.locator("td")
        expect(cells.nth(0)).to_have_text(str(row["rank"]))
        expect(cells.nth(1)).to_have_text(row["name"])
        expect(cells.nth(2)).to_have_text(row["version"] or "(unversioned)")
        expect(cells.nth(3).locator(".value")).to_have_text(f"{row['rating']:.2f}")
        expect(cells.nth(4)).to_have_text(f"{row['mu']:.2f}")
        expect(cells.nth(5)).to_have_text(f"{row['sigma']:.2f}")
        expect(cells.nth(6)).to_have_text(str(row["matches"]))
        expect(cells.nth(7)).to_have_text(f"{row['points_per_hand']:.1f}")
        expect(cells.nth(8)).to_have_text(f"{100 * row['fault_rate']:.2f} %")
        expect(shown.locator(".mark-provisional")).to_have_count(1 if row["provisional"] else 0)

    # a bot of three recorded matches is provisional, said in words with its reason
    mark = ladder_row(page, arena.bots[0]).locator(".mark-provisional")
    expect(mark).to_have_text("provisional")
    expect(mark).to_have_attribute("title", PROVISIONAL_TITLE)
    # the veteran's latest version (σ 8.8) is not, nor house Normal (σ 3, shown at μ 0)
    veteran = ladder_row(page, arena.ladder.veteran)
    expect(veteran.locator("td.version")).to_have_text("2.0")
    expect(veteran.locator("td.rating")).to_have_text(f"{23.0 - 3 * 8.8:.2f}")
    expect(veteran.locator(".mark-provisional")).to_have_count(0)
    expect(ladder_row(page, "house:normal").locator(".mark-provisional")).to_have_count(0)


def test_the_ladder_explains_its_order_and_the_matchmaker(page: Page, arena: Arena) -> None:
    page.goto(arena.url + "/")
    explained = page.locator("#ladder-help")
    expect(explained).to_contain_text("The order is the conservative rating μ − 3σ")
    expect(explained).to_contain_text("Every μ is shown relative to house Normal's")
    expect(explained).to_contain_text("provisional while its σ is above 10.0")
    expect(explained).to_contain_text("which takes a new bot about 62 rated matches here")
    expect(explained.locator(".mark-provisional")).to_have_attribute("title", PROVISIONAL_TITLE)
    matchmaker = page.locator("#matchmaker")
    expect(matchmaker).to_contain_text(
        "The ladder plays itself: a matchmaking round every 60 s seats up to 4 new tables"
    )
    expect(matchmaker).to_contain_text("4 hands a match")
    expect(matchmaker).to_contain_text("1 table is open; last round ")
    expect(matchmaker.locator("time")).to_have_attribute("datetime", utc_iso(arena.ladder.round_at))
    page.get_by_role("link", name="The ladder's tables").click()
    expect(page.locator("h1")).to_have_text("Ladder tables")


def test_the_ladder_says_when_the_matchmaker_is_off(arena: Arena) -> None:
    config = dataclasses.replace(arena.config, ladder_interval_s=0)
    client = create_app(config, store=arena.store).test_client()
    html = client.get("/").get_data(as_text=True)
    assert "The matchmaker is off: only rated tournaments move the ladder." in html
    assert "The ladder plays itself" not in html
    assert "The matchmaker is off." in client.get("/ladder/tables").get_data(as_text=True)


def test_the_ladder_tables_page_lists_the_matchmakers_tables(page: Page, arena: Arena) -> None:
    table_id = arena.ladder.table_id
    page.goto(arena.url + "/ladder/tables")
    rows = page.locator("#ladder-tables tbody tr")
    expect(rows).to_have_count(TABLES_PER_PAGE)
    newest = rows.first  # newest first
    expect(newest).to_have_attribute("data-id", table_id)
    expect(newest.locator(".participants")).to_have_text(
        f"veteran, {HOSTILE_NAME}, house:normal, house:easy"
    )
    expect(newest.locator(".status")).to_have_text("running")
    expect(newest.locator(".progress-text")).to_have_text("0 / 4")
    expect(newest.get_by_role("progressbar")).to_have_attribute("max", "4")
    expect(newest.get_by_role("link", name="veteran")).to_have_attribute(
        "href", f"/bots/{arena.ladder.veteran}"
    )
    screenshot(page, "ladder-tables")
    pager = page.get_by_role("navigation", name="Pages")
    expect(pager).to_contain_text("page 1 of 2")
    pager.get_by_role("link", name="Older →").click()
    expect(page).to_have_url(f"{arena.url}/ladder/tables?page=2")
    expect(rows).to_have_count(1)
    expect(rows.first.locator(".status")).to_have_text("created")
    page.goto(arena.url + "/ladder/tables")
    rows.first.get_by_role("link", name=table_id).click()
    expect(page).to_have_url(f"{arena.url}/tournaments/{table_id}")
    expect(page.locator("h1")).to_have_text("Ladder table")
    expect(page.locator("#progress-text")).to_have_text("0 / 4 matches done · 0 running · 4 queued")


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
    expect(page.locator("svg.chart path.band")).to_have_attribute(
        "d",
        rating_chart(history).band,  # type: ignore[union-attr]
    )
    assert facts(page, "ladder-entry") == {
        "In the ladder": "no",
        "Ladder matches at once, at most": "1",
    }
    screenshot(page, "bot")


def facts(page: Page, list_id: str) -> dict[str, str]:
    """A ``dl.facts``'s terms and what each says."""
    terms = page.locator(f"#{list_id} dt").all_inner_texts()
    return dict(zip(terms, page.locator(f"#{list_id} dd").all_inner_texts(), strict=True))


def versions_rows(page: Page) -> Locator:
    return page.locator("#versions tbody tr")


def seat_rows(page: Page) -> list[list[str]]:
    rows = page.locator("#seats tbody tr")
    return [rows.nth(n).locator("td").all_inner_texts() for n in range(rows.count())]


def test_the_bot_page_shows_every_version_and_charts_the_one_chosen(
    page: Page, arena: Arena
) -> None:
    veteran = arena.ladder.veteran
    page.goto(f"{arena.url}/bots/{veteran}")
    assert facts(page, "ladder-entry") == {
        "In the ladder": "yes",
        "Ladder matches at once, at most": "3",
    }
    assert facts(page, "record")["Rating (μ − 3σ)"] == f"{23.0 - 3 * 8.8:.2f}"
    assert facts(page, "record")["Version played last"] == "2.0"
    expect(page.locator("#record .mark-provisional")).to_have_count(0)

    # every version, latest first, the latest one charted
    stored = arena.store.rating_versions(veteran)
    rows = versions_rows(page)
    expect(rows).to_have_count(2)
    for row, version in zip([rows.nth(0), rows.nth(1)], stored, strict=True):
        cells = row.locator("td")
        expect(cells.nth(0).get_by_role("link")).to_have_text(version.version)
        expect(cells.nth(1).locator(".value")).to_have_text(f"{version.conservative:.2f}")
        expect(cells.nth(2)).to_have_text(f"{version.mu:.2f}")
        expect(cells.nth(3)).to_have_text(f"{version.sigma:.2f}")
        expect(cells.nth(4)).to_have_text(str(version.matches))
        expect(cells.nth(5)).to_have_text(f"{version.points_per_hand:.1f}")
        expect(cells.nth(6)).to_have_text(f"{100 * version.fault_rate:.2f} %")
        first, last = cells.nth(7).locator("time"), cells.nth(8).locator("time")
        expect(first).to_have_attribute("datetime", utc_iso(version.first_match))
        expect(last).to_have_attribute("datetime", utc_iso(version.last_match))
    assert [v.version for v in stored] == ["2.0", "1.0"]
    expect(rows.nth(0).locator(".mark-provisional")).to_have_count(0)
    expect(rows.nth(1).locator(".mark-provisional")).to_have_attribute("title", PROVISIONAL_TITLE)
    expect(rows.nth(0).get_by_role("link")).to_have_attribute("aria-current", "true")
    expect(page.locator("#chart-h")).to_have_text("Rating history of version 2.0")
    chart = page.locator("svg.chart")
    expect(chart.locator("circle")).to_have_count(len(VETERAN_V2))
    expect(chart.locator("circle.provisional")).to_have_count(3)  # σ 20, 14, 11
    expected = rating_chart(arena.store.rating_history(veteran, "2.0"))
    assert expected is not None
    expect(chart.locator("path.band")).to_have_attribute("d", expected.band)
    expect(chart.locator("polyline.line")).to_have_attribute("points", expected.line)
    expect(chart.locator("polyline.lower")).to_have_attribute("points", expected.lower_line)
    high = max(mu + 3 * sigma for mu, sigma in VETERAN_V2)
    low = min(mu - 3 * sigma for mu, sigma in VETERAN_V2)
    expect(chart.locator("#chart-high")).to_have_text(f"{high:.1f}")
    expect(chart.locator("#chart-low")).to_have_text(f"{low:.1f}")
    expect(chart.locator("line.threshold")).to_have_count(1)
    expect(page.locator("#chart-note")).to_contain_text(
        "Provisional until rated match 4, when σ came to 10.0 or below."
    )
    seats = stored[0].seats
    assert seat_rows(page) == [
        [str(n), str(s.matches), f"{s.average_placement:.2f}", f"{s.points_per_hand:.1f}"]
        for n, s in enumerate(seats)
    ]
    screenshot(page, "bot-versions")

    # choosing version 1.0 charts its own history, provisional throughout, and its seats
    rows.nth(1).get_by_role("link", name="1.0").click()
    expect(page).to_have_url(f"{arena.url}/bots/{veteran}?version=1.0#history")
    expect(page.locator("#chart-h")).to_have_text("Rating history of version 1.0")
    expect(rows.nth(1).get_by_role("link")).to_have_attribute("aria-current", "true")
    expect(rows.nth(0).get_by_role("link")).not_to_have_attribute("aria-current", "true")
    expect(chart.locator("circle")).to_have_count(len(VETERAN_V1))
    expect(chart.locator("circle.provisional")).to_have_count(len(VETERAN_V1))
    expect(chart.locator("line.threshold")).to_have_count(0)
    expected = rating_chart(arena.store.rating_history(veteran, "1.0"))
    assert expected is not None
    expect(chart.locator("path.band")).to_have_attribute("d", expected.band)
    expect(page.locator("#chart-note")).to_contain_text("Still provisional after 10 rated matches.")
    assert seat_rows(page)[0][:2] == ["0", str(stored[1].seats[0].matches)]

    # a version never rated is not found
    response = page.goto(f"{arena.url}/bots/{veteran}?version=9.9")
    assert response is not None and response.status == 404
    expect(page.locator("h1")).to_have_text("Not found")
    expect(page.locator("main")).to_contain_text('has no rated version "9.9"')


def test_head_to_head_lists_each_opponent_and_pages(page: Page, arena: Arena) -> None:
    veteran = arena.ladder.veteran
    page.goto(f"{arena.url}/bots/{veteran}?version=1.0")
    rows = page.locator("#head-to-head tbody tr")
    expect(rows).to_have_count(HEAD_TO_HEAD_PER_PAGE)
    expected = arena.store.head_to_head(veteran)
    assert len(expected) == OPPONENTS > HEAD_TO_HEAD_PER_PAGE

    def shown(h: Any) -> list[str]:
        level = h.matches - h.ahead - h.behind
        figures = [h.matches, h.ahead, h.behind, level]
        return [h.opponent, *map(str, figures), f"{h.points_per_hand:+.1f}"]

    def table() -> list[list[str]]:
        return [rows.nth(n).locator("td").all_inner_texts() for n in range(rows.count())]

    assert table() == [shown(h) for h in expected[:HEAD_TO_HEAD_PER_PAGE]]
    assert table()[0] == ["bot_opponent00", "30", "29", "1", "0", "+0.1"]
    pager = page.get_by_role("navigation", name="Head-to-head pages")
    expect(pager).to_contain_text(f"page 1 of {-(-OPPONENTS // HEAD_TO_HEAD_PER_PAGE)}")
    pager.get_by_role("link", name="Fewer →").click()
    # its own page argument, the version chosen kept
    expect(page).to_have_url(re.compile(r"\?version=1\.0&h2h_page=2#head-to-head-section$"))
    expect(rows).to_have_count(OPPONENTS - HEAD_TO_HEAD_PER_PAGE)
    assert table() == [shown(h) for h in expected[HEAD_TO_HEAD_PER_PAGE:]]
    expect(page.locator("#chart-h")).to_have_text("Rating history of version 1.0")
    expect(page.locator("#versions tbody tr").first.get_by_role("link")).to_have_text("2.0")
    page.get_by_role("navigation", name="Head-to-head pages").get_by_role(
        "link", name="← More matches"
    ).click()
    expect(rows).to_have_count(HEAD_TO_HEAD_PER_PAGE)


def test_head_to_head_of_recorded_matches_is_the_apis(page: Page, arena: Arena) -> None:
    alpha = arena.bots[0]
    page.goto(f"{arena.url}/bots/{alpha}")
    api = page.request.get(f"{arena.url}/api/bots/{alpha}/head-to-head").json()["items"]
    assert {h["opponent"] for h in api} == set(arena.bots[1:])
    rows = page.locator("#head-to-head tbody tr")
    expect(rows).to_have_count(len(api))
    names = dict(zip(arena.bots, SEAT_NAMES, strict=True))
    for n, h in enumerate(api):
        cells = rows.nth(n).locator("td")
        expect(cells.nth(0).get_by_role("link", name=names[h["opponent"]])).to_have_attribute(
            "href", f"/bots/{h['opponent']}"
        )
        figures = [h["matches"], h["ahead"], h["behind"], h["level"]]
        for i, figure in enumerate(figures, start=1):
            expect(cells.nth(i)).to_have_text(str(figure))
        expect(cells.nth(5)).to_have_text(f"{h['points_per_hand']:+.1f}")
    expect(page.get_by_role("navigation", name="Head-to-head pages")).to_have_count(0)


def test_a_house_bot_has_a_page_with_its_versions(page: Page, arena: Arena) -> None:
    page.goto(f"{arena.url}/bots/house:normal")
    expect(page.locator("h1")).to_have_text("house:normal")
    expect(page.locator(".lead")).to_contain_text("It is the rating scale's anchor")
    expect(page.locator("#ladder-entry")).to_have_count(0)
    rows = versions_rows(page)
    expect(rows).to_have_count(1)
    expect(rows.first.locator("td.version a")).to_have_text("1")
    expect(rows.first.locator(".mark-provisional")).to_have_count(0)
    expect(page.locator("svg.chart circle")).to_have_count(1)
    expect(page.locator("svg.chart path.band")).to_have_count(1)
    expect(page.locator("#chart-note")).to_contain_text("Not provisional from its first rated")
    page.goto(f"{arena.url}/bots/house:easy")  # rated by the recorded matches
    expect(versions_rows(page)).to_have_count(1)
    expect(versions_rows(page).first.locator(".mark-provisional")).to_have_count(1)
    expect(page.locator("svg.chart circle")).to_have_count(3)
    expect(page.locator("#head-to-head tbody tr")).to_have_count(3)


def test_names_and_versions_from_users_are_shown_as_text(page: Page, arena: Arena) -> None:
    hostile = arena.ladder.hostile
    paths = ["/", "/ladder/tables", f"/bots/{hostile}", f"/tournaments/{arena.ladder.table_id}"]
    for path in paths:
        html = page.request.get(arena.url + path).text()
        assert "<script>window.pwned" not in html and "<img src=x" not in html, path
        assert "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in html, path
        page.goto(arena.url + path)
        assert page.evaluate("window.pwned === undefined")
        expect(page.get_by_text(HOSTILE_NAME, exact=True).first).to_be_visible()
    page.goto(arena.url + "/")
    row = ladder_row(page, hostile)
    expect(row.locator("td").nth(1)).to_have_text(HOSTILE_NAME)
    expect(row.locator("td.version")).to_have_text(HOSTILE_VERSION)
    page.goto(f"{arena.url}/bots/{hostile}")
    expect(page.locator("h1")).to_have_text(HOSTILE_NAME)
    expect(page).to_have_title(f"{HOSTILE_NAME} · Gong Zhu arena")
    link = versions_rows(page).first.get_by_role("link")
    expect(link).to_have_text(HOSTILE_VERSION)
    link.click()  # the version, URL-encoded, selects its own history
    expect(page).to_have_url(
        f"{arena.url}/bots/{hostile}?version={quote_plus(HOSTILE_VERSION)}#history"
    )
    expect(page.locator("#chart-h")).to_have_text(f"Rating history of version {HOSTILE_VERSION}")
    expect(page.locator("svg.chart circle")).to_have_count(2)
    assert page.evaluate("window.pwned === undefined")


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
    paths = [
        "/",
        "/ladder/tables",
        f"/tournaments/{arena.tournament_id}",
        f"/bots/{arena.bots[0]}",
        f"/bots/{arena.ladder.veteran}",
    ]
    for path in paths:
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
