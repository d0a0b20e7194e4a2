"""``python -m replays verify`` on a stored log reads it back and verifies it in one walk
(``replays.packing.verified``): each request the stored form left out is rebuilt once, and the
log written back from what was verified must give the seal's SHA-256. It proves what reading
the log back and verifying it step by step proves: the same verdicts, and every tampering that
fails one way fails the other, in the stored form and in plain JSON."""

from __future__ import annotations

import gc
import hashlib
import json
import zlib
from pathlib import Path
from typing import Any

import pytest
import zstandard
from click.testing import CliRunner, Result
from hypothesis import given
from hypothesis import strategies as st

from bot_sdk.protocol import encode
from replays import packing
from replays.cli import LogCheck, main
from replays.integrity import canonical, pack, public_key_pem, seal, unpack
from replays.log import MatchLog
from replays.upgrade import read_log
from replays.verify import verify
from tests.replays.replay_support import KEY, KEY_ID, every_log, sealed

FIXTURES = Path(__file__).resolve().parent / "fixtures"
LOGS: dict[str, MatchLog] = {name: every_log()[name] for name in list(every_log())[::3]}
BOTH_PROTOCOLS = json.loads((FIXTURES / "replay-6.json").read_text("utf-8"))


def _cases() -> dict[str, dict[str, Any]]:
    return {**{name: sealed(log) for name, log in LOGS.items()}, "replay-6": BOTH_PROTOCOLS}


def run(path: Path, *options: str) -> Result:
    return CliRunner().invoke(main, ["verify", str(path), *(options or ["--digest-only"])])


@pytest.mark.parametrize("name", list(_cases()))
def test_a_stored_log_verified_in_one_walk_is_the_log_verified_step_by_step(name: str) -> None:
    log = _cases()[name]
    found = packing.verified(pack(log))
    assert found is not None
    assert found.data == log
    assert found.unsealed == canonical({k: v for k, v in log.items() if k != "integrity"})
    read = read_log(log)
    expected = verify(read)
    assert expected.ok and found.verification.ok
    assert found.verification.requests_checked == expected.requests_checked > 0
    assert found.verification.decisions == expected.decisions
    # the typed log is the one read, less the left-out request hashes and sizes it rebuilt
    rebuilt = found.verification.rebuilt
    assert rebuilt
    for (h, d), (sha, size) in rebuilt.items():
        record = read.hands[h].decisions[d]
        assert record.request_sha256 == sha
        assert record.timing is None or record.timing.bytes_sent == size
        assert found.log.hands[h].decisions[d].request_sha256 is None
    for h, (ours, theirs) in enumerate(zip(found.log.hands, read.hands, strict=True)):
        assert ours.deal == theirs.deal and ours.result == theirs.result
        for d, (mine, recorded) in enumerate(zip(ours.decisions, theirs.decisions, strict=True)):
            assert (h, d) in rebuilt or mine == recorded


@pytest.mark.parametrize("name", list(_cases()))
def test_the_command_says_the_same_of_the_stored_form_and_the_json(
    name: str, tmp_path: Path
) -> None:
    log = _cases()[name]
    (tmp_path / "log.json").write_text(json.dumps(log))
    (tmp_path / "log.json.z").write_bytes(pack(log))
    plain, stored = run(tmp_path / "log.json"), run(tmp_path / "log.json.z")
    assert plain.exit_code == stored.exit_code == 0, plain.output + stored.output
    assert stored.output == plain.output


def _first(log: dict[str, Any], wanted: Any) -> dict[str, Any]:
    found: dict[str, Any] = next(d for h in log["hands"][1:] for d in h["decisions"] if wanted(d))
    return found


def _request_hash(log: dict[str, Any]) -> None:
    """The request's size too: the stored form keeps both, and checks the hash in one walk."""
    decision = _first(log, lambda d: d["request_sha256"] and d["timing"])
    decision["request_sha256"] = "0" * 64
    decision["timing"]["bytes_sent"] += 1


def _answer(log: dict[str, Any]) -> None:
    decision = _first(log, lambda d: d["status"] == "ok" and d["kind"] == "play")
    other = "2C" if decision["applied"]["play"] != "2C" else "3C"
    decision["answer"] = json.dumps({"card": other}, separators=(",", ":"))


