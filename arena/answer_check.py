"""Whether a faulted decision's recorded answer could stand (docs/DISPUTES.md, "Could the
answer stand?"): the evidence report's verdict on the two facts striking a fault would rest on,
the recorded answer legal and received in time.

**Legal.** The recorded answer is parsed as the arena parses every answer
(:func:`bot_sdk.protocol.parse_answer`) against the seat's observation at that decision, rebuilt
by the referee from the log: a card it holds and may play, a legal exposure or pass.

**In time.** The arena's own offsets (:class:`replays.log.Timing`) give the time from the
request's last byte out to the answer's last byte in; one network round trip of it is the
network's, not the bot's, and the arena measured that round trip once per match, at the seat's
``hello`` (its last byte out to its answer's last byte in). The answer was in time when

    (received_us − sent_us) − (hello.received_us − hello.sent_us) ≤ allowed_ms × 1000

where ``allowed_ms`` is the decision's limit plus what was left in the seat's bank then. A
seat with no measured hello is granted no round trip (the answer's own offsets decide alone).

>>> rtt_us(Timing(sent_us=1_000, received_us=4_000))
3000
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot_sdk.protocol import Status, parse_answer
from referee import DecisionKind, Observation
from replays.log import DecisionRecord, Timing


@dataclass(frozen=True)
class AnswerCheck:
    """The verdict on one decision's recorded answer."""

    legal: bool
    in_time: bool | None
    """None where the timing was not recorded (nothing to judge it by)."""
    bot_us: int | None
    """The answer's time less the network's round trip (the rule above)."""
    network_us: int
    why: str
    """Why the answer could not stand, or that it could."""

    @property
    def could_stand(self) -> bool:
        return self.legal and self.in_time is True

    def to_json(self) -> dict[str, Any]:
        return {
            "could_stand": self.could_stand,
            "legal": self.legal,
            "in_time": self.in_time,
            "bot_us": self.bot_us,
            "network_us": self.network_us,
            "why": self.why,
        }


def rtt_us(hello: Timing | None) -> int:
    """The round trip measured at the seat's hello, in microseconds (0 when not measured)."""
    if hello is None or hello.sent_us is None or hello.received_us is None:
        return 0
    return max(0, hello.received_us - hello.sent_us)


def check(record: DecisionRecord, obs: Observation, hello: Timing | None) -> AnswerCheck:
    """The verdict on ``record``'s answer, ``obs`` the seat's observation at that decision and
    ``hello`` the timing of the seat's hello."""
    network = rtt_us(hello)
    if record.status is Status.OK:
        return AnswerCheck(True, True, None, network, "no fault: the answer was applied")
    if record.status is Status.FORFEIT_AUTOPLAY or record.timing is None:
        unasked = record.status is Status.FORFEIT_AUTOPLAY
        reason = "the seat was not asked (it had forfeited)" if unasked else "no timing recorded"
        return AnswerCheck(False, None, None, network, reason)
    timing = record.timing
    if record.answer is None or timing.sent_us is None or timing.received_us is None:
        return AnswerCheck(False, None, None, network, "no complete answer was received")
    legal, why = _legal(record.kind, record.answer, obs)
    allowed_us = ((record.time_limit_ms or 0) + (record.time_bank_ms or 0)) * 1000
    bot = timing.received_us - timing.sent_us - network
    in_time = bot <= allowed_us
    if why is None and not in_time:
        why = (
            f"late: {bot} µs after the request, less the {network} µs round trip, is beyond "
            f"the {allowed_us // 1000} ms allowed"
        )
    return AnswerCheck(legal, in_time, bot, network, why or "legal, and in time")


def _legal(kind: DecisionKind, answer: str, obs: Observation) -> tuple[bool, str | None]:
    """Whether ``answer`` is a legal answer at ``obs`` (else why not)."""
    try:
        parse_answer(kind, answer.encode("utf-8"), obs)
    except ValueError as error:  # the protocol's AnswerError, a wrong kind
        return False, f"the recorded answer is not a legal one: {error}"
    return True, None
