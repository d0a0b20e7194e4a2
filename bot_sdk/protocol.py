"""The bot protocol, ``gongzhu-bot/1`` and ``gongzhu-bot/2``: every message between the arena
and a bot, in one place.

The arena POSTs one JSON object to the bot's endpoint per message; ``type`` says which:

- ``hello``: the handshake, the same in both versions; it offers the versions the arena speaks
  (``protocols``) and the bot answers ``{"protocol", "name", "version"}``, naming the one it
  chooses for the match.
- ``decision``: expose, pass or play; the bot answers ``{"expose": [...]}``, ``{"pass": [...]}``
  or ``{"card": "QS"}``.
- ``hand_end`` and ``match_end``: notifications; any 2xx answer, the body is ignored.

The versions differ in what a request carries of the match's past: in ``gongzhu-bot/1`` every
observation lists every earlier hand's result (``results``), so requests grow with the match;
in ``gongzhu-bot/2`` an observation is the current hand with the running totals, and a decision
carries at most the hand just finished (``last_result``), so requests stay the same size.

Both sides build, encode and check messages with the functions here, so the arena's workers and
the SDK cannot drift apart. docs/PROTOCOL.md is the reference a bot author reads.

>>> from referee import Game
>>> obs = Game(seed=1).observation(3)
>>> request = decision_request(obs, match_id="m1", decision_id="m1:1:0",
...                            time_limit_ms=1000, time_bank_ms=30000)
>>> request["kind"], request["trick_number"], request["observation"]["decision"]["choices"]
('expose', 0, ['JD', 'AH'])
>>> parse_answer(DecisionKind.EXPOSE, b'{"expose": ["AH"]}', obs)
Expose(seat=3, cards=CardSet('AH'))
>>> parse_answer(DecisionKind.EXPOSE, b'{"card": "AH"}', obs)
Traceback (most recent call last):
...
bot_sdk.protocol.WrongKindError: this is an expose decision: answer {"expose": [...]}, not "card"
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Final, NamedTuple, TypeVar

from bot_sdk.fragments import json_string, observation_json, result_json
from referee import (
    DECK,
    PLAYS,
    AnyMove,
    Card,
    CardSet,
    Decision,
    DecisionKind,
    Expose,
    HandResult,
    Observation,
    Outcome,
    Pass,
    Phase,
    Play,
    Refusal,
    Rules,
    card_name,
    observed_play_refusal,
)


class ProtocolVersion(enum.StrEnum):
    """A version of the bot protocol; a seat speaks the one its bot chose in the ``hello``."""

    V1 = "gongzhu-bot/1"
    """Every observation carries every earlier hand's result (``results``)."""
    V2 = "gongzhu-bot/2"
    """Observations carry the current hand only; a decision at most the last hand's result."""


PROTOCOL = ProtocolVersion.V1
"""The first version: the one every bot written before versions were offered answers in its
``hello``, and the one a seat is spoken to in when it chose none (its ``hello`` failed). Every
``hello`` is written in it, so that every bot can read it."""
SPOKEN: tuple[ProtocolVersion, ...] = tuple(ProtocolVersion)
"""The versions this code speaks, offered in every ``hello``."""
DEFAULT_TIME_LIMIT_MS = 1000
"""The arena's default time for one decision."""
DEFAULT_TIME_BANK_MS = 30_000
"""The arena's default time bank for one match."""
DEFAULT_FAULT_LIMIT = 5
"""Faults in one match after which the arena forfeits the bot's match."""
MAX_NOTE = 200
"""An answer's ``note`` is kept to this many characters; the rest is cut off."""
FALLBACK_NOTE = "fallback: "
"""How a note starts when the answer is the bot's own fallback, not its choice (the SDK's, after
an exception, an illegal move or running out of time): the arena counts those answers."""

Message = dict[str, Any]


class MessageType(enum.StrEnum):
    HELLO = "hello"
    DECISION = "decision"
    HAND_END = "hand_end"
    MATCH_END = "match_end"