def _card(log: dict[str, Any]) -> None:
    decision = _first(log, lambda d: d["kind"] == "play" and d.get("request_sha256", "left out"))
    decision["applied"]["play"] = "2C" if decision["applied"]["play"] != "2C" else "3C"


TAMPERINGS = {
    "a recorded request hash": (_request_hash, "does not match its SHA-256"),
    "a recorded answer": (_answer, "answer"),
    "an applied card": (_card, ""),
}


@pytest.mark.parametrize("form", ["json", "stored"])
@pytest.mark.parametrize("what", list(TAMPERINGS))
def test_a_log_changed_and_sealed_again_fails_the_referee(
    what: str, form: str, tmp_path: Path
) -> None:
    """A log the arena's key sealed after it was changed: the seal holds, the referee does not."""
    change, message = TAMPERINGS[what]
    log = json.loads(json.dumps(BOTH_PROTOCOLS))
    del log["integrity"]
    change(log)
    resealed = seal(log, KEY, key_id=KEY_ID)
    path = tmp_path / "log"
    path.write_bytes(pack(resealed) if form == "stored" else json.dumps(resealed).encode())
    if form == "stored":
        assert packing.verified(path.read_bytes()) is None
    outcome = run(path)
    assert outcome.exit_code == 1, outcome.output
    assert "integrity  SHA-256" in outcome.output
    (failed,) = [line for line in outcome.output.splitlines() if "FAILED" in line]
    assert failed.startswith("referee    FAILED: hand ") and message in failed


def _frame(blob: bytes) -> dict[str, Any]:
    raw = zstandard.ZstdDecompressor(dict_data=packing.dictionary(packing.DICTIONARY_ID))
    data: dict[str, Any] = json.loads(raw.decompress(blob[len(packing.MAGIC) + 1 :]))
    return data


def _reframed(frame: dict[str, Any]) -> bytes:
    compressor = zstandard.ZstdCompressor(dict_data=packing.dictionary(packing.DICTIONARY_ID))
    return packing.MAGIC + packing.REDUCED + compressor.compress(canonical(frame))


def _frame_latency(frame: dict[str, Any]) -> None:
    _first(frame, lambda d: d["latency_ms"] is not None)["latency_ms"] += 1


def _frame_hash(frame: dict[str, Any]) -> None:
    _first(frame, lambda d: "request_sha256" not in d)["request_sha256"] = "0" * 64


FRAME_TAMPERINGS = {
    "an applied card (its requests rebuilt from the change)": _card,
    "a latency": _frame_latency,
    "a left-out request hash put back wrong": _frame_hash,
}


@pytest.mark.parametrize("what", list(FRAME_TAMPERINGS))
def test_a_stored_form_changed_under_its_seal_fails(what: str, tmp_path: Path) -> None:
    frame = _frame(pack(BOTH_PROTOCOLS))
    FRAME_TAMPERINGS[what](frame)
    blob = _reframed(frame)
    assert packing.verified(blob) is None
    (tmp_path / "log.json.z").write_bytes(blob)
    outcome = run(tmp_path / "log.json.z")
    assert outcome.exit_code == 1, outcome.output
    assert "FAILED" in outcome.output or "Error: not a match log" in outcome.output
    assert "referee    ok" not in outcome.output


def _three_seats(frame: dict[str, Any]) -> dict[str, Any]:
    return {**frame, "seats": frame["seats"][:3]}


def _not_a_number(frame: dict[str, Any]) -> dict[str, Any]:
    return {**frame, "extra": {"x": float("nan")}}


def _seat_not_a_number(frame: dict[str, Any]) -> dict[str, Any]:
    _first(frame, lambda d: "answer" not in d)["seat"] = [0]  # an answer to put back
    return frame


@pytest.mark.parametrize("change", [_three_seats, _not_a_number, _seat_not_a_number])
def test_a_stored_log_out_of_shape_is_reported_not_a_crash(change: Any, tmp_path: Path) -> None:
    frame = change(_frame(pack(BOTH_PROTOCOLS)))
    compressor = zstandard.ZstdCompressor(dict_data=packing.dictionary(packing.DICTIONARY_ID))
    blob = packing.MAGIC + packing.REDUCED + compressor.compress(json.dumps(frame).encode())
    assert packing.verified(blob) is None
    (tmp_path / "log.json.z").write_bytes(blob)
    outcome = run(tmp_path / "log.json.z")
    assert outcome.exception is None or isinstance(outcome.exception, SystemExit)
    assert outcome.exit_code == 1, outcome.output


