"""A decision request's body is built from cached pieces (each earlier hand's result encoded
once): it must be, byte for byte, the canonical encoding of the message built afresh."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator

import pytest

from bot_sdk import protocol
from bot_sdk.protocol import DecisionRequest, ProtocolVersion, decision_request, encode
from referee import CardSet, HandResult, Observation, Rules, RulesError, Variant
from referee.cards import CARD_NAMES
from tests.bot_sdk.bot_sdk_support import observations as played

MATCH_IDS = [
    "t-1:table-2:match-3",
    'tournoi-\u00e9t\u00e9:"results":[]:"last_result":null:\u68cb\\',
]
"""An ordinary id, and one with non-ASCII characters, quotes, a backslash and the very texts
the body's results are put in place of."""


def observations(seed: int) -> Iterator[Observation]:
    """Every decision's observation of a match of six hands under random variants."""
    rng = random.Random(seed)
    while True:
        names = [v.value for v in Variant if rng.random() < 0.25]
        try:
            rules = Rules.from_json({"variants": names, "fixed_hands": 6, "max_hands": 6})
            break
        except RulesError:
            continue
    yield from played(rules, seed)


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


def test_a_result_is_encoded_once_and_only_used_for_itself(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    encoded: list[HandResult] = []
    real = HandResult.to_json

    def counting(result: HandResult) -> dict[str, object]:
        encoded.append(result)
        return real(result)

    monkeypatch.setattr(HandResult, "to_json", counting)
    protocol._RESULT_BODIES.clear()
    late = [obs for obs in observations(7) if len(obs.results) == 5]
    for obs in late[:20]:
        assert DecisionRequest(obs, "m", "d", 1000, 1).body == fresh(obs, "m", "d", 1)
    assert len(encoded) == 5 + 20 * 5  # five results, once each; then each fresh encoding
    # an equal result that is another object, and a different one under the same hand number
    copy = HandResult.from_json(late[0].results[0].to_json())
    other = copy._replace(totals=(1, 2, 3, 4))
    # an entry left under ``other``'s id by an object that is gone is not ``other``'s
    protocol._RESULT_BODIES[id(other)] = (copy, b'{"stale":true}')
    for results in ((copy, *late[0].results[1:]), (other, *late[0].results[1:])):
        obs = dataclasses.replace(late[0], results=results)
        assert DecisionRequest(obs, "m", "d", 1000, 1).body == fresh(obs, "m", "d", 1)


def test_a_full_cache_is_emptied_and_bodies_stay_right(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(protocol, "_RESULT_BODIES_KEPT", 2)
    protocol._RESULT_BODIES.clear()
    for obs in list(observations(11))[::3]:
        assert DecisionRequest(obs, "m", "d", 1000, 1).body == fresh(obs, "m", "d", 1)
        assert len(protocol._RESULT_BODIES) <= 2


def test_card_names_come_in_card_order() -> None:
    rng = random.Random(5)
    for mask in [0, (1 << 52) - 1, *(rng.getrandbits(52) for _ in range(2000))]:
        cards = CardSet(mask)
        assert cards.names() == [CARD_NAMES[c] for c in range(52) if mask >> c & 1]
