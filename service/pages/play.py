"""The Play page's routes: choosing opponents and rules, the table of one human game (its
script asks the API for every state: /api/play, docs/API.md) and the rules page, each in the
person's language (:mod:`service.pages.i18n`)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import markdown
from flask import Response, g, make_response, render_template, request, send_from_directory
from markupsafe import Markup

from arena.human_view import EXPOSURE_FACTORS, level_name
from arena.records import HOUSE_PARTICIPANTS
from referee import PassDirection, Rules, RulesError, Variant
from referee.rules import DEFAULT_LOSING_THRESHOLD, DEFAULT_MAX_HANDS
from service.context import store
from service.pages.i18n import (
    LANGUAGES,
    N_,
    gettext,
    install,
    keep_choice,
    ngettext,
    use_language,
)
from service.pages.play_text import script_messages
from service.pages.views import PageNotFoundError, blp


class VariantText(NamedTuple):
    """A variant as the person reads it: its name, the few words the setup form and a game's
    profile show, and the rule in full on the rules page."""

    name: str
    summary: str
    rule: str


VARIANTS: Mapping[Variant, VariantText] = {
    Variant.NO_EXPOSURE: VariantText(
        N_("No exposing"),
        N_("no exposing phase"),
        N_(
            "There is no exposing phase: no card is exposed, and every card counts its plain value."
        ),
    ),
    Variant.SEQUENTIAL_EXPOSURE: VariantText(
        N_("Exposing in turn"),
        N_("expose one after another, seeing earlier exposures"),
        N_(
            "The players expose one after another, in playing order from the first leader, "
            "each seeing what was exposed before."
        ),
    ),
    Variant.LEAD_2C: VariantText(
        N_("2♣ leads"),
        N_("the 2♣ holder leads it, every hand"),
        N_("In every hand, whoever holds 2♣ leads the first trick, and must lead the 2♣."),
    ),
    Variant.DEALER_LEFT_LEADS: VariantText(
        N_("Rotating dealer"),
        N_("the seat after a rotating dealer leads"),
        N_(
            "The dealer moves on one seat every hand, and the player after the dealer leads "
            "the first trick, with any card."
        ),
    ),
    Variant.HEARTS_MUST_BREAK: VariantText(
        N_("Hearts must break"),
        N_("hearts cannot be led until broken"),
        N_(
            "Hearts may not be led until a heart has been discarded on a trick of another "
            "suit in the hand, unless the leader holds only hearts."
        ),
    ),
    Variant.NO_SPADE_LEAD_FIRST_TRICK: VariantText(
        N_("No spade lead first"),
        N_("no spade lead to the first trick"),
        N_(
            "The first trick of a hand may not be led with a spade, unless the leader holds "
            "only spades."
        ),
    ),
    Variant.PASS_3: VariantText(
        N_("Passing 3 cards"),
        N_("pass 3 cards to the next seat first"),
        N_(
            "Before exposing, every player passes 3 cards of their choice to the player on "
            "their right, and receives 3 from the player on their left."
        ),
    ),
    Variant.TARGET_500: VariantText(
        N_("Out at −500"),
        N_("a shorter match: out at −500"),
        N_("A shorter match: it ends when a total is −500 or lower, instead of −1000."),
    ),
    Variant.END_AT_PLUS_1000: VariantText(
        N_("End above +1000"),
        N_("the match also ends above +1000"),
        N_(
            "The match also ends when a total is above +1000 (with one player alone at the "
            "top, as always)."
        ),
    ),
    Variant.TIE_CONTINUE_BOTTOM: VariantText(
        N_("One loser"),
        N_("play on while the lowest total is tied"),
        N_(
            "When the match would end, it goes on while the lowest total is tied, instead of "
            "the highest: the loser, the pig, must be alone at the bottom."
        ),
    ),
    Variant.TIE_SHARE: VariantText(
        N_("Shared places"),
        N_("a tied top shares first place"),
        N_("When the match would end, it ends even with the top tied: equal totals share a place."),
    ),
    Variant.TEAMS: VariantText(
        N_("Teams"),
        N_("partners sit across"),
        N_(
            "You play with the player across, against the other two. A team's total is its "
            "two players' hand scores added, and the end of the match and the ranking go by "
            "the teams' totals."
        ),
    ),
    Variant.QD_BONUS: VariantText(
        N_("Q♦ bonus"),
        N_("+10 per trick won after taking Q♦"),
        N_(
            "Whoever takes Q♦ scores +10 for every later trick they win in the hand, added "
            "after the transformer."
        ),
    ),
    Variant.HAND_CAP_800: VariantText(
        N_("Hand cap +800"),
        N_("a hand scores at most +800"),
        N_("A hand scores at most +800: a higher score counts as +800."),
    ),
}
"""Each rules variant, in the words of the Play pages (the referee's rules:
:class:`referee.Variant`)."""
LEAD_RULES_YIELD = N_(
    "When the variants' rules on leading together leave the leader no card to lead, they do "
    "not apply to that lead."
)
PASS_DIRECTIONS: Mapping[PassDirection, str] = {
    PassDirection.PREVIOUS: N_("The 3 cards are passed to the player on the left."),
    PassDirection.ACROSS: N_("The 3 cards are passed to the player across."),
    PassDirection.CYCLE: N_(
        "The 3 cards are passed to the right, then to the left, then across, then not at all, "
        "in turn from hand to hand."
    ),
}
"""Where ``pass_3``'s cards go when not to the right (a game of the API may say)."""
RED_SUITS = "♥♦"
RULE_BOOKS = Path(__file__).parent / "rules"
"""The rules written for players, in each language (``<language>.md``): what the referee
enforces (docs/RULES.md), without its notation."""


