"""A decision request's body is built from cached pieces (each earlier hand's result encoded
once): it must be, byte for byte, the canonical encoding of the message built afresh."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator

import pytest

from bot_sdk import fragments
from bot_sdk.protocol import (
    DecisionRequest,
    ProtocolVersion,
    decision_request,
    encode,
    hand_end_body,
    hand_end_notice,
)
from referee import CardSet, Game, HandResult, Observation, RandomPlayer, Rules, RulesError, Variant
from referee.cards import CARD_NAMES
from tests.bot_sdk.bot_sdk_support import is_last_play
from tests.bot_sdk.bot_sdk_support import observations as played

MATCH_IDS = [
    "t-1:table-2:match-3",
    'tournoi-\u00e9t\u00e9:"results":[]:"last_result":null:\u68cb\\',
]
"""An ordinary id, and one with non-ASCII characters, quotes, a backslash and the very texts
the body's results are put in place of."""


def random_rules(seed: int) -> Rules:
    """Rules of six hands under random variants."""
    rng = random.Random(seed)
    while True:
        names = [v.value for v in Variant if rng.random() < 0.25]
        try:
            return Rules.from_json({"variants": names, "fixed_hands": 6, "max_hands": 6})
        except RulesError:
            continue


def observations(seed: int) -> Iterator[Observation]:
    """Every decision's observation of a match of six hands under random variants."""
    yield from played(random_rules(seed), seed)


def hand_ends(seed: int) -> Iterator[tuple[HandResult, Observation]]:
    """Every ``hand_end`` notice's result and view (each seat's, as the hand's last card was
    about to be played) of a match of six hands under random variants, played at random."""
    game, player = Game(random_rules(seed), seed=seed), RandomPlayer(seed)
    while not game.is_over():
        for decision in game.pending:
            obs = game.observation(decision.seat)
            finals = [game.observation(s) for s in range(4)] if is_last_play(game) else []
            game.push(player.choose(obs))
            yield from ((game.results[-1], view) for view in finals)


def fresh(
    obs: Observation,
    match_id: str,
    ident: str,
    bank: int,
    protocol: ProtocolVersion = ProtocolVersion.V1,
) -> bytes:
    return encode(
        decision_request(
            obs,
            match_id=match_id,
            decision_id=ident,
            time_limit_ms=1000,
            time_bank_ms=bank,
            protocol=protocol,
        )
    )


@pytest.mark.parametrize("protocol", list(ProtocolVersion))
@pytest.mark.parametrize(("match_id", "seed"), list(zip(MATCH_IDS, (1, 2), strict=True)))
def test_every_body_of_a_match_is_the_fresh_encoding(
    match_id: str, seed: int, protocol: ProtocolVersion
) -> None:
    checked_with_results = 0
    for n, obs in enumerate(observations(seed)):
        ident, bank = f"{match_id}:{obs.hand_number}:{n}", 30_000 - n
        body = DecisionRequest(obs, match_id, ident, 1000, bank, protocol).body
        assert body == fresh(obs, match_id, ident, bank, protocol)
        checked_with_results += bool(obs.results)
    assert checked_with_results > 200


@pytest.mark.parametrize("protocol", list(ProtocolVersion))
@pytest.mark.parametrize(("match_id", "seed"), list(zip(MATCH_IDS, (3, 4), strict=True)))
def test_every_hand_end_notice_of_a_match_is_the_fresh_encoding(
    match_id: str, seed: int, protocol: ProtocolVersion
) -> None:
    notices = list(hand_ends(seed))
    assert len(notices) == 24
    for result, view in notices:
        body = hand_end_body(result, view, match_id=match_id, protocol=protocol)
        assert body == encode(hand_end_notice(result, view, match_id=match_id, protocol=protocol))


def test_a_result_is_encoded_once_and_only_used_for_itself() -> None:
    encoded: list[HandResult] = []

    def counting(result: HandResult) -> str:
        encoded.append(result)
        return encode(result.to_json()).decode()

    results_json = fragments.ListJson(counting, 256)
    late = [obs for obs in observations(7) if len(obs.results) == 5][:20]
    seen = set()
    for obs in (o for o in observations(7) if o.results):
        for n in range(1, len(obs.results) + 1):
            assert results_json(obs.results[:n]) == _results_text(obs.results[:n])
        seen.update(id(r) for r in obs.results)
    assert len(encoded) == len(seen) == 5  # each result once, as the lists grow
    # an equal result that is another object, and a different one under the same hand number,
    # each in front of the kept list's last result
    copy = HandResult.from_json(late[0].results[0].to_json())
    other = copy._replace(totals=(1, 2, 3, 4))
    for results in ((copy, *late[0].results[1:]), (other, *late[0].results[1:])):
        assert results_json(results) == _results_text(results)
        obs = dataclasses.replace(late[0], results=results)
        assert DecisionRequest(obs, "m", "d", 1000, 1).body == fresh(obs, "m", "d", 1)
    assert any(r is other for r in encoded)  # the kept list was not taken for this one


