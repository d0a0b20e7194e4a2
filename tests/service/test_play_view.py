"""The Play page words the referee's refusals for the person from the reason's code and
parameters: every code has its words, and they read as the referee's message addressed to
the person, as the page wrote them when it rewrote the English."""

import re

import pytest

from arena.human_view import FOR_YOU, for_you
from referee import Refusal
from tests.referee.referee_support import REFUSAL_SAMPLES

CORRECTED = {
    Refusal.NO_DECISION: "You have no expose decision pending",
    Refusal.NOT_YOUR_TURN: "It is seat {turn}'s turn to {kind.value}, not yours",
}
"""Where rewriting the English went wrong ("you has", "not you's"): never shown to the person,
whose moves the table checks for their turn first."""


def former_for_you(reason: str, seat: object) -> str:
    """How the page addressed the referee's English to the person, by rewriting it."""
    text = re.sub(rf"\bseat {seat} holds\b", "you hold", reason)
    text = re.sub(rf"\bseat {seat} does\b", "you do", text)
    text = re.sub(rf"\bseat {seat}\b", "you", text)
    return text[:1].upper() + text[1:]


def test_every_code_has_words_for_the_person():
    assert set(FOR_YOU) == set(Refusal)


@pytest.mark.parametrize(("reason", "text"), REFUSAL_SAMPLES, ids=lambda v: getattr(v, "code", ""))
def test_the_refusal_is_the_referees_message_addressed_to_the_person(reason, text):
    if reason.code in CORRECTED:
        expected = CORRECTED[reason.code].format(**reason.parameters())
    else:
        expected = former_for_you(text, reason.seat)
    assert for_you(reason) == expected
