"""The Play page in real headless Chromium: a whole match played by clicking, an illegal click
refused with its reason, a refresh resuming (exposing phase and mid-hand), the hand panel's
numbers against the referee's, Fast-forward, and the setup form."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect

from referee import CardSet, DecisionKind, Rules, parse_card
from tests.pages.conftest import Arena, screenshot
from tests.service.play_support import ALL_EASY, one_hand, referee_game, seed_where

PLAYABLE = "#hand button[data-playable='1']"
KEPT = """() => caches.keys()
    .then(keys => Promise.all(keys.map(k => caches.open(k).then(c => c.match(location.href)))))
    .then(found => found.some(Boolean))"""
"""Whether a cache of the page's origin holds the page. Predicates are functions, not
expressions: Playwright polls an expression with ``eval``, which the page's CSP refuses."""
CONTROLLED = "() => navigator.serviceWorker.controller !== null"


def new_game(page: Page, arena: Arena, **body: Any) -> str:
    """Start a game over the API (seat 0, three Easy bots); its id."""
    response = page.request.post(
        arena.url + "/api/play", data={"opponents": ALL_EASY, "seat": 0, **body}
    )
    assert response.status == 201, response.text()
    game_id: str = response.json()["id"]
    return game_id


def settled(page: Page) -> None:
    """Wait until the page has its answer and has shown it (no request or animation running)."""
    expect(page.locator("#play")).to_have_attribute("aria-busy", "false")


def open_game(page: Page, arena: Arena, game_id: str, *, animate: bool = False) -> None:
    page.goto(f"{arena.url}/play/{game_id}" + ("" if animate else "?animate=off"))
    settled(page)


def state(page: Page, arena: Arena, game_id: str) -> dict[str, Any]:
    data: dict[str, Any] = page.request.get(f"{arena.url}/api/play/{game_id}").json()
    return data


def hand_shown(page: Page) -> list[str]:
    return page.locator("#hand button").evaluate_all("bs => bs.map(b => b.dataset.card)")


def play_one(page: Page, *, tap_twice: bool) -> None:
    """Play the first playable card: select it, then press Play or tap it again."""
    first = page.locator(PLAYABLE).first
    card = first.get_attribute("data-card")
    first.click()
    expect(page.locator(f"#hand button[data-card='{card}']")).to_have_class("hand-card selected")
    if tap_twice:
        page.locator(f"#hand button[data-card='{card}']").click()
    else:
        page.locator("#play-button").click()
    expect(page.locator(f"#hand button[data-card='{card}']")).to_have_count(0)
    settled(page)


def play_until_panel(page: Page) -> None:
    """Click through the hand: don't expose, then play the first playable card each turn."""
    moves = 0
    while page.locator("#panel").is_hidden():
        if page.locator("#no-expose-button").is_visible():
            page.locator("#no-expose-button").click()
            settled(page)
        else:
            play_one(page, tap_twice=moves % 2 == 1)
            moves += 1


def test_a_whole_match_by_clicking_with_the_hand_panel_matching_the_referee(
    page: Page, arena: Arena
) -> None:
    game_id = new_game(page, arena, rules=Rules(fixed_hands=2).to_json(), seed="11")
    open_game(page, arena, game_id)
    expect(page.locator("#hand button")).to_have_count(13)
    play_until_panel(page)
    expect(page.locator("#panel-title")).to_have_text("Hand 1 result")
    check_panel(page, arena, game_id, hand=1)
    screenshot(page, "play-hand-panel")
    page.get_by_role("button", name="Next hand").click()
    settled(page)
    expect(page.locator("#panel")).to_be_hidden()
    expect(page.locator("#hand button")).to_have_count(13)
    play_until_panel(page)
    outcome = state(page, arena, game_id)["outcome"]
    expect(page.locator("#panel-title")).to_have_text(
        "Victory!" if outcome["victory"] else "Defeat"
    )
    check_panel(page, arena, game_id, hand=2)
    ranking = page.locator("#ranking li")
    expect(ranking).to_have_count(4)
    first = outcome["ranking"][0]
    expect(ranking.first).to_have_attribute("data-seat", str(first["seat"]))
    expect(ranking.first).to_contain_text(str(first["total"]))
    expect(page.locator("#replay-link")).to_have_attribute("href", f"/matches/m_{game_id}")
    screenshot(page, "play-match-result")
    page.get_by_role("button", name="Play again").click()
    page.wait_for_url(lambda url: "/play/g_" in url and game_id not in url)
    settled(page)
    expect(page.locator("#hand button")).to_have_count(13)


