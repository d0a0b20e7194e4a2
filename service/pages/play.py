"""The Play page's routes: choosing opponents and rules, and the table of one human game (its
script asks the API for every state: /api/play, docs/API.md)."""

from __future__ import annotations

from flask import Response, render_template, send_from_directory

from arena.human_view import level_name
from arena.records import HOUSE_PARTICIPANTS
from referee import Variant
from service.context import store
from service.pages.views import PageNotFoundError, blp

VARIANTS = {
    Variant.NO_EXPOSURE: "no exposing phase",
    Variant.SEQUENTIAL_EXPOSURE: "expose one after another, seeing earlier exposures",
    Variant.LEAD_2C: "the 2♣ holder leads it, every hand",
    Variant.DEALER_LEFT_LEADS: "the seat after a rotating dealer leads",
    Variant.HEARTS_MUST_BREAK: "hearts cannot be led until broken",
    Variant.NO_SPADE_LEAD_FIRST_TRICK: "no spade lead to the first trick",
    Variant.PASS_3: "pass 3 cards to the next seat first",
    Variant.TARGET_500: "a shorter match: out at −500",
    Variant.END_AT_PLUS_1000: "the match also ends above +1000",
    Variant.TIE_CONTINUE_BOTTOM: "play on while the lowest total is tied",
    Variant.TIE_SHARE: "a tied top shares first place",
    Variant.TEAMS: "partners sit across",
    Variant.QD_BONUS: "+10 per trick won after taking Q♦",
    Variant.HAND_CAP_800: "a hand scores at most +800",
}
"""Each rules variant in a few words (docs/RULES.md has them in full)."""


@blp.route("/play")
def play() -> str:
    house = [(p, level_name(p)) for p in HOUSE_PARTICIPANTS]
    bots = [(b.id, b.name) for b in store().human_game_bots()]
    variants = [(v.value, v.value.replace("_", " "), VARIANTS[v]) for v in Variant]
    return render_template("pages/play.html", house=house, bots=bots, variants=variants)


@blp.route("/play-sw.js")
def service_worker() -> Response:
    """The Play page's service worker (static/play-sw.js), served from the root so that its
    scope can cover /play; ``max_age=0`` makes it ``no-cache``, so that a new version takes
    over."""
    return send_from_directory(blp.static_folder or "", "play-sw.js", max_age=0)


@blp.route("/play/<game_id>")
def play_table(game_id: str) -> str:
    if store().get_human_game(game_id) is None:
        raise PageNotFoundError(f"There is no game {game_id}: it may have expired.")
    return render_template("pages/play_table.html", game_id=game_id)
