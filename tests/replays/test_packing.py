"""The stored form of a sealed log (``replays.packing``): it reads back to the canonical JSON
the seal covers, byte for byte, whatever the log holds; it leaves out only what it rebuilds;
a blob that does not rebuild to the sealed log is refused, never read as another log."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import pytest
import zstandard

from replays import packing
from replays.integrity import IntegrityError, canonical, pack, unpack, unpacked_json
from tests.replays.replay_examples import example_log
from tests.replays.replay_support import PROFILES, forfeiting_players, record, sealed

FIXTURES = Path(__file__).resolve().parent / "fixtures"
LOGS = {
    "timeouts, malformed and late answers, hellos": sealed(example_log()),
    "forfeits, passing": sealed(record(PROFILES["pass_next"], 11, forfeiting_players(11))),
}


@pytest.mark.parametrize("name", LOGS)
def test_a_log_reads_back_byte_for_byte_and_smaller_than_zlib(name: str) -> None:
    log = LOGS[name]
    blob = pack(log)
    assert blob.startswith(packing.MAGIC + packing.REDUCED)
    assert unpacked_json(blob) == canonical(log)
    assert unpack(blob) == log
    assert len(blob) < len(zlib.compress(canonical(log), 9)) / 2


def _frame(blob: bytes) -> dict[str, Any]:
    """The JSON a form 2 blob holds (what it left out, left out)."""
    raw = zstandard.ZstdDecompressor(dict_data=packing.dictionary(packing.DICTIONARY_ID))
    data: dict[str, Any] = json.loads(raw.decompress(blob[len(packing.MAGIC) + 1 :]))
    return data


def test_only_what_the_log_rebuilds_is_left_out() -> None:
    log = LOGS["timeouts, malformed and late answers, hellos"]
    kept = [d for h in _frame(pack(log))["hands"] for d in h["decisions"]]
    full = [d for h in log["hands"] for d in h["decisions"]]
    assert all("decision_id" not in d for d in kept)
    for stored, original in zip(kept, full, strict=True):
        if original["status"] != "ok":  # a late, malformed or missing answer is kept as it was
            assert stored["answer"] == original["answer"]
        assert {k: v for k, v in stored.items() if k != "timing"} == {
            k: v for k, v in original.items() if k in stored and k != "timing"
        }


def test_the_request_hashes_of_both_protocol_versions_are_rebuilt_and_left_out() -> None:
    log = json.loads((FIXTURES / "replay-6.json").read_text("utf-8"))  # seat 3: gongzhu-bot/2
    assert [seat["protocol"] for seat in log["seats"]][1:] == [
        "gongzhu-bot/1", "gongzhu-bot/1", "gongzhu-bot/2"
    ]  # fmt: skip
    blob = pack(log)
    assert unpack(blob) == log
    kept = [d for h in _frame(blob)["hands"] for d in h["decisions"]]
    full = [d for h in log["hands"] for d in h["decisions"]]
    hashed = {d["seat"] for d in full if d["request_sha256"]}
    assert hashed == {1, 2, 3}
    assert all(
        "request_sha256" not in stored
        for stored, original in zip(kept, full, strict=True)
        if original["request_sha256"]
    )


def test_a_log_changed_after_its_seal_is_kept_whole_as_it_is() -> None:
    changed = {**LOGS["forfeits, passing"], "started_at": "2000-01-01T00:00:00Z"}
    blob = pack(changed)
    assert blob.startswith(packing.MAGIC + packing.WHOLE)
    assert unpacked_json(blob) == canonical(changed)  # what was given, the seal then fails


def test_a_blob_that_does_not_rebuild_to_the_sealed_log_is_refused() -> None:
    log = LOGS["forfeits, passing"]
    frame = _frame(pack(log))
    frame["hands"][0]["decisions"][0]["latency_ms"] = 1  # another log, under the same seal
    compressor = zstandard.ZstdCompressor(dict_data=packing.dictionary(packing.DICTIONARY_ID))
    forged = packing.MAGIC + packing.REDUCED + compressor.compress(canonical(frame))
    with pytest.raises(IntegrityError, match="does not rebuild"):
        unpacked_json(forged)


def test_a_blob_of_an_unknown_dictionary_or_no_stored_form_is_refused() -> None:
    raw = zstandard.ZstdCompressionDict(b"{}" * 64, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
    frame = zstandard.ZstdCompressor(dict_data=raw).compress(b"{}")
    with pytest.raises(IntegrityError, match="no packing dictionary"):
        unpacked_json(packing.MAGIC + packing.WHOLE + frame)
    with pytest.raises(IntegrityError, match="not a stored log"):
        unpacked_json(b"neither zlib nor zstd")


def test_the_zlib_form_of_the_logs_stored_before_still_reads() -> None:
    log = LOGS["forfeits, passing"]
    assert unpacked_json(zlib.compress(canonical(log), 9)) == canonical(log)


def test_the_cache_copy_reads_without_rebuilding_and_is_the_same_log() -> None:
    log = LOGS["timeouts, malformed and late answers, hellos"]
    copy = packing.whole(pack(log))
    assert copy.startswith(packing.MAGIC + packing.WHOLE) and unpacked_json(copy) == canonical(log)
