"""Data already in users' Redis still loads, and new writes keep its form: each literal below is
a record exactly as the arena has stored it (captured from the codecs before arena/store/ was
split into keys, codecs and the Store), read back through the Store and written again by the
codecs byte for byte."""

from __future__ import annotations

import base64
import hashlib
import json

from arena.records import (
    BotFault,
    BotStatus,
    Format,
    HumanGame,
    Match,
    MatchResult,
    MatchStatus,
    Rating,
    RatingPoint,
    RegisteredBot,
    Schedule,
    Standing,
    Tournament,
    TournamentSpec,
    TournamentStatus,
    Transport,
)
from arena.store import Store, codecs
from referee import Rules
from replays.deals import DealScheme, DealSource
from replays.integrity import digest, pack, unpacked_json
from replays.log import DecisionRecord, TimeControl

RULES = (
    '{"variants": [], "losing_threshold": -1000, "max_hands": 100, "fixed_hands": null, '
    '"pass_direction": "next"}'
)
SPEC = (
    '{"name": "\\u62f1\\u732a cup", "participants": ["bot_a", "house:easy"], "format": '
    '{"duplicate": true, "matches_per_table": 1, "hands": 1}, "rules": ' + RULES + ", "
    '"time_control": {"decision_ms": 1000, "bank_ms": 30000, "fault_limit": 5}, "rated": true}'
)
TEMPLATE = TournamentSpec(
    "拱猪 cup", ("bot_a", "house:easy"), Format(hands=1), Rules(), TimeControl(1000, 30000, 5)
)
T0, T1 = "2023-11-14T22:13:27+00:00", "2023-11-14T22:14:23+00:00"

BOT = {
    "id": "bot_a",
    "name": "Beta",
    "endpoint": "http://b",
    "description": "拱猪 bot",
    "contact": "c",
    "status": "active",
    "version": "1",
    "created_at": T0,
    "updated_at": T1,
    "allow_human_games": "1",
    "token_sha256": "4ce9",
    "faults": "3",
    "fallbacks": "1",
}
TOURNAMENT = {
    "spec": SPEC,
    "deal_commitment": "8c0c",
    "deal_secret": "encrypted",
    "status": "done_with_failures",
    "done": "2",
    "total": "3",
    "created_at": T0,
    "updated_at": T1,
    "schedule_id": "",
}
MATCH = {
    "status": "done",
    "seats": '["bot_a", "bot_b", "bot_c", "house:easy"]',
    "tournament_id": "t_1",
    "table_id": "table-1",
    "deal_label": "d0",
    "created_at": T0,
    "finished_at": T1,
    "result": '{"places": [1, 4, 3, 2], "totals": [80, -260, -100, -50], "faults": [0, 2, 0, 0]'
    ', "forfeited": [], "hands": 1, "termination": "fixed_hands"}',
}
STANDING = (
    '{"bot_id": "bot_a", "matches": 2, "wins": 2, "placement_sum": 2, "points": 220, "hands": 2, '
    '"faults": 0, "forfeits": 0}'
)
RATING = (
    '{"bot_id": "bot_a", "mu": 25.694863323442974, "sigma": 7.91056231599408, "matches": 3, '
    '"points": 20, "hands": 3, "faults": 5, "decisions": 32}'
)
POINT = (
    '{"match_id": "m0", "mu": 27.795252672501135, "sigma": 8.263571791259416, "at": "' + T1 + '"}'
)
FAULT = (
    '{"match_id": "x2", "hand": 1, "decision": 16, "trick": 4, "kind": "play", "status": '
    '"illegal", "message": "you do not hold 2C; your legal cards: 3D 7D 8D KD", "latency_ms": 0}'
)
SCHEDULE = (
    '{"id": "s_b", "cron": "5 * * * *", "template": ' + SPEC + ', "created_at": "' + T0 + '"}'
)
GAME = {
    "match_id": "pm1",
    "rules": RULES,
    "deals": '{"scheme": "practice", "commitment": null, "label": null, "secret": null, '
    '"seed": "7"}',
    "seat": "1",
    "opponents": '["house:easy", "bot_a", "house:hard"]',
    "created_at": T0,
    "version": "3",
    "acknowledged": "0",
    "level_changes": '[[1, "hard"]]',
    "recorded": "1",
    "updated_at": T1,
}
MOVE = (
    '{"seat": 2, "kind": "expose", "applied": {"expose": []}, "status": "ok", "decision_id": '
    '"h1:1:0", "latency_ms": 0, "answer": null, "fault": null, "time_limit_ms": 1000, '
    '"time_bank_ms": 30000, "request_sha256": null, "note": null}'
)