class Status(enum.StrEnum):
    """How the arena records a decision: answered by the bot (``ok``), a fault, or played for a
    seat that had forfeited. A fault's status is its one name: in the match log, on the pages and
    in docs/PROTOCOL.md's fault table."""

    OK = "ok"
    TIMEOUT = "timeout"
    """No answer within the time allowed (the decision's limit plus what was left in the bank)."""
    ERROR = "error"
    """The bot could not be reached or answered with an HTTP error."""
    INVALID = "invalid"
    """The answer was not a well-formed answer to this decision (bad JSON, wrong kind, …)."""
    ILLEGAL = "illegal"
    """A well-formed answer the rules forbid."""
    FORFEIT_AUTOPLAY = "forfeit-autoplay"
    """The bot had forfeited the match; the arena played for it without asking."""

    @property
    def is_fault(self) -> bool:
        """A fault of the seat (counted towards its forfeit): not ok, and not played for it."""
        return self not in (Status.OK, Status.FORFEIT_AUTOPLAY)


class Fault(enum.StrEnum):
    """The SDK's finer name of a fault (its error classes carry one); ``status`` is the fault's
    one public name, the status the arena records it by."""

    TIMEOUT = "timeout"
    CONNECTION = "connection"
    HTTP_STATUS = "http_status"
    MALFORMED = "malformed"
    WRONG_KIND = "wrong_kind"
    ILLEGAL = "illegal"

    @property
    def status(self) -> Status:
        return _STATUS_OF_FAULT[self]


_STATUS_OF_FAULT: Mapping[Fault, Status] = {
    Fault.TIMEOUT: Status.TIMEOUT,
    Fault.CONNECTION: Status.ERROR,
    Fault.HTTP_STATUS: Status.ERROR,
    Fault.MALFORMED: Status.INVALID,
    Fault.WRONG_KIND: Status.INVALID,
    Fault.ILLEGAL: Status.ILLEGAL,
}


ANSWER_FIELDS: Mapping[DecisionKind, str] = {
    DecisionKind.PLAY: "card",
    DecisionKind.EXPOSE: "expose",
    DecisionKind.PASS: "pass",
}
"""The one field of the answer to each kind of decision."""

_EXAMPLES = {
    DecisionKind.PLAY: '{"card": "QS"}',
    DecisionKind.EXPOSE: '{"expose": [...]}',
    DecisionKind.PASS: '{"pass": [...]}',
}
_CARDS: Mapping[str, Card] = {card_name(c): c for c in DECK}
_MAX_NAME = 64


# -- errors ------------------------------------------------------------------------------------


class AnswerError(ValueError):
    """An answer that does not count; ``fault.status`` is how the arena records it."""

    fault: ClassVar[Fault]
    """A class attribute (not one of each instance's, which the compiled build's exceptions
    would not have)."""


class MalformedAnswerError(AnswerError):
    """Not JSON, not an object, a missing or mistyped field, an unknown card name."""

    fault = Fault.MALFORMED


class WrongKindError(AnswerError):
    """A well-formed answer to another kind of decision (``{"card"}`` to an expose)."""

    fault = Fault.WRONG_KIND


class IllegalAnswerError(AnswerError):
    """A well-formed answer that the rules forbid now."""

    fault = Fault.ILLEGAL


# -- encoding ----------------------------------------------------------------------------------


