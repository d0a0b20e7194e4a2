"""The Play page in its four languages, in real headless Chromium at desktop and phone sizes:
a whole hand played in each language chosen by the browser (the referee's refusal of an
illegal click worded in it, the first card played with the keyboard), the language switch
kept across a reload, the seats' card counts in step with the animation, a rate limit's
wait, the rules page, and axe-core's accessibility check of the table. Screenshots of the
table in each language are kept under test-output/screenshots/."""

from __future__ import annotations

from typing import Any

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, Route, expect

from arena.human_view import EXPOSURE_FACTORS
from service.pages.i18n import LANGUAGES, translations
from service.pages.play_text import MESSAGES
from tests.pages.conftest import Arena, screenshot
from tests.pages.test_play_page import (
    PLAYABLE,
    hand_shown,
    new_game,
    open_game,
    play_one,
    settled,
    state,
)
from tests.service.play_support import one_hand, seed_where

BROWSER_LANGUAGE = {
    "en": "en-GB,en;q=0.9",
    "zh": "zh-CN,zh;q=0.9,en;q=0.5",
    "es": "es-MX,es;q=0.9,en;q=0.5",
    "it": "it-IT,it;q=0.9",
}
"""What a browser set to each language sends as Accept-Language."""
SERIOUS = {"serious", "critical"}
NAMES = {"QS": "Pig", "JD": "Goat", "AH": "Hearts", "TC": "Transformer"}
DESKTOP = pytest.mark.parametrize("page", [(1280, 900)], indirect=True, ids=["desktop"])
PHONE = pytest.mark.parametrize("page", [(390, 844)], indirect=True, ids=["phone"])
"""One size only, for what the other would not tell more about (the suite's time is counted)."""


def say(language: str, key: str, **params: Any) -> str:
    """A message of the page's catalog in ``language``, read from the .po here (not from the
    page), with its ``{placeholders}`` filled in."""
    return translations(language).gettext(MESSAGES[key]).format(**params)


def card_name(language: str, card: str) -> str:
    rank, suit = say(language, f"rank.{card[0]}"), say(language, f"suit.{card[1]}")
    return say(language, "card", rank=rank, suit=suit)


def card_names(language: str, cards: list[str]) -> str:
    names = [card_name(language, c) for c in cards]
    if len(names) < 2:
        return "".join(names)
    return say(language, "list.and", first=", ".join(names[:-1]), last=names[-1])


def refusal_text(language: str, refusal: dict[str, Any]) -> str:
    """The referee's refusal (the API's code and parameters) as the page must word it."""
    suit = refusal.get("suit")
    params = {
        "cards": card_names(language, refusal.get("cards", [])),
        "suit": say(language, f"suit.{suit}") if suit else "",
        "suit_singular": say(language, f"suit_singular.{suit}") if suit else "",
    }
    return say(language, f"refusal.{refusal['code']}", **params)


def serious_violations(page: Page) -> list[tuple[str, list[Any]]]:
    """axe-core's serious and critical violations on the page: each rule with its nodes."""
    found = Axe().run(page).response["violations"]
    return [(v["id"], [n["target"] for n in v["nodes"]]) for v in found if v["impact"] in SERIOUS]


