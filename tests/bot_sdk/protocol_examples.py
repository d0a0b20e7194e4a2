"""The examples of docs/PROTOCOL.md, generated from a real match so that they are correct.

Each example sits in the doc between ``<!-- generated: NAME -->`` and ``<!-- /generated -->``;
``test_protocol_doc.py`` checks the doc is up to date. After a change to the protocol or the
referee's observation, rewrite the doc with::

    .venv/bin/python -m tests.bot_sdk.protocol_examples
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from bot_sdk.dispatch import Dispatcher
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.protocol import (
    Message,
    ProtocolVersion,
    answer_of,
    decision_id,
    decision_request,
    encode,
    hand_end_notice,
    hello_answer,
    hello_request,
    match_end_notice,
)
from bot_sdk.signing import sign
from referee import Card, DecisionKind, Game, Observation, Phase, RandomPlayer, Rules
from replays.deals import commitment_of

DOC = Path(__file__).resolve().parents[2] / "docs" / "PROTOCOL.md"
MATCH_ID = "tournament-7:table-3:match-1"
SEAT = 1
SEED = 21
RULES = Rules.with_variants("pass_3")
SECRET = "gongzhu-example-secret"
TIMESTAMP = 1767225600
WIDTH = 96
_BLOCK = re.compile(r"(<!-- generated: (\w+) -->\n)(.*?)(<!-- /generated -->)", re.DOTALL)


def pretty(value: Any, indent: int = 0, lead: int = 0) -> str:
    """JSON for reading: a value that fits on its line (after ``lead`` characters of key) stays
    on one line."""
    flat = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    if indent + lead + len(flat) <= WIDTH or not isinstance(value, dict | list) or not value:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = [
            f"{pad}{json.dumps(k)}: {pretty(v, indent + 2, len(k) + 4)}" for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + pretty(v, indent + 2) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def json_block(value: Any) -> str:
    return f"```json\n{pretty(value)}\n```\n"


def example_match() -> dict[str, Message]:
    """Seat 1 is the example bot; the others play at random. The first pass, exposure and a play
    following a lead (in trick 2 or later) of seat 1 are kept, with hand 1's end and the match's,
    and seat 1's pass of hand 2 in ``gongzhu-bot/2`` (``pass_2``)."""
    game = Game(RULES, seed=SEED)
    bot = LowestCard()
    others = [RandomPlayer(seat) for seat in range(4)]
    found: dict[str, Message] = {}
    seq = 0
    while not game.is_over():
        for decision in game.pending:
            obs = game.observation(decision.seat)
            last_play = game.phase is Phase.PLAYING and len(game.tricks) == 12
            final = game.observation(SEAT) if last_play and len(game.current_trick()) == 3 else None
            if decision.seat == SEAT:
                move = bot.decide(obs)
                kind = decision.kind.value
                if kind not in found and _worth_showing(obs):
                    found[kind] = decision_request(
                        obs,
                        match_id=MATCH_ID,
                        decision_id=decision_id(MATCH_ID, game.hand_number, seq),
                        time_limit_ms=1000,
                        time_bank_ms=29_310 if kind == "play" else 30_000,
                    )
                    found[f"{kind}_answer"] = answer_of(move)
                if game.hand_number == 2 and "pass_2" not in found:
                    found["pass_2"] = decision_request(
                        obs,
                        match_id=MATCH_ID,
                        decision_id=decision_id(MATCH_ID, game.hand_number, seq),
                        time_limit_ms=1000,
                        time_bank_ms=29_310,
                        protocol=ProtocolVersion.V2,
                    )
            else:
                move = others[decision.seat].decide(decision)
            seq += 1
            game.push(move)
            if final is not None:
                seq = 0
                if "hand_end" not in found:
                    found["hand_end"] = hand_end_notice(game.results[-1], final, match_id=MATCH_ID)
    assert game.outcome is not None and {"pass", "expose", "play"} <= set(found)
    found["match_end"] = match_end_notice(game.outcome, match_id=MATCH_ID, seat=SEAT)
    return found


class Raising(LowestCard):
    """The example bot with a bug: the SDK answers the fallback, with a note."""

    def play(self, obs: Observation) -> Card:
        raise KeyError("QS")


def _worth_showing(obs: Observation) -> bool:
    decision = obs.decision
    assert decision is not None
    if decision.kind is DecisionKind.PLAY:
        return bool(obs.tricks) and bool(obs.trick) and len(decision.choices) > 1
    return True


def blocks() -> dict[str, str]:
    """Every generated block of the doc, by name."""
    match = example_match()
    hello = hello_request(
        match_id=MATCH_ID, seat=SEAT, rules=RULES, deal_commitment=commitment_of(bytes(range(32)))
    )
    out = {
        "hello_request": json_block(hello),
        "hello_answer": json_block(hello_answer("lowest-card", "1.0", ProtocolVersion.V2)),
        "pass_request_2": json_block(match["pass_2"]),
        "match_end_request": json_block(match["match_end"]),
        "hand_end_request": json_block(match["hand_end"]),
    }
    for kind in ("pass", "expose", "play"):
        out[f"{kind}_request"] = json_block(match[kind])
        out[f"{kind}_answer"] = json_block(match[f"{kind}_answer"])
    failed = Dispatcher(Raising).decision(match["play"], time.monotonic())
    out["fallback_answer"] = json_block(failed)
    body = encode(hello_request())
    headers = sign(SECRET, body, TIMESTAMP)
    out["signing"] = (
        "```text\n"
        f"secret     {SECRET}\n"
        f"timestamp  {TIMESTAMP}\n"
        f"body       {body.decode()}\n"
        f"signed     {TIMESTAMP}.{body.decode()}\n"
        f"signature  {headers['X-Gongzhu-Signature'].removeprefix('v1=')}\n"
        "```\n\n"
        "```http\n"
        "POST /your/endpoint HTTP/1.1\n"
        "Content-Type: application/json\n"
        + "".join(f"{name}: {value}\n" for name, value in headers.items())
        + f"\n{body.decode()}\n"
        "```\n"
    )
    return out


def render(text: str) -> str:
    """The doc ``text`` with every generated block brought up to date."""
    fresh = blocks()

    def replace(found: re.Match[str]) -> str:
        return found.group(1) + fresh[found.group(2)] + found.group(4)

    return _BLOCK.sub(replace, text)


if __name__ == "__main__":
    DOC.write_text(render(DOC.read_text("utf-8")), "utf-8")
    print(f"wrote {DOC}")
