"""What the Play page's script says, in the catalogs' source language: each message by the key
the script asks for, translated per request from the same catalogs as the templates and given to
the script in the page (docs/PAGES.md, "Languages"). ``{name}`` marks a value the script puts in; a
message about a seat has a ``_you`` twin for the person's own, as languages conjugate it.

Nothing here decides a rule: the referee's refusal of a card arrives as a code and its
parameters (``refusal`` in the API's state) and is worded from ``refusal.<code>``."""

from __future__ import annotations

from collections.abc import Mapping

from referee import Refusal
from service.pages.i18n import N_, gettext

REFUSALS: Mapping[Refusal, str] = {
    Refusal.MATCH_OVER: N_("The match is over"),
    Refusal.NO_PLAY_NOW: N_("No card is played now: the game is {phase}"),
    Refusal.CANNOT_PLAY_NOW: N_("You cannot play a card: the game is {phase}"),
    Refusal.CANNOT_DECIDE_NOW: N_("You cannot {kind} now: the game is {phase}"),
    Refusal.NO_DECISION: N_("You are not asked to {kind} now"),
    Refusal.NOT_YOUR_TURN: N_("It is {turn}’s turn to {kind}, not yours"),
    Refusal.NOT_A_CARD: N_("“{offered}” is not a card"),
    Refusal.NOT_HELD: N_("You do not hold {cards}"),
    Refusal.MUST_FOLLOW_SUIT: N_("You must follow {suit}"),
    Refusal.MUST_LEAD_2C: N_("You must lead the {card} to the first trick"),
    Refusal.NO_HEART_LEAD: N_("You may not lead a heart before hearts are broken"),
    Refusal.NO_SPADE_LEAD: N_("You may not lead a spade to the first trick"),
    Refusal.EXPOSED_FIRST_TRICK: N_(
        "Exposed {cards} cannot be played to the first {suit_singular} trick "
        "while you hold other {suit}"
    ),
    Refusal.NOT_EXPOSABLE: N_("Only {allowed} may be exposed, not {cards}"),
    Refusal.PASS_COUNT: N_("You must pass exactly {needed} cards, not {count}"),
}
"""The referee's refusals, worded for the person from the code's parameters: ``suit`` is the
suit's name as in "follow spades", ``suit_singular`` as in "the first spade trick", cards are
named in full ("queen of spades")."""

SUITS = "CDHS"
RANKS = "23456789TJQKA"