def _written(fields: dict[str, str], stored: dict[str, str]) -> dict[str, str]:
    return {name: stored[name] for name in fields}


def test_a_stored_bot_loads_and_is_written_the_same(store: Store) -> None:
    store.redis.hset("gz:bot:bot_a", mapping=BOT)
    bot = RegisteredBot(
        "bot_a", "Beta", "http://b", "拱猪 bot", "c", BotStatus.ACTIVE, "1", T0, T1, True, 3, 1
    )
    assert store.get_bot("bot_a") == bot
    # written the same, and with the fields added since: its transport (a bot stored before is
    # push) and its ladder entry (out, one match at a time)
    fields = codecs.bot_fields(bot)
    added = {"transport": "push", "ladder": "0", "max_concurrent": "1"}
    assert fields == {**_written({k: v for k, v in fields.items() if k not in added}, BOT),
                      **added}  # fmt: skip


def test_a_stored_pull_bot_loads_and_is_written_the_same(store: Store) -> None:
    stored = {**BOT, "endpoint": "", "transport": "pull", "ladder": "1", "max_concurrent": "3"}
    store.redis.hset("gz:bot:bot_a", mapping=stored)
    bot = store.get_bot("bot_a")
    assert bot is not None and bot.transport is Transport.PULL and bot.endpoint == ""
    assert (bot.ladder, bot.max_concurrent) == (True, 3)
    assert codecs.bot_fields(bot) == _written(codecs.bot_fields(bot), stored)


def test_a_bot_stored_before_human_games_and_counters_loads_with_their_defaults(
    store: Store,
) -> None:
    old = {k: v for k, v in BOT.items() if k not in {"allow_human_games", "faults", "fallbacks"}}
    store.redis.hset("gz:bot:bot_a", mapping=old)
    bot = store.get_bot("bot_a")
    assert bot is not None and (bot.allow_human_games, bot.faults, bot.fallbacks) == (False, 0, 0)


def test_a_stored_tournament_loads_and_is_written_the_same(store: Store) -> None:
    store.redis.hset("gz:tournament:t_1", mapping=TOURNAMENT)
    tournament = Tournament(
        "t_1", TEMPLATE, TournamentStatus.DONE_WITH_FAILURES, 2, 3, T0, T1, None, (), "8c0c"
    )
    assert store.get_tournament("t_1") == tournament
    fields = codecs.tournament_fields(tournament)
    added = {"ladder": "0", "gauntlet": ""}  # the fields added since, for a plain tournament
    kept = {k: v for k, v in fields.items() if k not in added}
    assert fields == {**_written(kept, TOURNAMENT), **added}


def test_a_recorded_match_loads_and_its_planned_fields_are_written_the_same(store: Store) -> None:
    store.redis.hset("gz:match:m0", mapping=MATCH)
    result = MatchResult((1, 4, 3, 2), (80, -260, -100, -50), (0, 2, 0, 0), (), 1, "fixed_hands")
    seats = ("bot_a", "bot_b", "bot_c", "house:easy")
    match = Match("m0", "t_1", "table-1", seats, MatchStatus.DONE, T0, T1, result, None, "d0")
    assert store.get_match("m0") == match
    fields = codecs.planned_match_fields(match)
    assert fields == _written(fields, MATCH)
    assert codecs.to_json(result) == MATCH["result"]


