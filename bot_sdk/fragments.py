"""Canonical JSON of an observation, written from cached fragments rather than encoded afresh.

``observation_json(obs)`` is ``json.dumps(obs.to_json(), sort_keys=True, separators=(",", ":"),
ensure_ascii=False)``, the same text, several times faster: the keys are written in their
sorted order, card sets come from a table of card names, and what a match's observations share
is encoded once: the rules, each completed trick and each earlier hand's result. A request is
hashed (``request_sha256``) when the arena sends it and again whenever a log is verified or
read back from its stored form, so this runs for every decision of every match many times.

Canonical JSON is compositional (an object is its keys' and values' encodings in sorted key
order, a list its items' joined by commas), which is what lets the pieces be made apart and
put together. tests/bot_sdk/test_request_bodies.py compares every body of whole matches with
the fresh encoding.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from json import dumps
from json.encoder import encode_basestring
from typing import Final, Generic, TypeVar

from referee import CardSet, Decision, HandResult, Observation, Rules, Trick
from referee.cards import CARD_NAMES

json_string: Final[Callable[[str], str]] = encode_basestring
"""A string's JSON (quoted, escaped, non-ASCII kept as it is): ``ensure_ascii=False``'s."""

_CHUNK = 7
_CHUNK_JSON: Final = tuple(
    tuple(
        "".join(
            f'"{name}",' for i, name in enumerate(CARD_NAMES[low : low + _CHUNK]) if bits >> i & 1
        )
        for bits in range(1 << _CHUNK)
    )
    for low in range(0, 52, _CHUNK)
)
"""For each seven cards of the deck, the names of every subset of them, each quoted and
followed by a comma."""
_KEPT: Final = 1 << 14
"""How many entries a cache keeps before it starts again (a season's verification would
otherwise keep every hand ever seen)."""
_CARD_SETS: dict[int, str] = {}

_Key = TypeVar("_Key")
_Value = TypeVar("_Value")


def keep(cache: dict[_Key, _Value], key: _Key, value: _Value, most: int = _KEPT) -> None:
    """Put ``value`` in ``cache`` under ``key``, emptying it first if it holds ``most``
    entries: a bound that costs nothing on a hit, and that a lost entry only makes again."""
    if len(cache) >= most:
        cache.clear()
    cache[key] = value


def cards_json(mask: int) -> str:
    """The JSON list of the names of the cards of ``mask``, lowest first (``CardSet.names``)."""
    found = _CARD_SETS.get(mask)
    if found is None:
        c0, c1, c2, c3, c4, c5, c6, c7 = _CHUNK_JSON
        names = (
            c0[mask & 127] + c1[mask >> 7 & 127] + c2[mask >> 14 & 127] + c3[mask >> 21 & 127]
            + c4[mask >> 28 & 127] + c5[mask >> 35 & 127] + c6[mask >> 42 & 127]
            + c7[mask >> 49 & 127]
        )  # fmt: skip
        found = "[" + names[:-1] + "]"  # without the last comma ("[]" when there is none)
        keep(_CARD_SETS, mask, found)
    return found


def _canonical(data: object) -> str:
    return dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


_Item = TypeVar("_Item")


class ListJson(Generic[_Item]):
    """The JSON lists of immutable items that make up growing lists (a hand's tricks, a match's
    results): each list is kept by the identity of its last item, and a list one item longer
    than a kept one is that one's text and the new item's. A kept list is used only for a list
    equal to it (the kept one holds its items, so no other object can take the last one's
    identity while it is kept). Threads may share it: each step is one dictionary operation."""

    def __init__(self, item_json: Callable[[_Item], str], kept: int) -> None:
        self._item_json = item_json
        self._kept = kept
        self._lists: dict[int, tuple[Sequence[_Item], str]] = {}

    def __call__(self, items: Sequence[_Item]) -> str:
        if not items:
            return "[]"
        kept = self._lists.get(id(items[-1]))
        if kept is not None and kept[0] == items:
            return kept[1]
        last = self._item_json(items[-1])
        earlier = self._lists.get(id(items[-2])) if len(items) > 1 else None
        if len(items) == 1:
            text = "[" + last + "]"
        elif earlier is not None and earlier[0] == items[:-1]:
            text = earlier[1][:-1] + "," + last + "]"
        else:
            text = "[" + ",".join([self._item_json(item) for item in items]) + "]"
        keep(self._lists, id(items[-1]), (items, text), self._kept)
        return text


def _trick_json(trick: Trick) -> str:
    a, b, c, d = trick.cards
    return (
        f'{{"cards":["{CARD_NAMES[a]}","{CARD_NAMES[b]}","{CARD_NAMES[c]}","{CARD_NAMES[d]}"],'
        f'"leader":{trick.leader},"winner":{trick.winner}}}'
    )


_Kept = TypeVar("_Kept")


class ObjectJson(Generic[_Kept]):
    """The canonical JSON of immutable objects that many observations share (a match's rules,
    each hand's result), made once for each object and kept by its identity. An entry is used
    only for the very object it was made of (it holds the object, so no other can take its
    identity while it is kept). Threads may share it: each step is one dictionary operation."""

    def __init__(self, to_json: Callable[[_Kept], object], kept: int) -> None:
        self._to_json = to_json
        self._kept = kept
        self._texts: dict[int, tuple[_Kept, str]] = {}

    def __call__(self, item: _Kept) -> str:
        found = self._texts.get(id(item))
        if found is not None and found[0] is item:
            return found[1]
        text = _canonical(self._to_json(item))
        keep(self._texts, id(item), (item, text), self._kept)
        return text


rules_json: Final = ObjectJson(Rules.to_json, _KEPT)
"""The rules' JSON (a match has one rules object)."""
result_json: Final = ObjectJson(HandResult.to_json, _KEPT)
"""A hand result's JSON (the same object in every observation of the match after it)."""
tricks_json: Final = ListJson(_trick_json, _KEPT)
"""A hand's completed tricks."""
results_json: Final = ListJson(result_json, 256)
"""A match's earlier hand results (fewer lists kept: one is up to a hundred results long;
a worker's matches in flight each need their latest)."""


_PLAYS: Final = tuple(
    tuple(f'{{"card":"{CARD_NAMES[card]}","seat":{seat}}}' for card in range(52))
    for seat in range(4)
)
_FOURS: dict[tuple[int, int, int, int], str] = {}


def _four_json(sets: tuple[CardSet, CardSet, CardSet, CardSet]) -> str:
    """The JSON list of four card sets (one per seat: exposed, taken), which change rarely."""
    a, b, c, d = sets
    key = (a.mask, b.mask, c.mask, d.mask)
    found = _FOURS.get(key)
    if found is None:
        found = (
            f"[{cards_json(a.mask)},{cards_json(b.mask)},{cards_json(c.mask)},{cards_json(d.mask)}]"
        )
        keep(_FOURS, key, found)
    return found


_DECISIONS: dict[tuple[int, int | None, str], str] = {}


def _decision_json(decision: Decision | None) -> str:
    if decision is None:
        return "null"
    key = (decision.choices.mask, decision.count, decision.kind._value_)
    found = _DECISIONS.get(key)
    if found is None:
        mask, count, kind = key
        found = (
            f'{{"choices":{cards_json(mask)},'
            f'"count":{"null" if count is None else count},"kind":"{kind}"}}'
        )
        keep(_DECISIONS, key, found)
    return found


_MIDDLES: dict[
    tuple[int, int, bool, tuple[int, int, int, int]], tuple[Rules, tuple[HandResult, ...], str]
] = {}


_MIDDLES_KEPT: Final = 256
"""Fewer kept than other texts, as :data:`results_json`'s: a ``gongzhu-bot/1`` one holds every
earlier result of its match."""


def _middle_json(obs: Observation, results: bool) -> str:
    """The observation's keys from ``results`` (or ``rules``) to ``standing``, which stay the
    same for a seat through a hand: kept for the very rules object (which the entry holds, as
    :class:`ObjectJson`'s), equal results, the seat and the standing."""
    rules, past, seat, standing = obs.rules, obs.results, obs.seat, obs.standing
    key = (id(rules), seat, results, standing)
    found = _MIDDLES.get(key)
    if found is not None and found[0] is rules and found[1] == past:
        return found[2]
    s0, s1, s2, s3 = standing
    text = (
        f'"results":{results_json(past)},' if results else ""
    ) + f'"rules":{rules_json(rules)},"seat":{seat},"standing":[{s0},{s1},{s2},{s3}],'
    keep(_MIDDLES, key, (rules, past, text), _MIDDLES_KEPT)
    return text


def observation_json(obs: Observation, *, results: bool = True) -> str:
    """``obs.to_json()``'s canonical JSON (its keys in sorted order); without its ``results``
    key if not ``results`` (a ``gongzhu-bot/2`` request's observation)."""
    n0, n1, n2, n3 = obs.totals
    dealer, first_leader, pass_to = obs.dealer, obs.first_leader, obs.pass_to
    passed, received, trick_leader = obs.passed, obs.received, obs.trick_leader
    return (
        f'{{"dealer":{"null" if dealer is None else dealer},'
        f'"decision":{_decision_json(obs.decision)},"exposed":{_four_json(obs.exposed)},'
        f'"first_leader":{"null" if first_leader is None else first_leader},'
        f'"hand":{cards_json(obs.hand.mask)},"hand_number":{obs.hand_number},'
        f'"hearts_broken":{"true" if obs.hearts_broken else "false"},'
        f'"pass_to":{"null" if pass_to is None else pass_to},'
        f'"passed":{"null" if passed is None else cards_json(passed.mask)},'
        f'"phase":"{obs.phase._value_}",'
        f'"received":{"null" if received is None else cards_json(received.mask)},'
        f"{_middle_json(obs, results)}"
        f'"taken":{_four_json(obs.taken)},'
        f'"totals":[{n0},{n1},{n2},{n3}],'
        f'"trick":[{",".join([_PLAYS[seat][card] for seat, card in obs.trick])}],'
        f'"trick_leader":{"null" if trick_leader is None else trick_leader},'
        f'"tricks":{tricks_json(obs.tricks)}}}'
    )
