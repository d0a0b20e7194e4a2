"""What a bot is: one class with a method per decision, or plain functions.

A bot sees only its seat's :class:`~referee.Observation` (its hand, the legal choices, the
trick so far, exposures, scoring cards taken, totals, the rules profile) and answers:

>>> from referee import CardSet, Game
>>> class LowestCard(Bot):
...     name = "lowest-card"
...     def play(self, obs):
...         return obs.legal.lowest()
>>> game = Game(seed=1)
>>> bot = LowestCard()
>>> while not game.is_over():
...     for decision in game.pending:
...         game.push(bot.decide(game.observation(decision.seat)))
>>> game.outcome is not None
True

:meth:`Bot.decide` turns whatever a method returns (a card, a name such as ``"QS"``, a
:class:`~referee.CardSet`, a list of names) into the referee's move for the pending decision.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from referee import (
    AnyMove,
    Card,
    CardSet,
    DecisionKind,
    Expose,
    HandResult,
    Observation,
    Outcome,
    Pass,
    Play,
    parse_card,
)

CardAnswer = Card | str
CardsAnswer = CardSet | Iterable[Card | str]


class Bot:
    """Subclass and override :meth:`play`; :meth:`expose` and :meth:`pass_cards` have defaults."""

    name: str = "bot"
    version: str = "1"

    def play(self, obs: Observation) -> CardAnswer:
        """The card to play: one of ``obs.legal``."""
        raise NotImplementedError(f"{type(self).__name__} must implement play()")

    def expose(self, obs: Observation) -> CardsAnswer:
        """The cards to expose, a subset of ``obs.legal`` (default: none)."""
        return CardSet()

    def pass_cards(self, obs: Observation) -> CardsAnswer:
        """Three cards of ``obs.legal`` to pass (``pass_3`` only; default: the three highest)."""
        count = obs.decision.count if obs.decision and obs.decision.count else 3
        return list(reversed(obs.legal))[:count]

    def hand_end(self, result: HandResult, observation: Observation) -> None:
        """Called after each hand (fire and forget): the scored hand and the final view of it."""

    def match_end(self, outcome: Outcome) -> None:
        """Called when the match ends (fire and forget)."""

    def decide(self, obs: Observation) -> AnyMove:
        """The referee move answering ``obs.decision`` (``ValueError`` if there is none)."""
        decision = obs.decision
        if decision is None:
            raise ValueError(f"seat {obs.seat} has no decision pending")
        if decision.kind is DecisionKind.PLAY:
            return Play(obs.seat, to_card(self.play(obs)))
        if decision.kind is DecisionKind.EXPOSE:
            return Expose(obs.seat, to_cards(self.expose(obs)))
        return Pass(obs.seat, to_cards(self.pass_cards(obs)))


def to_card(answer: CardAnswer) -> Card:
    """A card from an int or a name."""
    if isinstance(answer, bool) or not isinstance(answer, int | str):
        raise TypeError(f"a card is an int or a name such as 'QS', not {answer!r}")
    return parse_card(answer) if isinstance(answer, str) else answer


def to_cards(answer: CardsAnswer) -> CardSet:
    """A card set from a CardSet or an iterable of ints and names."""
    if isinstance(answer, CardSet):
        return answer
    if isinstance(answer, str):
        return CardSet.parse(answer)
    return CardSet.of(to_card(a) for a in answer)


class FunctionBot(Bot):
    """A bot made of plain functions: ``FunctionBot(play=lambda obs: obs.legal.lowest())``."""

    def __init__(
        self,
        play: Callable[[Observation], CardAnswer],
        expose: Callable[[Observation], CardsAnswer] | None = None,
        pass_cards: Callable[[Observation], CardsAnswer] | None = None,
        name: str = "function-bot",
    ) -> None:
        self.name = name
        self._play = play
        self._expose = expose
        self._pass = pass_cards

    def play(self, obs: Observation) -> CardAnswer:
        return self._play(obs)

    def expose(self, obs: Observation) -> CardsAnswer:
        return self._expose(obs) if self._expose else super().expose(obs)

    def pass_cards(self, obs: Observation) -> CardsAnswer:
        return self._pass(obs) if self._pass else super().pass_cards(obs)