def test_standings_ratings_points_and_faults_load_and_are_written_the_same(store: Store) -> None:
    store.redis.hset("gz:tournament:t_1:standings", "bot_a", STANDING)
    store.redis.set("gz:rating:bot_a", RATING)
    store.redis.rpush("gz:rating:bot_a:history", POINT)
    store.redis.lpush("gz:bot:bot_a:faults", FAULT)
    standing = Standing("bot_a", 2, 2, 2, 220, 2, 0, 0, rank=1)
    rating = Rating("bot_a", 25.694863323442974, 7.91056231599408, 3, 20, 3, 5, 32)
    point = RatingPoint("m0", 27.795252672501135, 8.263571791259416, T1)
    fault = BotFault(
        "x2", 1, 16, 4, "play", "illegal", "you do not hold 2C; your legal cards: 3D 7D 8D KD", 0
    )
    assert store.standings("t_1") == [standing]
    assert store.rating("bot_a") == rating
    assert store.rating_history("bot_a") == [point]
    assert list(store.faults("bot_a", page=1, per_page=5).items) == [fault]
    written = [codecs.to_json(r) for r in (standing, rating, point, fault)]
    no_seat = '{"matches": 0, "placement_sum": 0, "points": 0, "hands": 0}'
    versioned = RATING[:-1] + (  # and the fields added with versions
        f', "version": "", "seats": [{", ".join([no_seat] * 4)}], "first_match": "", '
        '"last_match": "", "amended": 0}'  # and with disputes' rulings
    )
    amended = STANDING[:-1] + ', "amended": 0}'
    assert written == [amended, versioned, POINT, FAULT]  # a standing's rank is not stored


def test_a_stored_schedule_loads_and_is_written_the_same(store: Store) -> None:
    store.redis.hset("gz:schedules", "s_b", SCHEDULE)
    schedule = Schedule("s_b", "5 * * * *", TEMPLATE, T0)
    assert store.list_schedules() == [schedule]
    assert codecs.to_json(schedule) == SCHEDULE


def test_a_stored_human_game_loads_and_is_written_the_same(store: Store) -> None:
    store.redis.hset("gz:play:g1", mapping=GAME)
    store.redis.rpush("gz:play:g1:moves", MOVE)
    move = DecisionRecord.from_json(json.loads(MOVE))  # a move is stored in the log's form
    game = HumanGame(
        "g1",
        "pm1",
        Rules(),
        DealSource.practice("7"),
        1,
        ("house:easy", "bot_a", "house:hard"),
        T0,
        version=3,
        moves=(move,),
        level_changes=((1, "hard"),),
        recorded=True,
    )
    assert store.get_human_game("g1") == game
    fields = codecs.human_game_fields(game)
    assert fields == _written(fields, GAME)
    # written with the fields version 4 of the log added, null: a person's move is not timed
    assert codecs.to_json(move) == MOVE.removesuffix("}") + ', "deadline": null, "timing": null}'


def test_a_human_game_stored_before_committed_deals_loads_with_its_seed(store: Store) -> None:
    old = {k: v for k, v in GAME.items() if k != "deals"} | {"seed": "s33d"}
    store.redis.hset("gz:play:g1", mapping=old)
    game = store.get_human_game("g1")
    assert game is not None and game.deals == DealSource(DealScheme.UNCHECKED, seed="s33d")