def check_panel(page: Page, arena: Arena, game_id: str, *, hand: int) -> None:
    """The panel's numbers are the referee's result of ``hand``, replayed independently."""
    stored = arena.store.get_human_game(game_id)
    assert stored is not None
    result = referee_game(stored).results[hand - 1]
    for seat, score in enumerate(result.seats):
        row = page.locator(f"#hand-table tbody tr[data-seat='{seat}']")
        cells = {
            "hearts": score.hearts,
            "pig": score.pig,
            "goat": score.goat,
            "transformer": score.transformer_bonus,
            "multiplier": score.multiplier,
            "score": score.score,
            "total": result.totals[seat],
        }
        for field, value in cells.items():
            expect(row.locator(f"td[data-field='{field}']")).to_have_text(str(value))


def test_an_illegal_click_is_refused_with_its_reason_and_nothing_changes(
    page: Page, arena: Arena
) -> None:
    game_id = new_game(page, arena, rules=one_hand(), seed=seed_where(seat=0, exposable=False))
    open_game(page, arena, game_id)
    expect(page.locator("#message")).to_have_text("You have no card to expose this hand")
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    while True:
        current = state(page, arena, game_id)
        refused = [c for c in current["hand"] if c["reason"]]
        if refused:
            break
        play_one(page, tap_twice=False)
    before, version = hand_shown(page), current["version"]
    trick = page.locator("#felt .slot .card").all_inner_texts()
    posts.clear()
    dimmed = page.locator(f"#hand button[data-card='{refused[0]['card']}']")
    expect(dimmed).to_have_class("hand-card dimmed")
    dimmed.click()
    expect(page.locator("#message")).to_have_text(refused[0]["reason"])
    assert refused[0]["reason"].startswith(("You must follow", "Exposed "))
    expect(page.locator("#play-button")).to_be_disabled()
    assert hand_shown(page) == before
    assert page.locator("#felt .slot .card").all_inner_texts() == trick
    assert posts == [] and state(page, arena, game_id)["version"] == version
    screenshot(page, "play-refused")


def test_a_refresh_resumes_exactly_in_the_exposing_phase_and_mid_hand(
    page: Page, arena: Arena
) -> None:
    game_id = new_game(page, arena, rules=one_hand(), seed=seed_where(seat=0, exposable=True))
    open_game(page, arena, game_id)
    exposable = page.locator("#hand button[data-playable='1']")
    expect(exposable.first.locator(".effect")).to_contain_text("can expose")
    effects = exposable.locator(".effect").all_text_contents()
    page.reload()
    settled(page)
    expect(page.locator("#expose-button")).to_be_visible()
    expect(page.locator("#hand button[data-playable='1'] .effect")).to_have_text(effects)
    page.get_by_role("button", name="Hint").click()
    expect(page.locator("#message")).to_contain_text("Hint:")
    page.locator("#no-expose-button").click()
    settled(page)
    for _ in range(5):
        play_one(page, tap_twice=False)
    shown = {
        "hand": hand_shown(page),
        "trick": page.locator("#felt .slot .card").all_inner_texts(),
        "scores": page.locator(".pscore").all_inner_texts(),
        "label": page.locator("#hand-label").inner_text(),
    }
    screenshot(page, "play-mid-hand")
    page.reload()
    settled(page)
    assert hand_shown(page) == shown["hand"]
    assert page.locator("#felt .slot .card").all_inner_texts() == shown["trick"]
    assert page.locator(".pscore").all_inner_texts() == shown["scores"]
    expect(page.locator("#hand-label")).to_have_text(shown["label"])