def in_language(page: Page, language: str) -> None:
    """Make the browser ask for ``language`` first, as one set to it does."""
    page.set_extra_http_headers({"Accept-Language": BROWSER_LANGUAGE[language]})


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_a_whole_hand_in_the_browser_s_language_with_the_refusal_worded_in_it(
    page: Page, arena: Arena, language: str
) -> None:
    in_language(page, language)
    game_id = new_game(page, arena, rules=one_hand(), seed=seed_where(seat=0, exposable=False))
    open_game(page, arena, game_id)
    expect(page.locator("html")).to_have_attribute("lang", language)
    expect(page.locator("#message")).to_have_text(say(language, "notice.nothing_to_expose"))
    expect(page.locator("#play-button")).to_have_text(
        translations(language).pgettext("button", "Play")
    )
    first = page.locator(PLAYABLE).first
    name = card_name(language, first.get_attribute("data-card") or "")
    expect(first).to_have_attribute("aria-label", name)
    expect(page.locator(".pos-right .pname")).to_contain_text(say(language, "position.right"))
    expect(page.locator(".pos-right .pscore")).to_contain_text(say(language, "this_hand"))
    expect(page.locator(".pos-right .pscore")).to_contain_text(say(language, "total"))
    # the first card by keyboard: arrows choose a playable card, Enter plays it
    page.locator("#hand button").first.focus()
    for _ in range(13):
        if page.locator("#hand button.selected").count():
            break
        page.keyboard.press("ArrowRight")
    chosen = page.locator("#hand button.selected").get_attribute("data-card")
    page.keyboard.press("Enter")
    expect(page.locator(f"#hand button[data-card='{chosen}']")).to_have_count(0)
    settled(page)
    # a hint, worded in the language, then played
    page.locator("#hint-button").click()
    hinted = page.locator("#hand button.selected")
    expect(hinted).to_have_count(1)
    card = hinted.get_attribute("data-card") or ""
    expect(page.locator("#message")).to_have_text(
        say(language, "hint.play", cards=card_name(language, card))
    )
    page.locator("#play-button").click()
    expect(page.locator(f"#hand button[data-card='{card}']")).to_have_count(0)
    settled(page)
    refused = None
    while page.locator("#panel").is_hidden():
        current = state(page, arena, game_id)
        refusals = [c for c in current["hand"] if c["refusal"]]
        if refused is None and refusals:
            refused = refusals[0]
            page.locator(f"#hand button[data-card='{refused['card']}']").click()
            expect(page.locator("#message")).to_have_text(
                refusal_text(language, refused["refusal"])
            )
            screenshot(page, f"play-{language}-refused")
        play_one(page, tap_twice=False)
    assert refused is not None, "no card was refused in the whole hand"
    assert refused["refusal"]["code"] in {"must_follow_suit", "exposed_first_trick"}
    outcome = state(page, arena, game_id)["outcome"]
    expect(page.locator("#panel-title")).to_have_text(
        say(language, "result.victory" if outcome["victory"] else "result.defeat")
    )
    expect(page.locator("#hand-table thead th").nth(1)).to_have_text(say(language, "column.score"))
    expect(page.get_by_role("button", name=say(language, "result.victory"))).to_have_count(0)
    screenshot(page, f"play-{language}-result")


@DESKTOP
def test_the_language_switch_is_kept_across_reloads_and_pages(page: Page, arena: Arena) -> None:
    in_language(page, "en")
    page.goto(arena.url + "/play")
    expect(page.locator("h1")).to_have_text("Play")
    page.locator("#language").select_option("it")
    expect(page.locator("h1")).to_have_text("Gioca")
    page.reload()
    expect(page.locator("h1")).to_have_text("Gioca")
    page.goto(arena.url + "/play")  # no ?lang= now: the cookie keeps the choice
    expect(page.locator("h1")).to_have_text("Gioca")
    expect(page.locator("html")).to_have_attribute("lang", "it")
    game_id = new_game(page, arena, rules=one_hand(), seed="5")
    open_game(page, arena, game_id)
    expect(page.locator("#hint-button")).to_have_text("Suggerimento")
    page.locator("#language").select_option("zh")
    settled(page)
    expect(page.locator("#hint-button")).to_have_text("提示")
    page.reload()
    settled(page)
    expect(page.locator("#hint-button")).to_have_text("提示")
    expect(page.locator("#rules-link")).to_have_text("本场规则")