def encode(message: Mapping[str, Any]) -> bytes:
    """Canonical JSON: sorted keys, no spaces, UTF-8. The same message is always the same bytes,
    so the hash of a body can be recomputed later from a match log."""
    return json.dumps(
        message, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def body_sha256(body: bytes) -> str:
    """The hex SHA-256 of a message body: what a match log records of each decision request the
    arena sent (``request_sha256``), for anyone to check against the rebuilt request."""
    return hashlib.sha256(body).hexdigest()


def decode(body: bytes) -> Any:
    """Parse a JSON body (``ValueError`` if it is not UTF-8 JSON; NaN and Infinity are refused).
    ``json.loads`` of the text, with one decoder made once rather than one per call."""
    text = body.decode("utf-8")
    if text.startswith("\ufeff"):
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return _DECODER.decode(text)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


# -- requests: the arena builds them ------------------------------------------------------------


def hello_request(
    *,
    arena: str = "gongzhu-arena",
    match_id: str | None = None,
    seat: int | None = None,
    rules: Rules | None = None,
    deal_commitment: str | None = None,
    time_limit_ms: int = DEFAULT_TIME_LIMIT_MS,
    time_bank_ms: int = DEFAULT_TIME_BANK_MS,
    protocols: tuple[ProtocolVersion, ...] = SPOKEN,
) -> Message:
    """The handshake. Before a match it names the match, the seat, the rules and the
    commitment to the deals' secret; when the arena only checks an endpoint (at registration)
    those are ``None``. It is written in :data:`PROTOCOL`, whatever the versions it offers in
    ``protocols``: a bot that knows no other answers in that one."""
    return {
        "protocol": PROTOCOL.value,
        "protocols": [p.value for p in protocols],
        "type": MessageType.HELLO.value,
        "arena": arena,
        "match_id": match_id,
        "seat": seat,
        "rules": None if rules is None else rules.to_json(),
        "deal_commitment": deal_commitment,
        "time_limit_ms": time_limit_ms,
        "time_bank_ms": time_bank_ms,
    }


def decision_id(match_id: str, hand_number: int, seq: int) -> str:
    """The id of a match's ``seq``-th decision in a hand; a retry of a decision reuses its id."""
    return f"{match_id}:{hand_number}:{seq}"


def trick_number(obs: Observation) -> int:
    """The trick being played, 1 to 13; 0 before play (passing, exposing)."""
    return len(obs.tricks) + 1 if obs.phase is Phase.PLAYING else 0


def decision_request(
    obs: Observation,
    *,
    match_id: str,
    decision_id: str,
    time_limit_ms: int,
    time_bank_ms: int,
    protocol: ProtocolVersion = PROTOCOL,
) -> Message:
    """Ask the seat of ``obs`` for its pending decision; the legal choices are in
    ``observation.decision``. In ``gongzhu-bot/2`` the observation is the current hand's
    (:func:`observation_message`) and ``last_result`` the hand before it
    (:func:`last_result`)."""
    decision = pending_decision(obs)
    message: Message = {
        "protocol": protocol.value,
        "type": MessageType.DECISION.value,
        "match_id": match_id,
        "hand_number": obs.hand_number,
        "trick_number": trick_number(obs),
        "decision_id": decision_id,
        "seat": obs.seat,
        "kind": decision.kind.value,
        "time_limit_ms": time_limit_ms,
        "time_bank_ms": time_bank_ms,
        "observation": observation_message(obs, protocol),
    }
    if protocol is ProtocolVersion.V2:
        result = last_result(obs)
        message["last_result"] = None if result is None else result.to_json()
    return message


def observation_message(obs: Observation, protocol: ProtocolVersion) -> Message:
    """``obs`` as a request carries it: the whole of it in ``gongzhu-bot/1``; in
    ``gongzhu-bot/2`` without ``results``, the earlier hands (their running totals are in
    ``totals`` and ``standing``)."""
    view = obs.to_json()
    if protocol is ProtocolVersion.V2:
        del view["results"]
    return view


def last_result(obs: Observation) -> HandResult | None:
    """What a ``gongzhu-bot/2`` decision carries of the match's past: the hand just finished,
    until the current hand's first trick is complete (the seat's pass, exposure and first
    play); else nothing. Every seat is asked at least once in that stretch, so every hand's
    result reaches it in a decision as well as in ``hand_end``."""
    if obs.tricks or not obs.results:
        return None
    return obs.results[-1]


def decision_body(
    obs: Observation,
    *,
    match_id: str,
    decision_id: str,
    time_limit_ms: int,
    time_bank_ms: int,
    protocol: ProtocolVersion = PROTOCOL,
) -> bytes:
    """``encode(decision_request(...))``, the same bytes, written from fragments: the message's
    keys in their sorted order around the observation's canonical JSON
    (:func:`bot_sdk.fragments.observation_json`), which reuses what a match's requests share
    rather than encoding it again for every request."""
    kind = pending_decision(obs).kind._value_
    if protocol is ProtocolVersion.V1:
        last, observation = "", observation_json(obs)
    else:
        result = last_result(obs)
        last = f'"last_result":{"null" if result is None else result_json(result)},'
        observation = observation_json(obs, results=False)
    return (
        f'{{"decision_id":{json_string(decision_id)},"hand_number":{obs.hand_number},'
        f'"kind":"{kind}",{last}"match_id":{json_string(match_id)},'
        f'"observation":{observation},"protocol":"{protocol._value_}","seat":{obs.seat},'
        f'"time_bank_ms":{time_bank_ms},"time_limit_ms":{time_limit_ms},'
        f'"trick_number":{trick_number(obs)},"type":"decision"}}'
    ).encode()


_Written = TypeVar("_Written")


@dataclass(frozen=True)
class DecisionRequest:
    """One decision request, built once by the arena: what is asked, and the message, its
    canonical body and that body's SHA-256, each made when first read and kept. The body is what
    a bot over HTTP is sent; the SHA-256 is what the match log records of it.

    The kept values are fields of their own rather than ``functools.cached_property``, which
    Python 3.11 makes under one lock for all instances (threads playing matches at once would
    wait on each other), and which needs an instance ``__dict__`` that the compiled build's
    classes do not have. Two threads making a value at once make the same."""

    observation: Observation
    match_id: str
    decision_id: str
    time_limit_ms: int
    time_bank_ms: int
    protocol: ProtocolVersion = PROTOCOL
    """The version the seat speaks: the request is written in it."""
    _message: Message | None = field(init=False, repr=False, compare=False)
    _body: bytes | None = field(init=False, repr=False, compare=False)
    _sha256: str | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Not made yet. (Set here, not as the fields' default: the compiled build's dataclass
        # leaves a field with init=False unset.)
        for kept in ("_message", "_body", "_sha256"):
            object.__setattr__(self, kept, None)

    def _written(self, write: Callable[..., _Written]) -> _Written:
        """``write`` (:func:`decision_request` or :func:`decision_body`) of this request."""
        return write(
            self.observation,
            match_id=self.match_id,
            decision_id=self.decision_id,
            time_limit_ms=self.time_limit_ms,
            time_bank_ms=self.time_bank_ms,
            protocol=self.protocol,
        )

    @property
    def message(self) -> Message:
        message = self._message
        if message is None:
            message = self._written(decision_request)
            object.__setattr__(self, "_message", message)
        return message

    @property
    def body(self) -> bytes:
        body = self._body
        if body is None:
            body = self._written(decision_body)
            object.__setattr__(self, "_body", body)
        return body

    @property
    def sha256(self) -> str:
        sha256 = self._sha256
        if sha256 is None:
            sha256 = body_sha256(self.body)
            object.__setattr__(self, "_sha256", sha256)
        return sha256


def hand_end_notice(
    result: HandResult,
    observation: Observation,
    *,
    match_id: str,
    protocol: ProtocolVersion = PROTOCOL,
) -> Message:
    """A hand was scored: the result and the seat's view of the hand as it ended."""
    return {
        "protocol": protocol.value,
        "type": MessageType.HAND_END.value,
        "match_id": match_id,
        "hand_number": result.hand_number,
        "seat": observation.seat,
        "result": result.to_json(),
        "observation": observation_message(observation, protocol),
    }


def hand_end_body(
    result: HandResult,
    observation: Observation,
    *,
    match_id: str,
    protocol: ProtocolVersion = PROTOCOL,
) -> bytes:
    """``encode(hand_end_notice(...))``, the same bytes, written from fragments as
    :func:`decision_body` is."""
    view = observation_json(observation, results=protocol is ProtocolVersion.V1)
    return (
        f'{{"hand_number":{result.hand_number},"match_id":{json_string(match_id)},'
        f'"observation":{view},"protocol":"{protocol._value_}","result":{result_json(result)},'
        f'"seat":{observation.seat},"type":"hand_end"}}'
    ).encode()


def match_end_notice(
    outcome: Outcome, *, match_id: str, seat: int, protocol: ProtocolVersion = PROTOCOL
) -> Message:
    """The match is over (also sent after a forfeit: the outcome is the auto-played match's)."""
    return {
        "protocol": protocol.value,
        "type": MessageType.MATCH_END.value,
        "match_id": match_id,
        "seat": seat,
        "outcome": outcome.to_json(),
    }


# -- requests: the bot reads them (after schema validation) -------------------------------------


def read_protocol(message: Mapping[str, Any]) -> ProtocolVersion:
    """The version a request is written in (one of :data:`SPOKEN`, as validated)."""
    return ProtocolVersion(message["protocol"])


def read_decision(message: Mapping[str, Any], earlier: tuple[HandResult, ...] = ()) -> Observation:
    """The observation of a decision request; for ``gongzhu-bot/2``, with ``earlier`` (the
    results of the match's earlier hands, which it does not carry) as its ``results``."""
    return _observation(message, earlier)


def read_hand_end(
    message: Mapping[str, Any], earlier: tuple[HandResult, ...] = ()
) -> tuple[HandResult, Observation]:
    """The result and the observation of a ``hand_end``; ``earlier`` as for
    :func:`read_decision`."""
    return HandResult.from_json(message["result"]), _observation(message, earlier)


def read_last_result(message: Mapping[str, Any]) -> HandResult | None:
    """A ``gongzhu-bot/2`` decision's ``last_result`` (None in ``gongzhu-bot/1``)."""
    data = message.get("last_result")
    return None if data is None else HandResult.from_json(data)


def _observation(message: Mapping[str, Any], earlier: tuple[HandResult, ...]) -> Observation:
    obs = Observation.from_json(
        message["observation"]
        if read_protocol(message) is ProtocolVersion.V1
        else {**message["observation"], "results": []}
    )
    return replace(obs, results=earlier) if earlier else obs


def read_match_end(message: Mapping[str, Any]) -> Outcome:
    return Outcome.from_json(message["outcome"])


# -- answers --------------------------------------------------------------------------------------


class BotInfo(NamedTuple):
    """What a bot says about itself in the handshake: its name and version, and the protocol
    version it speaks in the match."""

    name: str
    version: str
    protocol: ProtocolVersion = PROTOCOL


def hello_answer(name: str, version: str, protocol: ProtocolVersion = PROTOCOL) -> Message:
    return {"protocol": protocol.value, "name": name, "version": version}


def choose_protocol(
    hello: Mapping[str, Any], speaks: tuple[ProtocolVersion, ...] = SPOKEN
) -> ProtocolVersion:
    """The version a bot that ``speaks`` those answers to ``hello``: the latest the arena
    offers, :data:`PROTOCOL` when it offers none (an arena that predates versions).

    >>> choose_protocol({"protocols": ["gongzhu-bot/1", "gongzhu-bot/2"]}).value
    'gongzhu-bot/2'
    >>> choose_protocol({}).value
    'gongzhu-bot/1'
    """
    offered = hello.get("protocols") or [PROTOCOL.value]
    chosen = [p for p in speaks if p.value in offered]
    return max(chosen, key=SPOKEN.index) if chosen else PROTOCOL


def parse_hello_answer(body: bytes, offered: tuple[ProtocolVersion, ...] = SPOKEN) -> BotInfo:
    """The bot's name, version and chosen protocol version (one of ``offered``) from its
    handshake answer, or :class:`MalformedAnswerError` saying what is wrong and what to answer.

    >>> parse_hello_answer(b'{"name": "x", "version": "1"}')
    Traceback (most recent call last):
    ...
    bot_sdk.protocol.MalformedAnswerError: the hello answer has no "protocol": the arena speaks \
gongzhu-bot/1 or gongzhu-bot/2; answer the version the bot speaks in this match with its name \
and version, e.g. {"protocol": "gongzhu-bot/2", "name": "my-bot", "version": "1.0"}
    """
    example = json.dumps(hello_answer("my-bot", "1.0", max(offered, key=SPOKEN.index)))
    data = _object(body, example)
    spoken = " or ".join(p.value for p in offered)
    protocol = data.get("protocol")
    if protocol is None:
        raise MalformedAnswerError(
            f'the hello answer has no "protocol": the arena speaks {spoken}; answer the version '
            f"the bot speaks in this match with its name and version, e.g. {example}"
        )
    if protocol not in [p.value for p in offered]:
        raise MalformedAnswerError(
            f"the arena speaks {spoken}, the bot answered protocol {_shown(protocol)}: answer "
            f"a version the hello offers, e.g. {example}"
        )
    return BotInfo(
        _label(data, "name", example), _label(data, "version", example), ProtocolVersion(protocol)
    )


def _label(data: dict[str, Any], field: str, example: str) -> str:
    value = data.get(field)
    if value is None:
        raise MalformedAnswerError(f'the hello answer has no "{field}": answer e.g. {example}')
    if not isinstance(value, str) or not 0 < len(value) <= _MAX_NAME:
        raise MalformedAnswerError(
            f'"{field}" must be a string of 1 to {_MAX_NAME} characters, not {_shown(value)}'
        )
    return value


def _shown(value: Any) -> str:
    """A value a bot sent, as the JSON it sent, cut short for a message."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "…"


_SHOWN = 80


def answer_of(move: AnyMove) -> Message:
    """The answer a bot sends for a move: ``{"card": "QS"}``, ``{"expose": [...]}``, ``{"pass":
    [...]}``."""
    if isinstance(move, Play):
        return {"card": card_name(move.card)}
    if isinstance(move, Expose):
        return {"expose": move.cards.names()}
    return {"pass": move.cards.names()}


CANONICAL_PLAYS: Final[Mapping[str, Card]] = {
    encode(answer_of(PLAYS[0][card])).decode(): card for card in DECK
}
"""Each card by the answer that plays it in canonical form, without a note (``{"card":"QS"}``):
what most bots send, and what the stored form of a log puts back (:mod:`replays.packing`)."""


def read_note(body: bytes) -> str | None:
    """The answer's optional ``note``: what the bot says about its decision, cut to
    :data:`MAX_NOTE` characters. ``None`` when there is none, it is not a string, or the body is
    not a JSON object: a note never makes an answer fail.

    >>> read_note(b'{"card": "QS", "note": "ducking the pig"}')
    'ducking the pig'
    >>> len(read_note(encode({"card": "QS", "note": "x" * 500})) or "")
    200
    """
    try:
        data = decode(body)
    except ValueError:
        return None
    return note_of(data)


def note_of(data: Any) -> str | None:
    """:func:`read_note` of an answer already decoded (``data``), for a reader that decodes an
    answer once for its note and its move (:func:`answer_move`)."""
    note = data.get("note") if isinstance(data, dict) else None
    return note[:MAX_NOTE] if isinstance(note, str) and note else None


def is_fallback_note(note: str | None) -> bool:
    """Whether ``note`` says the answer was the bot's own fallback (:data:`FALLBACK_NOTE`)."""
    return note is not None and note.startswith(FALLBACK_NOTE)


def fallback_move(obs: Observation) -> AnyMove:
    """What the arena plays for a seat whose answer did not count: the lowest legal card, no
    exposure, the highest cards to pass."""
    decision = pending_decision(obs)
    if decision.kind is DecisionKind.PLAY:
        return Play(obs.seat, decision.choices.lowest())
    if decision.kind is DecisionKind.EXPOSE:
        return Expose(obs.seat, CardSet())
    highest = list(reversed(decision.choices))[: decision.count or 0]
    return Pass(obs.seat, CardSet.of(highest))


def parse_answer(kind: DecisionKind, body: bytes, obs: Observation) -> AnyMove:
    """The move a bot's answer body makes for the pending decision of ``obs``.

    Raises :class:`MalformedAnswerError`, :class:`WrongKindError` or
    :class:`IllegalAnswerError` with a message the bot's author can act on. The referee stays
    the final judge of the move.
    """
    decision = _decision_of_kind(kind, obs)
    return _move(kind, decision, answer_object(kind, body), obs)


def answer_object(kind: DecisionKind, body: bytes) -> dict[str, Any]:
    """An answer body to a ``kind`` decision decoded, for :func:`answer_move` and
    :func:`note_of`: a JSON object, or :class:`MalformedAnswerError`."""
    return _object(body, _EXAMPLES[kind])


def answer_move(kind: DecisionKind, data: Mapping[str, Any], obs: Observation) -> AnyMove:
    """:func:`parse_answer` of an answer already decoded to a JSON object (``data``)."""
    return _move(kind, _decision_of_kind(kind, obs), data, obs)


def _move(
    kind: DecisionKind, decision: Decision, data: Mapping[str, Any], obs: Observation
) -> AnyMove:
    field = ANSWER_FIELDS[kind]
    if field not in data:
        others = [f for f in ANSWER_FIELDS.values() if f in data]
        if others:
            raise WrongKindError(
                f"this is {_article(kind)} {kind.value} decision: answer {_EXAMPLES[kind]}, "
                f'not "{others[0]}"'
            )
        raise MalformedAnswerError(f'the answer has no "{field}" field: answer {_EXAMPLES[kind]}')
    value = data[field]
    if kind is DecisionKind.PLAY:
        card = _card(value, field)
        _check_play(card, decision, obs)
        return PLAYS[obs.seat][card]
    cards = _cards(value, field)
    if kind is DecisionKind.EXPOSE:
        _check_choices(cards, decision, "expose", "you may expose only")
        return Expose(obs.seat, cards)
    _check_choices(cards, decision, "pass", "you may pass only cards of your hand:")
    if len(cards) != decision.count:
        raise IllegalAnswerError(f"pass exactly {decision.count} cards, not {len(cards)}")
    return Pass(obs.seat, cards)


def _decision_of_kind(kind: DecisionKind, obs: Observation) -> Decision:
    decision = pending_decision(obs)
    if decision.kind is not kind:
        raise ValueError(
            f"seat {obs.seat} has {_article(decision.kind)} {decision.kind.value} decision, "
            f"not {kind.value}"
        )
    return decision


def pending_decision(obs: Observation) -> Decision:
    if obs.decision is None:
        raise ValueError(f"seat {obs.seat} has no decision pending")
    return obs.decision


def _article(kind: DecisionKind) -> str:
    return "an" if kind is DecisionKind.EXPOSE else "a"


def _object(body: bytes, example: str) -> dict[str, Any]:
    try:
        data = decode(body)
    except ValueError as exc:
        raise MalformedAnswerError(
            f"the answer is not UTF-8 JSON ({exc}): answer {example}"
        ) from None
    if not isinstance(data, dict):
        raise MalformedAnswerError(
            f"the answer must be a JSON object such as {example}, not {type(data).__name__}"
        )
    return data


def _card(value: Any, field: str) -> Card:
    if not isinstance(value, str):
        raise MalformedAnswerError(f'"{field}" must be a card name such as "QS", not {value!r}')
    card = _CARDS.get(value)
    if card is None:
        raise MalformedAnswerError(
            f"{value!r} is not a card name: write rank then suit in capitals, ranks "
            '23456789TJQKA, suits CDHS (e.g. "QS", "TC")'
        )
    return card


def _cards(value: Any, field: str) -> CardSet:
    if not isinstance(value, list):
        raise MalformedAnswerError(f'"{field}" must be a list of card names, not {value!r}')
    mask = 0
    for item in value:
        bit = 1 << _card(item, field)
        if mask & bit:
            raise MalformedAnswerError(f'"{field}" lists {item} twice')
        mask |= bit
    return CardSet(mask)


def _check_play(card: Card, decision: Decision, obs: Observation) -> None:
    """Refuse ``card`` for the referee's reason, worded for the bot's author."""
    reason = observed_play_refusal(obs, card)
    if reason is None:
        return
    name = card_name(card)
    legal = f"your legal cards: {decision.choices}"
    if reason.code is Refusal.NOT_HELD:
        raise IllegalAnswerError(f"you do not hold {name}; {legal}")
    if reason.code is Refusal.MUST_FOLLOW_SUIT:
        assert reason.suit is not None, "a suit to follow"
        raise IllegalAnswerError(f"{name} does not follow {reason.suit.plural}; {legal}")
    raise IllegalAnswerError(f"{name} may not be played now (exposure or lead rules); {legal}")


def _check_choices(cards: CardSet, decision: Decision, verb: str, only: str) -> None:
    extra = cards - decision.choices
    if extra:
        raise IllegalAnswerError(
            f"you may not {verb} {extra}: {only} {decision.choices or 'nothing'}"
        )
