"""Reading a log of any format the arena has written: older formats are upgraded step by step.

A stored log is never rewritten: its signature covers the bytes the arena sealed, in the format
of the day. Reading it upgrades a copy in memory, one registered step at a time, until it is in
the current format (:data:`replays.log.FORMAT`), then reads that. So check a log's integrity on
the stored data, before reading it.

Version 2 replaced version 1's ``seed`` (a string, informative) with ``deals`` (where the deals
came from: a committed secret, :mod:`replays.deals`); version 3 added each decision's ``note``
(what the bot said about its answer); version 4 the timing evidence (each decision's ``timing``
and a timeout's ``deadline``, each seat's ``hello``); version 5 ``continues`` (for a match that
continues a voided one, the remedy ``strike`` of docs/DISPUTES.md); version 6 each seat's
``protocol`` (the version of the bot protocol its requests are written in). One entry per step
keeps every stored log readable::

    UPGRADES["gongzhu-replay/1"] = ("gongzhu-replay/2", upgrade_1_to_2)
    UPGRADES["gongzhu-replay/2"] = ("gongzhu-replay/3", upgrade_2_to_3)
    UPGRADES["gongzhu-replay/3"] = ("gongzhu-replay/4", upgrade_3_to_4)
    UPGRADES["gongzhu-replay/4"] = ("gongzhu-replay/5", upgrade_4_to_5)
    UPGRADES["gongzhu-replay/5"] = ("gongzhu-replay/6", upgrade_5_to_6)

An upgrade function takes the log's JSON object in one format and returns it in the next; it
may change its argument (it gets a copy). The chain sets ``format`` itself.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from bot_sdk.protocol import ProtocolVersion, encode
from replays.deals import DealScheme, DealSource
from replays.log import FORMAT, MatchLog, TimeControl

Upgrade = Callable[[dict[str, Any]], dict[str, Any]]


def upgrade_1_to_2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1's informative ``seed`` becomes an unchecked deal source, in its place."""
    seed = data.pop("seed", None)
    deals = None if seed is None else DealSource(DealScheme.UNCHECKED, seed=str(seed))
    data["deals"] = None if deals is None else deals.to_json()
    return data


def upgrade_2_to_3(data: dict[str, Any]) -> dict[str, Any]:
    """Version 3 records each decision's ``note``; a version 2 bot could not send one."""
    for hand in data.get("hands", ()):
        for decision in hand.get("decisions", ()):
            decision["note"] = None
    return data


def upgrade_3_to_4(data: dict[str, Any]) -> dict[str, Any]:
    """Version 4 records timing, which version 3 did not measure: every ``timing`` and ``hello``
    is null. A timeout's ``deadline`` follows from the bank its request carried, as in
    version 4."""
    for seat in data.get("seats", ()):
        seat["hello"] = None
    for hand in data.get("hands", ()):
        for decision in hand.get("decisions", ()):
            bank = decision.get("time_bank_ms")
            timed_out = decision.get("status") == "timeout" and bank is not None
            decision["deadline"] = TimeControl.deadline(bank).value if timed_out else None
            decision["timing"] = None
    return data


def upgrade_4_to_5(data: dict[str, Any]) -> dict[str, Any]:
    """Version 5 says when a match continues a voided one; no version 4 match did."""
    data["continues"] = None
    return data


def upgrade_5_to_6(data: dict[str, Any]) -> dict[str, Any]:
    """Version 6 records the protocol each seat spoke; every seat of a version 5 match spoke
    ``gongzhu-bot/1``, the only one there was."""
    for seat in data.get("seats", ()):
        seat["protocol"] = ProtocolVersion.V1.value
    return data


UPGRADES: dict[str, tuple[str, Upgrade]] = {
    "gongzhu-replay/1": ("gongzhu-replay/2", upgrade_1_to_2),
    "gongzhu-replay/2": ("gongzhu-replay/3", upgrade_2_to_3),
    "gongzhu-replay/3": ("gongzhu-replay/4", upgrade_3_to_4),
    "gongzhu-replay/4": ("gongzhu-replay/5", upgrade_4_to_5),
    "gongzhu-replay/5": ("gongzhu-replay/6", upgrade_5_to_6),
}
"""Each older format, mapped to the next format and the function that converts to it."""


class LogReadError(ValueError):
    """A log that cannot be read: an unknown format, or content that is not a valid log."""


def upgrade(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` in the current format: itself if it already is, else a copy upgraded through
    :data:`UPGRADES` step by step."""
    current = dict(data)
    seen: list[str] = []
    while (log_format := current.get("format")) != FORMAT:
        step = UPGRADES.get(str(log_format))
        if step is None:
            known = ", ".join([FORMAT, *UPGRADES])
            raise LogReadError(f"unknown log format {log_format!r}; this version reads {known}")
        if log_format in seen:
            raise LogReadError(f"the upgrades of {log_format!r} go round in a circle")
        seen.append(str(log_format))
        target, function = step
        current = {**function(copy.deepcopy(current)), "format": target}
    return current


def read_log(data: Mapping[str, Any]) -> MatchLog:
    """The match log in ``data``, a JSON object of any known format.

    Also checks that the log reads back to exactly its JSON (after any upgrade): a field the
    reader derives from others, such as a hand's ``scores`` from its ``seats``, must agree with
    them, so that what a person reads in the file is what was verified.
    """
    current = upgrade(data)
    try:
        log = MatchLog.from_json(current)
    except (KeyError, TypeError, ValueError) as error:
        raise LogReadError(f"not a valid {FORMAT} log: {type(error).__name__}: {error}") from None
    written = log.to_json()
    stored = {key: value for key, value in current.items() if key != "integrity"}
    # The same canonical JSON is the same values of the same types (1, 1.0 and true are
    # written apart): only a log that differs is walked to find where.
    difference = None if encode(stored) == encode(written) else first_difference(stored, written)
    if difference is not None:
        where, found, expected = difference
        raise LogReadError(
            f"{where}: the log says {found!r}, but it reads as {expected!r} (a field that "
            "disagrees with those it derives from, or is not in canonical form)"
        )
    return log


def first_difference(found: Any, expected: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first place where two JSON values differ: its path (``hands/0/result/scores``) and
    both values there; ``None`` when they are equal.

    >>> first_difference({"a": [1, 2]}, {"a": [1, 3]})
    ('a/1', 2, 3)
    """
    if isinstance(found, dict) and isinstance(expected, dict):
        for key in [*expected, *(k for k in found if k not in expected)]:
            inner = first_difference(found.get(key), expected.get(key), f"{path}/{key}")
            if inner is not None:
                return inner
        return None
    if isinstance(found, list) and isinstance(expected, list) and len(found) == len(expected):
        for index, (a, b) in enumerate(zip(found, expected, strict=True)):
            inner = first_difference(a, b, f"{path}/{index}")
            if inner is not None:
                return inner
        return None
    if found == expected and type(found) is type(expected):
        return None
    return path.removeprefix("/") or "(top level)", found, expected
