"""The divergence page's data: the bot's seat's view at its first divergence, shaped for the
template from the referee's observation (what the bot was sent, its own hand only)."""

from __future__ import annotations

from typing import Any

from referee import Observation, card_name


def seat_view(view: Observation) -> dict[str, Any]:
    """What the seat saw: its hand and legal choices, the trick on the table and the hand's
    tricks so far, the exposed and taken cards, its own pass, the hearts and the totals."""
    return {
        "hand": view.hand.names(),
        "legal": view.legal.names(),
        "trick": [{"seat": seat, "card": card_name(card)} for seat, card in view.trick],
        "tricks": [
            {
                "leader": trick.leader,
                "winner": trick.winner,
                "plays": [{"seat": seat, "card": card_name(card)} for seat, card in trick.plays()],
            }
            for trick in view.tricks
        ],
        "exposed": [cards.names() for cards in view.exposed],
        "taken": [cards.names() for cards in view.taken],
        "passed": None if view.passed is None else view.passed.names(),
        "pass_to": view.pass_to,
        "received": None if view.received is None else view.received.names(),
        "hearts_broken": view.hearts_broken,
        "totals": list(view.totals),
    }
