"""The Play page's routes: choosing opponents and rules, the table of one human game (its
script asks the API for every state: /api/play, docs/API.md) and the rules page, each in the
person's language (:mod:`service.pages.i18n`)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import markdown
from flask import Response, g, make_response, render_template, request, send_from_directory
from markupsafe import Markup

from arena.human_view import EXPOSURE_FACTORS, level_name
from arena.records import HOUSE_PARTICIPANTS
from referee import Rules, RulesError, Variant
from service.context import store
from service.pages.i18n import LANGUAGES, N_, gettext, install, keep_choice, use_language
from service.pages.play_text import script_messages
from service.pages.views import PageNotFoundError, blp

VARIANTS = {
    Variant.NO_EXPOSURE: N_("no exposing phase"),
    Variant.SEQUENTIAL_EXPOSURE: N_("expose one after another, seeing earlier exposures"),
    Variant.LEAD_2C: N_("the 2♣ holder leads it, every hand"),
    Variant.DEALER_LEFT_LEADS: N_("the seat after a rotating dealer leads"),
    Variant.HEARTS_MUST_BREAK: N_("hearts cannot be led until broken"),
    Variant.NO_SPADE_LEAD_FIRST_TRICK: N_("no spade lead to the first trick"),
    Variant.PASS_3: N_("pass 3 cards to the next seat first"),
    Variant.TARGET_500: N_("a shorter match: out at −500"),
    Variant.END_AT_PLUS_1000: N_("the match also ends above +1000"),
    Variant.TIE_CONTINUE_BOTTOM: N_("play on while the lowest total is tied"),
    Variant.TIE_SHARE: N_("a tied top shares first place"),
    Variant.TEAMS: N_("partners sit across"),
    Variant.QD_BONUS: N_("+10 per trick won after taking Q♦"),
    Variant.HAND_CAP_800: N_("a hand scores at most +800"),
}
"""Each rules variant in a few words (the rule book has them in full)."""
RULE_BOOKS = Path(__file__).parent / "rules"
"""The rule book in each language: ``en.md`` is docs/RULES.md itself, the others its
translations."""


def _page(template: str, **context: Any) -> Response:
    """``template`` in the language :func:`use_language` chose, with the language switch."""
    page = render_template(template, language=g.language, languages=LANGUAGES, **context)
    return keep_choice(make_response(page))


def _variants(chosen: frozenset[Variant] | None = None) -> list[tuple[str, str, str]]:
    return [
        (v.value, v.value.replace("_", " "), gettext(VARIANTS[v]))
        for v in Variant
        if chosen is None or v in chosen
    ]


@blp.route("/play")
def play() -> Response:
    use_language()
    house = [(p, level_name(p)) for p in HOUSE_PARTICIPANTS]
    bots = [(b.id, b.name) for b in store().human_game_bots()]
    return _page(
        "pages/play.html", house=house, bots=bots, variants=_variants(), text=script_messages()
    )


@blp.route("/play-sw.js")
def service_worker() -> Response:
    """The Play page's service worker (static/play-sw.js), served from the root so that its
    scope can cover /play; ``max_age=0`` makes it ``no-cache``, so that a new version takes
    over."""
    return send_from_directory(blp.static_folder or "", "play-sw.js", max_age=0)


@blp.route("/play/rules")
def rules() -> Response:
    """The rule book in the person's language, headed by the profile of the game played
    (``?game=``) or of the variants chosen (``?variants=a,b``)."""
    language = use_language()
    game_id = request.args.get("game")
    if game_id:
        game = store().get_human_game(game_id)
        if game is None:
            raise PageNotFoundError(f"There is no game {game_id}: it may have expired.")
        profile = game.rules
    else:
        asked = [v for v in request.args.get("variants", "").split(",") if v]
        try:
            profile = Rules.from_json({"variants": asked})
        except RulesError:
            profile = Rules()
    return _page(
        "pages/play_rules.html",
        game_id=game_id,
        variants=_variants(profile.variants),
        book=rule_book(language),
    )


@functools.cache
def rule_book(language: str) -> Markup:
    """The rule book in ``language`` as HTML (our own Markdown, so trusted)."""
    text = (RULE_BOOKS / f"{language}.md").read_text(encoding="utf-8")
    return Markup(markdown.markdown(text, extensions=["tables"]))


@blp.route("/play/<game_id>")
def play_table(game_id: str) -> Response:
    use_language()
    if store().get_human_game(game_id) is None:
        raise PageNotFoundError(f"There is no game {game_id}: it may have expired.")
    return _page(
        "pages/play_table.html",
        game_id=game_id,
        text=script_messages(),
        factors=EXPOSURE_FACTORS,
    )


blp.record_once(lambda state: install(state.app))
