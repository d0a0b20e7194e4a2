"""Asking a bot a recorded decision again: the ``reask`` command of ``python -m replays``.

When a bot author disputes a decision ("my bot never plays that"), the arena can rebuild the
exact request it sent from the log, check it against the recorded SHA-256, send the same bytes
to the bot again (the SDK's local server, or its URL) and compare the answer with the log.

The comparison is meaningful for bots that decide from the request alone, which is all the
protocol promises them: the observation holds the whole public history of the match. A bot
served by the SDK gets a fresh instance for a match it has not seen, so state a bot kept from
earlier decisions of the match is not there when it is asked again.

It is meaningful only for the bot that played the decision: :func:`reask` first sends the bot
the protocol's ``hello`` and refuses to ask another bot (by the name it answers) a decision of a
seat it did not hold.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass

import requests

from bot_sdk.protocol import (
    AnswerError,
    BotInfo,
    Status,
    body_sha256,
    encode,
    hello_request,
    parse_answer,
    parse_hello_answer,
)
from bot_sdk.signing import Secrets, sign
from referee import AnyMove, Observation
from replays.log import DecisionRecord, MatchLog
from replays.verify import replay, request_body

_MAX_TEXT = 300


class ReaskError(Exception):
    """The decision cannot be asked again: not in the log, never sent, or not reproducible."""


class WrongBotError(ReaskError):
    """The bot at the URL is not to be asked: it did not answer the ``hello``, or it did not
    play the decision's seat."""


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
    bot: BotInfo
    """Who answered: the name and version the bot at the URL gave in its ``hello``."""
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
    served with ``--insecure``), and compare the answer with the log; :class:`ReaskError` when
    the bot at ``url`` (the name its ``hello`` answers) did not play that decision's seat."""
    rebuilt = rebuild(log, hand_number, index)
    post = requests.post if session is None else session.post

    def send(body: bytes) -> requests.Response:
        headers = {"Content-Type": "application/json"}
        if secret is not None:
            headers |= sign(secret, body, int(clock()))
        try:
            return post(url, data=body, headers=headers, timeout=timeout_s)
        except requests.RequestException as error:
            raise ReaskError(f"cannot ask {url}: {error}") from error

    bot = _hello(send(encode(hello_request())), url)
    _check_seat(log, rebuilt.record, bot, url)
    response = send(rebuilt.body)
    return compare(rebuilt, bot, response.status_code, response.content)


def _hello(response: requests.Response, url: str) -> BotInfo:
    """The bot's name and version from its answer to the ``hello``."""
    if response.status_code == 401:
        raise WrongBotError(
            f"the bot at {url} refused the hello's signature (HTTP 401: "
            f"{_text(response.content)}): sign with the secret it checks signatures with "
            "(--secret or GONGZHU_BOT_SECRET; --insecure for a bot served with --insecure)"
        )
    if not 200 <= response.status_code < 300:
        raise WrongBotError(
            f"the bot at {url} answered the hello with HTTP {response.status_code}: "
            f"{_text(response.content)}"
        )
    try:
        return parse_hello_answer(response.content)
    except AnswerError as error:
        raise WrongBotError(f"the bot at {url} answered the hello wrongly: {error}") from None


def _check_seat(log: MatchLog, record: DecisionRecord, bot: BotInfo, url: str) -> None:
    """Refuse to ask ``bot`` a decision of a seat another bot held: its answer would say
    nothing about that decision."""
    seat = next(s for s in log.seats if s.seat == record.seat)
    if seat.name == bot.name:
        return
    own = [str(s.seat) for s in log.seats if s.name == bot.name]
    where = (
        f"it held seat {' and '.join(own)} of this match: re-ask a decision of its own"
        if own
        else f"it did not play in match {log.match_id}"
    )
    raise WrongBotError(
        f"the decision is seat {record.seat}'s, played by {_who(seat.name, seat.version)} "
        f"({seat.bot_id}); the bot at {url} is {_who(bot.name, bot.version)}, so its answer "
        f"says nothing about that decision ({where})"
    )


def _who(name: str, version: str) -> str:
    return f"{name} {version}".strip()


def compare(rebuilt: Rebuilt, bot: BotInfo, http_status: int, answer: bytes) -> Reask:
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
    return Reask(rebuilt, bot, http_status, answer, move, refused, same, verdict)


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