def _results_text(results: tuple[HandResult, ...]) -> str:
    return encode([r.to_json() for r in results]).decode()


def test_a_full_cache_is_emptied_and_lists_stay_right() -> None:
    results_json = fragments.ListJson(_result_text, 2)
    for obs in list(observations(11))[::3]:
        assert results_json(obs.results) == _results_text(obs.results)
        assert len(results_json._lists) <= 2


def _result_text(result: HandResult) -> str:
    return encode(result.to_json()).decode()


def test_an_object_is_encoded_once_and_its_text_only_used_for_itself() -> None:
    encoded: list[HandResult] = []

    def counting(result: HandResult) -> object:
        encoded.append(result)
        return result.to_json()

    result_json = fragments.ObjectJson(counting, 2)
    last = [obs.results[-1] for obs in observations(17) if obs.results]
    for result in last:
        assert result_json(result) == _result_text(result)
        assert len(result_json._texts) <= 2
    assert len(encoded) == len({id(r) for r in last})
    # an entry left under another object's id by an object that is gone is not that object's
    other = last[0]._replace(totals=(1, 2, 3, 4))
    result_json._texts[id(other)] = (last[0], '{"stale":true}')
    assert result_json(other) == _result_text(other)


def test_card_sets_and_tricks_are_their_canonical_json() -> None:
    rng = random.Random(3)
    for mask in [0, (1 << 52) - 1, *(rng.getrandbits(52) for _ in range(2000))]:
        names = [CARD_NAMES[c] for c in range(52) if mask >> c & 1]
        assert fragments.cards_json(mask) == encode(names).decode()
        assert fragments.cards_json(mask) == encode(names).decode()  # kept
    for obs in observations(13):
        assert (
            fragments.tricks_json(obs.tricks) == encode([t.to_json() for t in obs.tricks]).decode()
        )


def test_an_observation_s_kept_keys_are_used_only_for_its_rules_results_and_standing() -> None:
    """The keys from ``results`` to ``standing`` are kept for a seat through a hand: another
    standing, fewer results or other rules with the rest the same get their own."""
    obs = next(o for o in observations(7) if len(o.results) > 1)
    same_rules = Rules.from_json(obs.rules.to_json())
    assert same_rules is not obs.rules
    variants = [
        obs,
        dataclasses.replace(obs, standing=(1, 2, 3, 4)),
        dataclasses.replace(obs, results=obs.results[1:]),
        dataclasses.replace(obs, results=obs.results[:-1]),
        dataclasses.replace(obs, rules=Rules.from_json({"variants": [], "max_hands": 99})),
        dataclasses.replace(obs, rules=same_rules),
    ]
    for variant in variants * 2:
        for results in (True, False):
            expected = variant.to_json()
            if not results:
                del expected["results"]
            assert fragments.observation_json(variant, results=results) == encode(expected).decode()
    # an entry left under another rules object's id by one that is gone is not that object's
    key = (id(same_rules), obs.seat, True, obs.standing)
    fragments._MIDDLES[key] = (obs.rules, obs.results, '"stale":true,')
    assert fragments.observation_json(variants[-1]) == encode(obs.to_json()).decode()


def test_card_names_come_in_card_order() -> None:
    rng = random.Random(5)
    for mask in [0, (1 << 52) - 1, *(rng.getrandbits(52) for _ in range(2000))]:
        cards = CardSet(mask)
        assert cards.names() == [CARD_NAMES[c] for c in range(52) if mask >> c & 1]


def test_a_request_makes_its_message_body_and_hash_once() -> None:
    obs = next(observations(5))
    request = DecisionRequest(obs, "m-1", "m-1:1:0", 1000, 30_000, ProtocolVersion.V2)
    assert request.sha256 is request.sha256
    assert request.body is request.body
    assert request.message is request.message
    assert request.body == fresh(obs, "m-1", "m-1:1:0", 30_000, ProtocolVersion.V2)


def test_a_kept_text_cache_starts_again_at_its_bound() -> None:
    """Every cache of the fragments (and of the stored form's answers) is kept by
    :func:`bot_sdk.fragments.keep`: it never holds more than its bound."""
    cache: dict[int, str] = {}
    for n in range(10):
        fragments.keep(cache, n, str(n), 4)
        assert len(cache) <= 4 and cache[n] == str(n)
    assert cache == {8: "8", 9: "9"}
