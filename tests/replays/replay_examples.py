"""The examples of docs/REPLAYS.md, generated from a real match so that they are correct.

Each example sits in the doc between ``<!-- generated: NAME -->`` and ``<!-- /generated -->``;
``test_replay_doc.py`` checks the doc is up to date. After a change to the log format, the
referee or the commands, rewrite the doc with::

    .venv/bin/python -m tests.replays.replay_examples
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from arena.match_loop import SeatPlayer, play_match
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.server import make_app
from referee import CardSet, Game, Rules, deal_from_seed
from replays.cli import main
from replays.deals import DealSource, commitment_of, deal_seed
from replays.integrity import pack, public_key_pem
from replays.log import MatchLog, SeatInfo
from tests.bot_sdk.bot_sdk_support import running
from tests.replays.replay_support import (
    KEY,
    TIME_CONTROL,
    HashingSeat,
    ScriptedSeat,
    greet,
    house_seat,
    in_turn,
    pretty,
    sealed,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "REPLAYS.md"
MATCH_ID = "tournament-7:table-3:match-1"
SECRET = "gongzhu-example-secret"
DEAL_SECRET = bytes(range(32))
"""The example tournament's deal secret (the worked example of docs/REPLAYS.md)."""
DEAL_LABEL = "t3:d1"
EXAMPLE_WIDTH = 640
"""Wide enough that each decision of the example is one line."""
_BLOCK = re.compile(r"(<!-- generated: (\w+) -->\n)(.*?)(<!-- /generated -->)", re.DOTALL)


def example_log() -> MatchLog:
    """One hand: two house bots, the SDK's lowest-card bot "over HTTP" (request hashes), and
    a bot "over HTTP" that answers late, then malformed, then not at all."""
    players: list[SeatPlayer] = [
        house_seat(0, "example-0"),
        ScriptedSeat(1, in_turn("ok", "late", "malformed", "ok", "timeout"), seed="example-1"),
        HashingSeat(LowestCard(), SeatInfo(2, "bot-7f3a", "lowest-card", "1.0")),
        house_seat(3, "example-3"),
    ]
    origin = greet(players)
    return play_match(
        Game(Rules(fixed_hands=1), seed=deal_seed(DEAL_SECRET, DEAL_LABEL)),
        players,
        match_id=MATCH_ID,
        deals=DealSource.committed(DEAL_SECRET, DEAL_LABEL),
        time_control=TIME_CONTROL,
        tournament_id="tournament-7",
        table_id="table-3",
        started_at="2026-01-01T12:00:00Z",
        finished_at=lambda: "2026-01-01T12:00:41Z",
        origin_ns=origin,
    )


def _tampered(log: MatchLog) -> dict[str, Any]:
    """The log with one card of one play changed (to the card the next seat then plays)."""
    data: dict[str, Any] = json.loads(json.dumps(log.to_json()))
    decisions = data["hands"][0]["decisions"]
    index = next(
        i
        for i, d in enumerate(decisions[:-1])
        if d["kind"] == decisions[i + 1]["kind"] == "play" and d["seat"] == 0
    )
    decisions[index]["applied"] = decisions[index + 1]["applied"]
    return data


def _run(*args: str, stdin: bytes) -> str:
    outcome = CliRunner().invoke(main, list(args), input=stdin)
    if outcome.exception is not None and not isinstance(outcome.exception, SystemExit):
        raise outcome.exception  # a crash must not become an example
    return outcome.output


def _text(*commands: tuple[str, str]) -> str:
    lines = "".join(f"$ {command}\n{output}" for command, output in commands)
    return f"```text\n{lines}```\n"


def blocks() -> dict[str, Callable[[], str]]:
    log = example_log()
    stored = pack(sealed(log))
    view: dict[str, Any] = json.loads(
        _run("export", "-", "--hand", "1", "--seat", "1", stdin=stored)
    )
    count = len(view["decisions"])
    view["decisions"] = view["decisions"][:1]
    reask_index = next(
        i for i, d in enumerate(log.hands[0].decisions) if d.seat == 2 and d.kind.value == "play"
    )

    def reask() -> str:
        with running(make_app(LowestCard, SECRET)) as url:
            output = _run(
                "reask", "-", "--hand", "1", "--decision", str(reask_index), "--url", url,
                "--secret", SECRET, stdin=stored,
            )  # fmt: skip
        command = (
            f"python -m replays reask match.json.z --hand 1 --decision {reask_index} "
            "--url http://127.0.0.1:8000/ --secret $GONGZHU_BOT_SECRET"
        )
        return _text((command, output))

    def verify_failures() -> str:
        changed = _tampered(log)
        sealed_changed = {**changed, "integrity": sealed(log)["integrity"]}
        return _text(
            (
                "python -m replays verify changed.json.z --public-key arena-replays.pem",
                _verify_with_key(pack(sealed_changed)),
            ),
            (
                "python -m replays verify unsealed-changed.json",
                _run("verify", "-", stdin=json.dumps(changed).encode()),
            ),
        )

    return {
        "example_log": lambda: f"```json\n{pretty(sealed(log), width=EXAMPLE_WIDTH)}\n```\n",
        "verify": lambda: _text(
            (
                "python -m replays verify match.json.z --public-key arena-replays.pem",
                _verify_with_key(stored),
            )
        ),
        "verify_failures": verify_failures,
        "verify_secret": lambda: _text(
            (
                "python -m replays verify match.json.z --public-key arena-replays.pem "
                f"--secret {DEAL_SECRET.hex()}",
                _verify_with_key(stored, "--secret", DEAL_SECRET.hex()),
            )
        ),
        "verify_no_key": lambda: _text(
            ("python -m replays verify match.json.z", _run("verify", "-", stdin=stored))
        ),
        "deal_example": deal_example,
        "show": lambda: _text(
            ("python -m replays show match.json.z", _run("show", "-", stdin=stored))
        ),
        "export": lambda: (
            f"The output, shortened to the first of its {count} decisions:\n\n"
            f"```json\n{pretty(view, width=240)}\n```\n"
        ),
        "reask": reask,
    }


def deal_example() -> str:
    """The derivation of docs/REPLAYS.md's worked example, step by step, from the example's
    secret and label."""
    seed = deal_seed(DEAL_SECRET, DEAL_LABEL)
    hands = deal_from_seed(seed, 1)
    lines = [
        f"secret       {DEAL_SECRET.hex()}",
        f"commitment   {commitment_of(DEAL_SECRET)}   SHA-256(secret)",
        f"label        {DEAL_LABEL}",
        f"seed         {seed}   HMAC-SHA256(secret, label)",
        f'hand 1 keys  SHAKE-256("gongzhu-deal:{seed}:1"), 208 bytes',
        *(f"seat {s}       {CardSet(hands[s])}" for s in range(4)),
    ]
    return "```text\n" + "\n".join(lines) + "\n```\n"


def _verify_with_key(stored: bytes, *extra: str) -> str:
    """``verify --public-key``, with the key in a file as the command needs it."""
    with tempfile.TemporaryDirectory() as where:
        key = Path(where) / "arena-replays.pem"
        key.write_bytes(public_key_pem(KEY.public_key()))
        return _run("verify", "-", "--public-key", str(key), *extra, stdin=stored)


def render(text: str) -> str:
    """The doc with every generated block rebuilt."""
    makers = blocks()

    def replace(found: re.Match[str]) -> str:
        return found.group(1) + makers[found.group(2)]() + found.group(4)

    return _BLOCK.sub(replace, text)


if __name__ == "__main__":
    DOC.write_text(render(DOC.read_text("utf-8")), "utf-8")
