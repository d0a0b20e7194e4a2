"""The per-bot fault index: written with the match's result, exactly once, newest first, paged."""

from __future__ import annotations

from arena.config import Config
from arena.store import Store
from bot_sdk.protocol import Status
from replays.log import MatchLog
from tests.pages.pages_support import faulty_log

SEATS = ["bot_a", "bot_b", "house:easy", "house:hard"]


def test_a_bots_faults_are_indexed_once_with_the_result_newest_first(
    config: Config, store: Store
) -> None:
    logs = [faulty_log(config, f"m{n}", SEATS, hands=2) for n in range(2)]
    for log in logs:
        assert store.record_result(log["match_id"], log)
    assert not store.record_result("m0", logs[0])  # a replayed job adds no fault either
    expected = [
        (log.match_id, hand.hand_number, index, record.status.value, record.fault)
        for log in map(MatchLog.from_json, logs)
        for hand in log.hands
        for index, record in enumerate(hand.decisions)
        if record.seat == 1 and record.status is not Status.OK
    ][::-1]
    assert len(expected) == 4
    listed = store.faults("bot_b", page=1, per_page=100)
    assert listed.total == 4
    assert [(f.match_id, f.hand, f.decision, f.status, f.message) for f in listed.items] == expected
    assert store.faults("bot_a", page=1, per_page=100).total == 0
    second = store.faults("bot_b", page=2, per_page=3)
    assert [f.decision for f in second.items] == [expected[3][2]] and second.total == 4


def test_a_faults_trick_is_the_one_it_was_played_in(config: Config, store: Store) -> None:
    log = faulty_log(config, "m9", SEATS, hands=1)
    store.record_result("m9", log)
    hand = MatchLog.from_json(log).hands[0]
    for fault in store.faults("bot_b", page=1, per_page=10).items:
        plays_before = sum(1 for d in hand.decisions[: fault.decision] if d.kind.value == "play")
        assert fault.trick == plays_before // 4 + 1
        assert fault.kind == "play"
