"""The numeric form of an observation, plane by plane on positions built by hand, and the same
whichever way it is computed (tricks folded once per match or afresh, the observation rebuilt
from the JSON a bot is sent)."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import numpy as np
import pytest

from referee import CardSet, Expose, Game, Observation, Pass, Rules, Variant, parse_card
from referee.players import RandomPlayer
from tests.replays.replay_support import PROFILES
from training.encoding import (
    ACTIONS,
    DONE,
    FLAGS,
    LAYOUT,
    SIZE,
    History,
    actions_of,
    cards_of_plane,
    decision_steps,
    encode,
    one_hot_seat,
)
from training.table import Table

SUITED = ["2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC", "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD"]
SUITED += ["2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH", "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS"]
"""A deal of one suit to each seat: clubs to seat 0, diamonds, hearts, spades to seat 3."""


def cards(names: str) -> CardSet:
    return CardSet.parse(names)


def plane(vector: np.ndarray, name: str, seat: int = 0) -> str:
    return str(cards_of_plane(vector, name, seat))


def numbers(vector: np.ndarray, name: str) -> list[float]:
    return [float(x) for x in vector[LAYOUT[name]]]


def test_the_layout_tiles_the_vector_and_the_documented_table_names_every_feature() -> None:
    spans = sorted((s.start, s.stop) for s in LAYOUT.values())
    assert spans[0][0] == 0 and spans[-1][1] == SIZE == 1105
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    assert LAYOUT["variants"].stop == FLAGS
    assert len(range(*LAYOUT["variants"].indices(SIZE))) == len(Variant)
    doc = (Path(__file__).resolve().parents[2] / "docs" / "TRAINING.md").read_text()
    for name, where in LAYOUT.items():
        assert f"| `{name}` | {where.start}–{where.stop - 1} |" in doc, name


def test_a_trick_in_play_seen_from_the_seat_after_it() -> None:
    """Seat 3 (all spades) exposed QS, seat 1 (all diamonds) JD; seat 3 won 2S 2C 2D 2H and
    leads 3S, seat 0 discards 3C: seat 1 sees it all relative to itself."""
    game = Game(Rules(fixed_hands=1), deals=[SUITED])
    for move in (Expose(3, cards("QS")), Expose(0, cards("")), Expose(1, cards("JD"))):
        game.push(move)
    game.push(Expose(2, cards("")))
    for card in ("2S", "2C", "2D", "2H", "3S", "3C"):
        game.play(card)
    vector, mask = encode(game.observation(1))
    assert vector.shape == (SIZE,) and vector.dtype == np.float32
    assert mask.shape == (ACTIONS,) and mask.dtype == np.int8
    assert plane(vector, "hand") == "3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD"
    # seats relative to seat 1: itself, seat 2 (next), seat 3 (across), seat 0 (previous)
    assert [plane(vector, "played", r) for r in range(4)] == ["2D", "2H", "2S 3S", "2C 3C"]
    assert [plane(vector, "trick", r) for r in range(4)] == ["", "", "3S", "3C"]
    assert [plane(vector, "won", r) for r in range(4)] == ["", "", "2C 2D 2H 2S", ""]
    assert [plane(vector, "exposed", r) for r in range(4)] == ["JD", "", "QS", ""]
    assert plane(vector, "chosen") == plane(vector, "passed") == plane(vector, "received") == ""
    voids = vector[LAYOUT["void"]].reshape(4, 4)  # seat, then suit: C D H S
    assert voids.tolist() == [[0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 0], [0, 0, 0, 1]]
    assert numbers(vector, "phase") == [0, 0, 1, 0]  # passing, exposing, playing, over
    assert numbers(vector, "decision") == [0, 0, 1]  # pass, expose, play
    assert one_hot_seat(vector, "trick_leader") == one_hot_seat(vector, "first_leader") == 2
    assert one_hot_seat(vector, "pass_to") is None
    assert numbers(vector, "hearts_broken") == [1]
    assert numbers(vector, "variants") == [0] * len(Variant)
    assert numbers(vector, "tricks") == pytest.approx([1 / 13])
    assert numbers(vector, "tricks_won") == pytest.approx([0, 0, 1 / 13, 0])
    assert numbers(vector, "hand_number") == [1.0]  # of fixed_hands 1
    assert numbers(vector, "losing_threshold") == [-1.0]
    assert str(CardSet(_mask_bits(mask))) == str(game.legal_moves)


def test_the_same_trick_seen_by_a_seat_with_no_decision() -> None:
    game = Game(Rules(fixed_hands=1), deals=[SUITED])
    for seat in (3, 0, 1, 2):
        game.push(Expose(seat, cards("")))
    game.play("2S")
    vector, mask = encode(game.observation(3))
    assert numbers(vector, "decision") == [0, 0, 0] and not mask.any()
    assert [plane(vector, "trick", r) for r in range(4)] == ["2S", "", "", ""]
    assert one_hot_seat(vector, "trick_leader") == 0
    assert numbers(vector, "hearts_broken") == [0]


def test_a_pass_chosen_one_card_at_a_time_then_received() -> None:
    rules = Rules.with_variants("pass_3", "teams", pass_direction="previous", fixed_hands=1)
    table = Table(rules)
    table.game = Game(rules, deals=[SUITED])
    assert table.seat_to_act() == 0
    table.act(parse_card("AC"))
    table.act(parse_card("KC"))
    vector, mask = table.encode(0)
    assert plane(vector, "chosen") == "KC AC"
    assert plane(vector, "hand") == SUITED[0]  # nothing leaves the hand before the third card
    assert str(CardSet(_mask_bits(mask))) == "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC"
    assert not mask[DONE]
    assert numbers(vector, "phase") == [1, 0, 0, 0] and numbers(vector, "decision") == [1, 0, 0]
    assert one_hot_seat(vector, "pass_to") == 3  # previous
    assert one_hot_seat(vector, "first_leader") is None  # not known while passing
    other, _ = table.encode(1)
    assert plane(other, "chosen") == ""  # another seat's choice is its own
    table.act(parse_card("QC"))
    for seat in (1, 2, 3):  # each its three lowest
        table.push(Pass(seat, cards(" ".join(SUITED[seat].split()[:3]))))
    vector, _ = table.encode(0)
    assert plane(vector, "passed") == "QC KC AC"
    assert plane(vector, "received") == "2D 3D 4D"  # from seat 1, which passes to seat 0
    variants = numbers(vector, "variants")
    assert [v.value for v, on in zip(Variant, variants, strict=True) if on] == ["pass_3", "teams"]


def test_totals_and_standing_after_a_hand_with_teams() -> None:
    rules = Rules.with_variants("teams", "target_500", max_hands=4)
    game = Game(rules, seed=5)
    player = RandomPlayer(5)
    while not game.results:
        game.push(player.decide(game.pending[0]))
    seat = game.pending[0].seat
    vector, _ = encode(game.observation(seat))
    relative = [(seat + r) % 4 for r in range(4)]
    assert numbers(vector, "totals") == pytest.approx([game.totals[s] / 1000 for s in relative])
    standing = game.standing()
    assert numbers(vector, "standing") == pytest.approx([standing[s] / 1000 for s in relative])
    assert numbers(vector, "losing_threshold") == [-0.5]
    assert numbers(vector, "hand_number") == [2 / 4]
    assert numbers(vector, "tricks") == [0.0] and numbers(vector, "tricks_won") == [0.0] * 4


def test_an_exposure_chosen_so_far_is_seen_by_its_seat_alone() -> None:
    table = Table(Rules(fixed_hands=1))
    table.game = Game(Rules(fixed_hands=1), deals=[SUITED])
    assert table.seat_to_act() == 3 and table.game.pending_exposers() == [3, 0, 1, 2]
    table.act(parse_card("QS"))
    vector, mask = table.encode(3)
    assert plane(vector, "chosen") == "QS" and plane(vector, "exposed") == ""
    for seat in (0, 1, 2):  # the next to expose included
        other, _ = table.encode(seat)
        assert plane(other, "chosen") == "" and plane(other, "exposed", (3 - seat) % 4) == ""
    assert numbers(vector, "decision") == [0, 1, 0]
    assert mask.nonzero()[0].tolist() == [DONE]  # QS was its only exposable card
    table.act(DONE)
    for seat in (0, 1):
        assert table.seat_to_act() == seat
        table.act(DONE)
    seen, _ = table.encode(2)
    assert plane(seen, "chosen") == "" and plane(seen, "exposed", 1) == ""  # seat 3: hidden
    table.act(DONE)
    seen, _ = table.encode(2)
    assert plane(seen, "exposed", 1) == "QS"


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_the_same_vector_folded_once_a_match_afresh_or_from_the_json(name: str) -> None:
    """What a loader of logs computes (each observation rebuilt from its JSON, no history kept)
    is what the environments compute (one History a match, the referee's own observation)."""
    rules = PROFILES[name]
    game = Game(rules, seed=name)
    player = RandomPlayer(name)
    history = History()
    rng = random.Random(name)
    while not game.is_over():
        decision = game.pending[0]
        for seat in range(4):
            obs = game.observation(seat)
            chosen = 0
            if seat == decision.seat and decision.kind.value != "play":
                chosen = rng.getrandbits(52) & decision.choices.mask
                if decision.count is not None:
                    chosen = _lowest(chosen, decision.count - 1)
            fast = encode(obs, chosen, history)
            fresh = encode(obs, chosen)
            rebuilt = encode(Observation.from_json(obs.to_json()), chosen)
            for other in (fresh, rebuilt):
                assert np.array_equal(fast[0], other[0]) and np.array_equal(fast[1], other[1])
        game.push(player.decide(decision))


def test_decision_steps_are_the_table_s_own_observations() -> None:
    rules = Rules.with_variants("pass_3", max_hands=1)
    table = Table(rules)
    table.deal(11)
    player = RandomPlayer(11)
    while table.seat_to_act() >= 0:
        seat = table.seat_to_act()
        obs = table.observation(seat)
        assert obs.decision is not None
        move = player.decide(obs.decision)
        steps = list(decision_steps(obs, move))
        assert [action for _, _, action in steps] == actions_of(move)
        for vector, mask, action in steps:
            now = table.encode(seat)
            assert np.array_equal(vector, now[0]) and np.array_equal(mask, now[1])
            assert mask[action] == 1
            table.act(action)


def _mask_bits(mask: np.ndarray) -> int:
    return sum(1 << int(i) for i in mask[:DONE].nonzero()[0])


def _lowest(mask: int, count: int) -> int:
    kept = 0
    while mask and kept.bit_count() < count:
        kept |= mask & -mask
        mask &= mask - 1
    return kept