PACKED_LOG = base64.b64decode(
    "R1oCASi1L/1jTw6fJO1RRSsAYqdzJ/CytgGoREdv4Fuptl56CnB2aFmJdvp5FSkpMynjTSW8h01kE1l5ASNt33sEIQ0M"
    "6VVQC3bD4pjXayHXqw8qu4aFLkuePkhQsThA6AUVAsKX4zwpYT5sPAxC8TEZAxkTFekHOA3S9B6OBCi0cm5cYhjIOOAI"
    "zEbhwOBxPuRfoo9e2ChEy4VaHs5HhoBARO0mnbwq43MlmXro0sRvrnRTxbFSqVfnVJ9uTve/VW9sapLSP6zkNC1Xs6Ok"
    "5Cv0DCN0tC9qeqONXHmO/v5BBEr0fa5ufzORc9/efmnXZn2sLy6392//cuzfyFG7OapH+572e0+bPUOJHinRY3+U2Sgy"
    "P/+F/90VviuMGgxfYGTeXhhX+5fdMed8LUBWiLEGLa+/37L9rhVNBVNxb29Mr0tYXScLQ/LwWNoEWqeikbROhxVUFFAB"
    "LGNBqLBLQsFEF0186M1v2SWxNjwWA1kdF/NQFiDGwThCbMKYxNhlMYDrA9AkbaR1rk/rsEnrdETaP1dX6OocO468rzcu"
    "b/dFcVEgELkUoIvq+FAcocuz7v4PI2uUJ26bTpMHam2anH6/1CmlnyunfXBGlla5qlj2SimfuVc1ur/H0z3uNCf3vIkE"
    "gVnoARUhxBDClHJG0A5iQBCDQBCJQAzHIAyCIAQIgjAIxyAIhRBikMAQIxWyJB+y12yRUwH25CqK6MSc+f/kBCEe5MGp"
    "DBni7LTHMjmTiKnp8k2vDMGHnby+3IjsRh4BIi1EhOIm0gTB6UiC80vCtlVBFNdfjyhHB6j+4vMOcc6vzYMaMeJC7iLa"
    "+LYZwGV+0deJvCdaJC4D/pggrmp77GFT7h+RviAOZqVjXadl+7GxdvvCihNJoPbQS9B+dzMqV0EK1bEQMAI5HklUEboW"
    "tq0/xPeK/y48dGVQUvUSRuuax4muqbc1RWqp/HfXqAxEdgg42EDtz3ASOH52iYWYczcrSd7lLxDnDZWVNhdgYQyUIuEs"
    "//5a9yujxK0cFHs8Zl9rnd9HkDGSITdmmNkkhWHh6yOT13xxen5+zvxDyiZA217mem8AIxz7KOCzXmfHQblow9G+hrFp"
    "J8jM+tooP0k1ysZ+OqVdQwhCIzuMmjQMAeooLqDDE25MTOCChcjI7M3Jk1oIktCz722vRCS9TAlYwtel54bRJEji6ENG"
    "QhsCSoqOYwoRMLQqdJPKpHMFKAKoaw+Q2jw00zPB/N4ggPuNfRaQhUdInSwiStfZdtAejrSDaNv7hP5jJgC5u1vqjRoI"
    "oSIDuHDslwHj9c2acJ7bjrM9DQPTSZCZ8eVNfpJKEmzWa88aJkaUT/k5C0uDQYBcfcc1bMdxBCjBsR8BxodeJ9LphDXo"
    "Umbe1vitBVjBgO49eE6IfX7DPglIbK0vGgTKxO1FOS2MIjNBqfekPnTgK7PcWQZ4imDlpgxAQwQo8x69IeX7NmZF4M1y"
    "CF6g+6Lqs/4Ch8MhanfV+PY7l9wRsG9jeRKomOSiJqobsWvt5YRDyOC+aRsXazClHNqeB9Iy/IzSjwzr/7K5T8lk/9q4"
    "DnxmJKOMWZ4wW8mm+04owbLI5B8JDo7VBAkgF2ASH8foCCDpKG1y5zPAHWaKV1inUzs+24x9FRTXN/LFxtOUPknUhn02"
    "WlF6Rhr1TLwY23U+VkC8Vf2jwMEHIsks2WVTcEsVaCECFcm8vS38MAV1n7msUpNs5AGNyOfglNP3lZFwO8/yUoS3SpUE"
    "BxCZ+FMnn5Hs0EWwAcQqAWuzzyisKGvNjTfOurvZCCDVagoL+cjFEaUFMPqkvzXB0J52knRZDnBiDwCWyTkfkQ9eTvn8"
    "JEeMI89i2uCHmq9PH3oOmNa9DbdRFQ=="
)
"""The example log of docs/REPLAYS.md (one hand) in the stored form 2 as the archive keeps it
(``replays.packing``: the rebuilt fields left out, zstd with dictionary 614403663)."""
PACKED_LOG_SHA256 = "8958fd1ff8ceb2dcd02ea8d71b1752ea01e9d6d1101f7c34bc4f12ae4f68ee25"
"""The SHA-256 of that log's canonical JSON (the seal's block included)."""


def test_a_log_in_the_stored_form_reads_back_to_its_canonical_json_byte_for_byte() -> None:
    body = unpacked_json(PACKED_LOG)
    assert hashlib.sha256(body).hexdigest() == PACKED_LOG_SHA256
    sealed = json.loads(body)
    assert digest(sealed) == sealed["integrity"]["sha256"]
    assert pack(sealed) == PACKED_LOG  # and is written the same
