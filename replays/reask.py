"""Asking a bot a recorded decision again: the ``reask`` command of ``python -m replays``.

When a bot author disputes a decision ("my bot never plays that"), the arena can rebuild the
exact request it sent from the log, check it against the recorded SHA-256, send the same bytes
to the bot again (the SDK's local server, or its URL) and compare the answer with the log.

The comparison is meaningful for bots that decide from the request alone, which is all the
protocol promises them: the observation holds the whole public history of the match. A bot
served by the SDK gets a fresh instance for a match it has not seen, so state a bot kept from
earlier decisions of the match is not there when it is asked again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass

import requests

from bot_sdk.protocol import AnswerError, Status, body_sha256, parse_answer
from bot_sdk.signing import Secrets, sign
from referee import AnyMove, Observation
from replays.log import DecisionRecord, MatchLog
from replays.verify import replay, request_body

_MAX_TEXT = 300


class ReaskError(Exception):
    """The decision cannot be asked again: not in the log, never sent, or not reproducible."""


@dataclass(frozen=True)
class Rebuilt:
    """A recorded decision and the exact request body the arena sent for it."""

    record: DecisionRecord
    observation: Observation
    body: bytes
    hash_checked: bool
    """Whether the log recorded the request's SHA-256 (and the rebuilt body matches it)."""


@dataclass(frozen=True)
class Reask:
    """What the bot answered this time, against the log."""

    rebuilt: Rebuilt
    http_status: int
    answer: bytes
    move: AnyMove | None
    """The answer as a move, or None when it does not count (see ``refused``)."""
    refused: str | None
    same: bool
    verdict: str


def rebuild(log: MatchLog, hand_number: int, index: int) -> Rebuilt:
    """The request body of decision ``index`` (from 0) of hand ``hand_number`` (from 1)."""
    if not 1 <= hand_number <= len(log.hands):
        raise ReaskError(f"the match has hands 1 to {len(log.hands)}, not {hand_number}")
    count = len(log.hands[hand_number - 1].decisions)
    if not 0 <= index < count:
        raise ReaskError(f"hand {hand_number} has decisions 0 to {count - 1}, not {index}")
    record, obs = next(
        (record, obs)
        for hand, i, record, obs in replay(log)
        if hand.hand_number == hand_number and i == index
    )
    if record.status is Status.FORFEIT_AUTOPLAY:
        raise ReaskError(f"seat {record.seat} had forfeited: the arena played it without asking")
    body = request_body(log, record, obs)
    if record.request_sha256 is not None:
        found = body_sha256(body)
        if found != record.request_sha256:
            raise ReaskError(
                f"the rebuilt request's SHA-256 is {found}, the log recorded "
                f"{record.request_sha256}: the log does not reproduce what was sent"
            )
    return Rebuilt(record, obs, body, record.request_sha256 is not None)


def reask(
    log: MatchLog,
    hand_number: int,
    index: int,
    url: str,
    secret: Secrets | None,
    *,
    timeout_s: float = 10.0,
    session: requests.Session | None = None,
    clock: Callable[[], float] = time.time,
) -> Reask:
    """Send the recorded request again, signed now with ``secret`` (None: unsigned, for a bot
    served with ``--insecure``), and compare the answer with the log."""
    rebuilt = rebuild(log, hand_number, index)
    headers = {"Content-Type": "application/json"}
    if secret is not None:
        headers |= sign(secret, rebuilt.body, int(clock()))
    post = requests.post if session is None else session.post
    try:
        response = post(url, data=rebuilt.body, headers=headers, timeout=timeout_s)
    except requests.RequestException as error:
        raise ReaskError(f"cannot ask {url}: {error}") from error
    return compare(rebuilt, response.status_code, response.content)


def compare(rebuilt: Rebuilt, http_status: int, answer: bytes) -> Reask:
    """Judge an answer to a rebuilt request as the arena would, and compare it with the log:
    after an ok decision, the same move; after a refused answer, the same answer."""
    record, obs = rebuilt.record, rebuilt.observation
    move: AnyMove | None = None
    refused: str | None = None
    if not 200 <= http_status < 300:
        refused = f"HTTP {http_status}"
    else:
        try:
            move = parse_answer(record.kind, answer, obs)
        except AnswerError as error:
            refused = f"{error.fault.status.value}: {error}"
    logged = _logged(record)
    if record.status is Status.OK:
        same = move == record.applied
    elif record.answer is not None:
        same = refused is not None and _same_json(record.answer, answer)
    else:
        same = False
    now = _text(answer) if refused is None else f"{_text(answer)} ({refused})"
    verdict = f"{'same' if same else 'different'}: the log has {logged}; the bot now answers {now}"
    return Reask(rebuilt, http_status, answer, move, refused, same, verdict)


def _logged(record: DecisionRecord) -> str:
    applied = record.applied.to_json()
    del applied["seat"]
    text = json.dumps(applied)
    if record.status is Status.OK:
        return f"{text} (ok)"
    answered = "no answer" if record.answer is None else f"answer {record.answer}"
    return f"{answered} ({record.status.value}: {record.fault}), then the fallback {text}"


def _same_json(recorded: str, answer: bytes) -> bool:
    """Two answers are the same if they are the same JSON (spacing aside), or the same text."""
    try:
        return bool(json.loads(recorded) == json.loads(answer))
    except ValueError:
        return recorded.encode() == answer


def _text(answer: bytes) -> str:
    return answer[:_MAX_TEXT].decode("utf-8", "replace") or "(an empty body)"
