"""Write the golden fixture of the current log format (run once; the file is committed).

    .venv/bin/python -m tests.replays.make_fixture

- ``fixtures/replay-6.json``: a real, small, sealed ``gongzhu-replay/6`` log with committed
  deals (the secret is :data:`FIXTURE_SECRET`): two hands with passing, exposures, request
  hashes (seat 3's requests in ``gongzhu-bot/2``, seats 1 and 2's in ``gongzhu-bot/1``), late
  answers, notes (one a bot's own fallback), every status (ok, timeout, error, invalid,
  illegal, and forfeit-autoplay after seat 2 forfeits), timings (hellos, new and reused
  connections) and both deadlines of a timeout. It must stay readable and verify forever:
  never regenerate it to make a test pass.
- ``fixtures/replay-1.pub.pem``: the public key that sealed the fixtures (the tests' key).

The older goldens were written by earlier versions of this script and are kept as they are:
``fixtures/replay-5.json``, such a match as ``gongzhu-replay/5`` (no seat ``protocol``: every
seat spoke ``gongzhu-bot/1``), ``fixtures/replay-4.json``, such a match as ``gongzhu-replay/4``
(no ``continues``),
``fixtures/replay-3.json``, the same match without timings as ``gongzhu-replay/3``,
``fixtures/replay-2.json``, the same match without notes as ``gongzhu-replay/2``,
``fixtures/replay-1.json``, that match as ``gongzhu-replay/1`` (its seed informative), and
``fixtures/replay-0.json``, that log in a hypothetical older format, ``gongzhu-replay/0``
(``players`` for ``seats``, ``move`` with its seat for ``applied``, ``autoplay`` for
``forfeit-autoplay``), to test the upgrade mechanism.
"""

from __future__ import annotations

from pathlib import Path

from arena.match_loop import SeatPlayer, play_match
from bot_sdk.protocol import ProtocolVersion
from referee import Game, Rules
from replays.deals import DealSource, deal_seed
from replays.integrity import public_key_pem, seal
from replays.log import MatchLog
from tests.replays.replay_support import (
    KEY,
    KEY_ID,
    TIME_CONTROL,
    ScriptedSeat,
    at_random,
    greet,
    house_seat,
    in_turn,
    pretty,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FIXTURE_SECRET = bytes.fromhex("5eed" * 16)
FIXTURE_LABEL = "t1:d1"


def fixture_log() -> MatchLog:
    players: list[SeatPlayer] = [
        house_seat(0, "fixture-0"),
        ScriptedSeat(
            1,
            in_turn("ok", "late", "slow", "noted", "illegal", "own_fallback", "timeout"),
            seed="fixture-1",
        ),
        ScriptedSeat(
            2,
            in_turn("malformed", "ok", "wrong_kind", "late", "error", "timeout", "ok", "illegal"),
            seed="fixture-2",
        ),
        ScriptedSeat(3, at_random("fixture-3", 0.0), seed="fixture-3", protocol=ProtocolVersion.V2),
    ]
    rules = Rules.with_variants("pass_3", "qd_bonus", fixed_hands=2)
    origin = greet(players)
    return play_match(
        Game(rules, seed=deal_seed(FIXTURE_SECRET, FIXTURE_LABEL)),
        players,
        match_id="fixture:table-1:match-1",
        deals=DealSource.committed(FIXTURE_SECRET, FIXTURE_LABEL),
        time_control=TIME_CONTROL,
        tournament_id="fixture",
        table_id="table-1",
        started_at="2026-01-01T12:00:00Z",
        finished_at=lambda: "2026-01-01T12:01:30Z",
        origin_ns=origin,
        extra={"purpose": "golden fixture of gongzhu-replay/6"},
    )


def main() -> None:
    data = fixture_log().to_json()
    FIXTURES.mkdir(exist_ok=True)
    (FIXTURES / "replay-6.json").write_text(pretty(seal(data, KEY, key_id=KEY_ID)) + "\n")
    (FIXTURES / "replay-1.pub.pem").write_bytes(public_key_pem(KEY.public_key()))


if __name__ == "__main__":
    main()