@DESKTOP
def test_the_seats_card_counts_drop_as_the_cards_land(page: Page, arena: Arena) -> None:
    in_language(page, "en")
    game_id = new_game(page, arena, rules=one_hand(), seed=seed_where(seat=0, exposable=False))
    open_game(page, arena, game_id, animate=True)
    before = page.locator(".pinfo").all_inner_texts()
    page.locator(PLAYABLE).first.dblclick()
    page.wait_for_function(
        """(before) => Array.from(document.querySelectorAll(".pinfo"))
            .some((p, i) => p.textContent !== before[i])""",
        arg=before,
    )
    moved = page.evaluate(
        """(before) => {
            const seats = Array.from(document.querySelectorAll(".pseat"));
            const i = seats.findIndex(
                (s, i) => s.querySelector(".pinfo").textContent !== before[i]);
            const slot = document.querySelector(".slot-" + seats[i].dataset.position);
            return { landed: slot.querySelector(".card") !== null,
                     animating: !document.getElementById("ff-button").hidden };
        }""",
        before,
    )
    assert moved == {"landed": True, "animating": True}
    page.locator("#ff-button").click()
    settled(page)
    current = state(page, arena, game_id)
    for seat in current["seats"]:
        if seat["position"] != "bottom":
            expect(page.locator(f".pos-{seat['position']} .pinfo")).to_have_text(
                f"Cards: {seat['cards_held']}"
            )


@PHONE
def test_a_rate_limited_start_says_when_to_try_again(page: Page, arena: Arena) -> None:
    in_language(page, "es")
    page.goto(arena.url + "/play")
    retry_after = ["90"]

    def limited(route: Route) -> None:
        body = '{"status": 429, "error": "rate_limited", "message": "too many"}'
        headers = {"Retry-After": retry_after[0], "Content-Type": "application/json"}
        route.fulfill(status=429, headers=headers, body=body)

    page.route(arena.url + "/api/play", limited)
    start = page.get_by_role("button", name="Empezar la partida")
    for seconds, words in [("90", "90 s"), ("3600", "60 min")]:
        retry_after[0] = seconds
        start.click()
        expect(page.locator("#setup-message")).to_contain_text("Has empezado muchas partidas")
        expect(page.locator("#setup-message")).to_contain_text(words)


@PHONE
def test_the_rules_page_shows_the_game_s_variants_in_the_chosen_language(
    page: Page, arena: Arena
) -> None:
    in_language(page, "zh")
    rules = {"variants": ["pass_3", "qd_bonus"], "fixed_hands": 1}
    game_id = new_game(page, arena, rules=rules, seed="5")
    open_game(page, arena, game_id)
    page.locator("#rules-link").click()
    expect(page.locator("h1")).to_have_text("拱猪怎么玩")
    variants = page.locator("#profile-variants li")
    expect(variants).to_have_count(2)
    expect(variants.first.locator("strong")).to_have_text("传 3 张牌")
    expect(variants.nth(1)).to_contain_text("收到方块Q之后每赢一墩 +10")
    expect(page.locator(".setting")).to_have_text("这场比赛共打 1 局：打完后按总分排名。")
    expect(page.locator(".book table").first).to_be_visible()
    screenshot(page, "play-zh-rules")
    page.locator("#back-link").click()
    settled(page)
    expect(page.locator("#pass-button")).to_be_visible()


def test_exposed_cards_stay_beside_you_and_the_table_passes_axe_core(
    page: Page, arena: Arena
) -> None:
    in_language(page, "en")
    game_id = new_game(page, arena, rules=one_hand(), seed=seed_where(seat=0, exposable=True))
    open_game(page, arena, game_id)
    assert serious_violations(page) == []
    exposable = page.locator(PLAYABLE).evaluate_all("bs => bs.map(b => b.dataset.card)")
    for card in exposable:
        page.locator(f"#hand button[data-card='{card}']").click()
    page.locator("#expose-button").click()
    settled(page)
    held = [c for c in exposable if c in hand_shown(page)]
    beside = page.locator(".pos-bottom .pexposed .exposed-card")  # beside you until played
    expect(beside).to_have_count(len(held))
    for card in held:
        effect = f"{NAMES[card]} ×{EXPOSURE_FACTORS[card]}"  # the referee's factor
        expect(beside.filter(has=page.locator(f".card[data-card='{card}']"))).to_contain_text(
            effect
        )
    for _ in range(4):
        play_one(page, tap_twice=False)
    page.locator("#collected-button").click()
    page.locator("#last-trick-button").click()
    assert serious_violations(page) == []
    screenshot(page, "play-en-table")