MESSAGES: Mapping[str, str] = {
    # cards: "queen of spades", 黑桃Q, "reina de picas", "donna di picche"
    "card": N_("{rank} of {suit}"),
    "suit.C": N_("clubs"),
    "suit.D": N_("diamonds"),
    "suit.H": N_("hearts"),
    "suit.S": N_("spades"),
    "suit_singular.C": N_("club"),
    "suit_singular.D": N_("diamond"),
    "suit_singular.H": N_("heart"),
    "suit_singular.S": N_("spade"),
    **{f"rank.{r}": r for r in "23456789"},
    "rank.T": N_("10"),
    "rank.J": N_("jack"),
    "rank.Q": N_("queen"),
    "rank.K": N_("king"),
    "rank.A": N_("ace"),
    "card.exposed": N_("{card}, exposed"),
    "card.cannot_play": N_("{card}, cannot be played now"),
    "card.can_expose": N_("{card}, can expose: {effect}"),
    "list.and": N_("{first} and {last}"),
    # the scoring cards' names, their markers and their exposure
    "name.QS": N_("Pig"),
    "name.JD": N_("Goat"),
    "name.TC": N_("Transformer"),
    "name.AH": N_("Hearts"),
    "effect": N_("{name} ×{factor}"),
    "can_expose": N_("can expose"),
    "marker.on_table": N_("{name}: {card} fell, on the table"),
    "marker.taken": N_("{name}: {card} fell, taken by {seat}"),
    "marker.taken_you": N_("{name}: {card} fell, taken by you"),
    "threat": N_("All-hearts threat: {seat}"),
    # the seats
    "you": N_("You"),
    "seat": N_("{name} ({position})"),
    "position.right": N_("right"),
    "position.top": N_("across"),
    "position.left": N_("left"),
    "level.easy": N_("Easy"),
    "level.normal": N_("Normal"),
    "level.hard": N_("Hard"),
    "cards_held": N_("Cards: {count}"),
    "this_hand": N_("This hand"),
    "total": N_("Total"),
    "exposed_beside": N_("Exposed, until played:"),
    # the hand and the felt
    "label.hand": N_("Hand {number}"),
    "label.trick": N_("trick {number}"),
    "label.scored": N_("scored"),
    "label.match_over": N_("match over"),
    "phase.passing": N_("passing"),
    "phase.exposing": N_("exposing"),
    "phase.playing": N_("playing"),
    "phase.over": N_("over"),
    "kind.play": N_("play a card"),
    "kind.expose": N_("expose"),
    "kind.pass": N_("pass"),
    "felt.exposing": N_("Exposing phase"),
    "felt.passing": N_("Passing"),
    "felt.your_turn": N_("Your turn"),
    "felt.won": N_("{seat} won the trick"),
    "felt.won_you": N_("You won the trick"),
    "felt.last_trick": N_("Last trick: {seat} won it"),
    "felt.last_trick_you": N_("Last trick: you won it"),
    "last_trick.show": N_("Show the last trick"),
    "last_trick.hide": N_("Back to this trick"),
    "exposed.some": N_("Exposed: {list}"),
    "exposed.none": N_("Nobody exposed a card."),
    "notice.nothing_to_expose": N_("You have no card to expose this hand"),
    # what the person is told
    "wait_turn": N_("Wait for your turn."),
    "only_exposable": N_("Only the cards marked “can expose” can be exposed."),
    "difficulty.later": N_("Difficulty changes from the next hand."),
    "difficulty.next": N_("{level} from the next hand"),
    "hint.play": N_("Hint: play the {cards}."),
    "hint.expose": N_("Hint: expose {cards}."),
    "hint.no_expose": N_("Hint: don’t expose."),
    "hint.pass": N_("Hint: pass {cards}."),
    # errors
    "error.offline": N_(
        "You are offline. Your game is kept on the server: it goes on when you are back online."
    ),
    "error.http": N_("The arena answered HTTP {status}: try again in a moment."),
    "error.rate_limited": N_(
        "You have started many matches in a short time: you may start another in {seconds} s."
    ),
    "error.rate_limited_minutes": N_(
        "You have started many matches in a short time: you may start another in {minutes} min."
    ),
    "error.rate_limited_soon": N_(
        "You have started many matches in a short time: try again in a minute."
    ),
    "error.moved_on": N_("The game had moved on: here it is as it stands now."),
    "error.gone": N_("This game is no longer kept: start a new match."),
    "error.refused": N_("The arena refused: {message}"),
    # collected cards
    "collected.show": N_("Show collected cards"),
    "collected.hide": N_("Hide collected cards"),
    "collected.title": N_("Exposed and collected scoring cards"),
    "collected.exposed": N_("exposed"),
    "collected.taken": N_("collected"),
    "collected.none": N_("none"),
    # the hand's result and the match's
    "result.victory": N_("Victory!"),
    "result.defeat": N_("Defeat"),
    "result.hand": N_("Hand {number} result"),
    "result.out": N_("Out"),
    "result.exposed": N_("exposed {cards}"),
    "column.player": N_("Player"),
    "column.score": N_("Hand score"),
    "column.total": N_("Total"),
    "column.hearts": N_("Hearts"),
    "column.pig": N_("Pig"),
    "column.goat": N_("Goat"),
    "column.transformer": N_("Transformer"),
    "column.multiplier": N_("×"),
    "column.bonus": N_("Bonus"),
    "bonus.all_scoring": N_("All 16"),
    "bonus.all_hearts": N_("All hearts"),
    "bonus.qd": N_("Q♦ +{points}"),
    "bonus.capped": N_("capped"),
    **{f"refusal.{code.value}": message for code, message in REFUSALS.items()},
}
"""The script's messages by key, in English (the catalogs' ids)."""


def script_messages() -> dict[str, str]:
    """The script's messages in this request's language."""
    return {key: gettext(message) for key, message in MESSAGES.items()}