def test_passing_three_cards_by_clicking(page: Page, arena: Arena) -> None:
    rules = Rules.with_variants("pass_3")
    game_id = new_game(page, arena, rules=Rules(rules.variants, fixed_hands=1).to_json(), seed="5")
    open_game(page, arena, game_id)
    expect(page.locator("#pass-button")).to_be_visible()
    expect(page.locator("#pass-button")).to_be_disabled()
    dealt = hand_shown(page)
    for card in dealt[:4]:
        page.locator(f"#hand button[data-card='{card}']").click()
    expect(page.locator("#pass-button")).to_be_disabled()  # four chosen: one too many
    page.locator(f"#hand button[data-card='{dealt[3]}']").click()
    expect(page.locator("#pass-button")).to_be_enabled()
    page.locator("#pass-button").click()
    settled(page)
    expect(page.locator("#pass-button")).to_be_hidden()
    held = hand_shown(page)
    assert len(held) == 13 and not set(dealt[:3]) & set(held)
    stored = arena.store.get_human_game(game_id)
    assert stored is not None
    game = referee_game(stored)
    assert game.passed[0] == CardSet.parse(dealt[:3]).mask
    assert sorted(held) == sorted(game.hand(0).names())  # what the referee says seat 0 holds


def test_tricks_against_hard_opponents_by_clicking(page: Page, arena: Arena) -> None:
    seed = seed_where(seat=0, exposable=False)
    game_id = new_game(page, arena, opponents=["house:hard"] * 3, rules=one_hand(), seed=seed)
    open_game(page, arena, game_id)
    for _ in range(3):
        play_one(page, tap_twice=False)
    stored = arena.store.get_human_game(game_id)
    assert stored is not None and stored.opponents == ("house:hard",) * 3
    game = referee_game(stored)
    assert game.hand(0).names() == sorted(hand_shown(page), key=parse_card)
    assert len(game.hand(0)) == 10
    plays = [r.applied for r in stored.moves if r.applied.kind is DecisionKind.PLAY]
    assert len([p for p in plays if p.seat != 0]) >= 6  # our cards answered by the Hard bots


def test_fast_forward_skips_the_computers_animation(page: Page, arena: Arena) -> None:
    game_id = new_game(page, arena, rules=one_hand(), seed=seed_where(seat=0, exposable=False))
    open_game(page, arena, game_id, animate=True)
    page.locator(PLAYABLE).first.dblclick()
    expect(page.locator("#ff-button")).to_be_visible()
    page.locator("#ff-button").click()
    expect(page.locator("#ff-button")).to_be_hidden(timeout=1000)
    expect(page.locator(PLAYABLE).first).to_be_visible()


def test_the_setup_form_starts_a_match_with_the_chosen_opponents_and_variant(
    page: Page, arena: Arena
) -> None:
    page.goto(arena.url + "/play")
    expect(page.locator("h1")).to_have_text("Play")
    page.locator("#opponent-1").select_option("house:hard")
    page.locator("input[value=no_exposure]").check()
    expect(page.locator("#setup-rules-link")).to_have_attribute(
        "href", "/play/rules?variants=no_exposure"
    )
    screenshot(page, "play-setup")
    page.get_by_role("button", name="Start the match").click()
    page.wait_for_url(f"{arena.url}/play/g_*")
    settled(page)
    expect(page.locator("#hand button")).to_have_count(13)
    game_id = page.url.rsplit("/", 1)[1]
    current = state(page, arena, game_id)
    assert current["rules"]["variants"] == ["no_exposure"]
    assert current["opponents"] == ["house:normal", "house:hard", "house:normal"]
    expect(page.locator(".pos-top .pname")).to_have_text("Hard across")


def test_offline_the_table_still_opens_and_goes_on_when_back_online(
    page: Page, arena: Arena
) -> None:
    game_id = new_game(page, arena, seed="5")
    open_game(page, arena, game_id)
    before = hand_shown(page)
    page.wait_for_function(KEPT)  # the service worker has kept this table
    page.wait_for_function(CONTROLLED)  # and has taken the page over
    page.reload()
    settled(page)
    page.wait_for_function(CONTROLLED)
    page.context.set_offline(True)
    page.reload()
    expect(page.locator("#message")).to_contain_text("You are offline")
    page.context.set_offline(False)
    expect(page.locator("#message")).not_to_contain_text("offline")
    settled(page)
    assert hand_shown(page) == before
    screenshot(page, "play-back-online")