def test_a_changed_byte_of_a_stored_log_fails(tmp_path: Path) -> None:
    """Unless it does not change the log (a byte of the frame that zstd does not read)."""
    blob = pack(BOTH_PROTOCOLS)
    (tmp_path / "key.pem").write_bytes(public_key_pem(KEY.public_key()))
    failed = 0
    for offset in range(len(packing.MAGIC) + 1, len(blob), max(1, len(blob) // 40)):
        changed = bytearray(blob)
        changed[offset] ^= 0x10
        (tmp_path / "log.json.z").write_bytes(bytes(changed))
        outcome = run(tmp_path / "log.json.z", "--public-key", str(tmp_path / "key.pem"))
        if outcome.exit_code == 0:
            assert unpack(bytes(changed)) == BOTH_PROTOCOLS
        else:
            assert outcome.exit_code == 1, outcome.output
            failed += 1
    assert failed >= 35


def test_other_forms_are_read_and_verified_step_by_step() -> None:
    whole, old = packing.whole(pack(BOTH_PROTOCOLS)), zlib.compress(canonical(BOTH_PROTOCOLS))
    assert packing.verified(whole) is None and packing.verified(old) is None
    assert unpack(whole) == unpack(old) == BOTH_PROTOCOLS


def test_the_garbage_collector_is_held_off_only_while_a_log_is_checked() -> None:
    check = LogCheck(None, True, None, None)
    assert gc.isenabled()
    assert check.reported(pack(BOTH_PROTOCOLS))[1] == 0
    assert gc.isenabled()
    assert check.reported(b"not a log")[1] == 1
    assert gc.isenabled()
    gc.disable()
    try:
        check.reported(pack(BOTH_PROTOCOLS))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_fast_writer_writes_every_character_and_json_value_as_encode_does() -> None:
    """``packing.sorted_json`` (orjson) is ``encode`` for JSON without a non-integer number:
    every character, as a key and as a value, and the logs of these tests."""
    characters = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for chunk in range(0, len(characters), 4096):
        text = "".join(characters[chunk : chunk + 4096])
        keyed = {c: i for i, c in enumerate(characters[chunk : chunk + 4096])}
        assert packing.sorted_json({"text": text, "keys": keyed}) == encode(
            {"text": text, "keys": keyed}
        )
    for log in _cases().values():
        assert packing.sorted_json(log) == canonical(log)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(JSON_VALUES)
def test_the_fast_writer_writes_any_value_without_fractions_as_encode_does(value: Any) -> None:
    assert packing.sorted_json({"value": value}) == encode({"value": value})


def test_an_integer_the_fast_writer_cannot_write_is_an_error_not_other_bytes() -> None:
    with pytest.raises(TypeError):
        packing.sorted_json({"big": 2**64})


def _seal_digest(log: dict[str, Any], written: bytes) -> dict[str, Any]:
    integrity = {**log["integrity"], "sha256": hashlib.sha256(written).hexdigest()}
    return {**log, "integrity": integrity}


def test_a_number_with_a_fraction_is_verified_step_by_step_by_the_standard_encoder(
    tmp_path: Path,
) -> None:
    """orjson writes 1e-05 as ``0.00001``, the arena's encoder as ``1e-05``: a stored log holding
    such a number is not checked in one walk, so its seal is judged on the arena's bytes
    alone. Sealed over orjson's bytes it fails (it passes if the one walk takes it); sealed
    over the arena's it holds."""
    log = json.loads(json.dumps(BOTH_PROTOCOLS))
    log["extra"] = {"x": 1e-05}
    unsealed = {k: v for k, v in log.items() if k != "integrity"}
    theirs, ours = packing.sorted_json(unsealed), canonical(unsealed)
    assert theirs != ours
    for written, exit_code in ((theirs, 1), (ours, 0)):
        frame = _frame(pack(BOTH_PROTOCOLS))
        frame["extra"] = log["extra"]
        frame["integrity"] = _seal_digest(log, written)["integrity"]
        blob = _reframed(frame)
        assert packing.verified(blob) is None
        (tmp_path / "log.json.z").write_bytes(blob)
        outcome = run(tmp_path / "log.json.z")
        assert outcome.exit_code == exit_code, outcome.output