def _page(template: str, **context: Any) -> Response:
    """``template`` in the language :func:`use_language` chose, with the language switch."""
    page = render_template(template, language=g.language, languages=LANGUAGES, **context)
    return keep_choice(make_response(page))


def _variants(chosen: frozenset[Variant] | None = None) -> list[tuple[str, str, str]]:
    """``(value, name, summary)`` of each variant (of those ``chosen``), in the language."""
    return [
        (v.value, gettext(VARIANTS[v].name), gettext(VARIANTS[v].summary))
        for v in Variant
        if chosen is None or v in chosen
    ]


def points(value: int) -> str:
    """A score as the rules write it: −1000, +800, 0."""
    return f"{value:+d}".replace("-", "\u2212") if value else "0"


def _settings(profile: Rules) -> list[str]:
    """What a game's profile sets besides its variants (the API may set them), in words."""
    said = []
    if profile.fixed_hands is not None:
        said.append(
            ngettext(
                "This game is {hands} hand long: its totals decide.",
                "This game is {hands} hands long: the totals after the last decide.",
                profile.fixed_hands,
            ).format(hands=profile.fixed_hands)
        )
    else:
        standard = -500 if Variant.TARGET_500 in profile else DEFAULT_LOSING_THRESHOLD
        if profile.losing_threshold != standard:
            said.append(
                gettext("The match ends at {threshold} or lower, instead of {standard}.").format(
                    threshold=points(profile.losing_threshold), standard=points(standard)
                )
            )
        if profile.max_hands != DEFAULT_MAX_HANDS:
            said.append(
                ngettext(
                    "It stops after {hands} hand at the most.",
                    "It stops after {hands} hands at the most.",
                    profile.max_hands,
                ).format(hands=profile.max_hands)
            )
    if profile.passing and profile.pass_direction in PASS_DIRECTIONS:
        said.append(gettext(PASS_DIRECTIONS[profile.pass_direction]))
    return said


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
        settings=_settings(profile),
        book=rule_book(language),
        rules=[(v.value, gettext(t.name), gettext(t.rule)) for v, t in VARIANTS.items()],
        lead_rules_yield=gettext(LEAD_RULES_YIELD),
    )


@functools.cache
def rule_book(language: str) -> Markup:
    """The rules for players in ``language`` as HTML (our own Markdown, so trusted)."""
    text = (RULE_BOOKS / f"{language}.md").read_text(encoding="utf-8")
    html = markdown.markdown(text, extensions=["tables"])
    for suit in RED_SUITS:
        html = html.replace(suit, f'<span class="red">{suit}</span>')
    return Markup(html)


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
