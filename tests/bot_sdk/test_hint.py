"""The hint helper: a legal move for every kind of decision, under every variant."""

from __future__ import annotations

import pytest

from bot_sdk.hint import hint
from referee import Expose, Game, Play, parse_card
from tests.bot_sdk.house_support import PROFILES, play_game, position


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_hints_are_legal_moves_for_every_decision(profile: str) -> None:
    for seed in range(5):
        # The referee refuses illegal moves, so a whole match of hints proves them legal.
        game = play_game(PROFILES[profile], seed, hint)
        assert game.outcome is not None


def test_the_exposure_hint_names_which_cards_to_expose() -> None:
    for seed in range(40):
        game = Game(seed=seed)
        for decision in game.pending:
            move = hint(game.observation(decision.seat))
            assert isinstance(move, Expose)
            assert move.cards.issubset(decision.choices)


def test_the_play_hint_is_normal_advice() -> None:
    move = hint(position(2, "QS 3S 4D 8D 2H", [(0, "5C"), (1, "KC")]))
    assert move == Play(2, parse_card("QS"))


def test_no_hint_without_a_decision() -> None:
    game = Game(seed=1)
    idle = next(s for s in range(4) if s not in {d.seat for d in game.pending})
    with pytest.raises(ValueError, match="no decision"):
        hint(game.observation(idle))
