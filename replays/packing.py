"""The stored (packed) form of a sealed log: smaller than its canonical JSON, and read back to
exactly that JSON, byte for byte (docs/REPLAYS.md, "The stored form").

Two forms are read; :func:`pack` writes the second:

1. zlib: the canonical JSON, zlib-compressed (level 9). Every log stored before the archive.
2. ``GZ``, the form's number (2) and a flag, then one zstd frame. Whole (flag 0): the canonical
   JSON. Reduced (flag 1): the canonical JSON of the log *less what the log itself rebuilds*:
   every decision's ``decision_id`` (``match:hand:index``), and where the rebuilt value is the
   recorded one its ``request_sha256`` (the SHA-256 of the request rebuilt from the log and
   the referee, as ``python -m replays verify`` rebuilds it), its ``answer`` (an answer taken
   as it was, in the protocol's canonical form) and its timing's ``bytes_sent`` and
   ``bytes_received``. The frame is compressed with a zstd dictionary trained on logs,
   shipped in this package (``replays/dictionaries/<id>.zdict``); the frame names the
   dictionary's id, so a later dictionary leaves every blob readable.

Reading form 2 puts the left-out values back, then checks the SHA-256 of the canonical JSON
against the seal's (``integrity.sha256``): a blob that does not rebuild exactly is an
:class:`PackingError`, never a different log.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import importlib
import json
import threading
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from bot_sdk.fragments import keep
from bot_sdk.protocol import Status, answer_of, body_sha256, decision_id, encode
from referee import Move
from replays.log import FORMAT, MatchLog
from replays.upgrade import read_log, upgrade
from replays.verify import Verification, replay, request_body, verify

if TYPE_CHECKING:
    import zstandard

MAGIC = b"GZ\x02"
"""What a form 2 blob starts with (a zlib stream starts with 0x78); one byte follows: 1 when
the decision ids and matching request hashes are left out, 0 when the log is whole."""
REDUCED, WHOLE = b"\x01", b"\x00"
LEVEL = 15
FAST_LEVEL = 3
DICTIONARY_SIZE = 110_000
DICTIONARIES = Path(__file__).with_name("dictionaries")
DICTIONARY_ID = 614_403_663
"""The id of the dictionary :func:`pack` writes with (``replays/dictionaries/<id>.zdict``)."""

Rebuilt = dict[tuple[int, int], tuple[str, str, int]]
"""Each decision's (hand index, decision index) -> its rebuilt decision id, request SHA-256 and
request size in bytes."""


class PackingError(ValueError):
    """A blob that is not a stored log, or that does not rebuild to the log that was sealed."""


def _zstd() -> ModuleType:
    """The ``zstandard`` package: the arena's, not the bot SDK's (``pip install .`` reads the
    JSON of a log and its zlib form; the zstd form needs ``pip install '.[arena]'``)."""
    try:
        import zstandard  # noqa: PLC0415 - the arena's dependency, not the bot SDK's
    except ImportError:
        raise PackingError(
            "this stored log is zstd-packed: install the zstandard package to read it "
            "(pip install '.[arena]')"
        ) from None
    return zstandard


@functools.cache
def dictionary(dict_id: int) -> zstandard.ZstdCompressionDict:
    try:
        data = (DICTIONARIES / f"{dict_id}.zdict").read_bytes()
    except FileNotFoundError:
        raise PackingError(f"this version has no packing dictionary {dict_id}") from None
    found: zstandard.ZstdCompressionDict = _zstd().ZstdCompressionDict(data)
    return found


def pack(sealed: Mapping[str, Any]) -> bytes:
    """The stored form of ``sealed`` (form 2): reduced when every decision's id is the one
    rebuilt and the reduced form reads back to exactly ``sealed``, else whole."""
    body = encode(sealed)
    reduced = _reduced(sealed)
    if reduced is not None:
        blob = MAGIC + REDUCED + _compress(encode(reduced))
        try:
            if unpacked_json(blob) == body:
                return blob
        except PackingError:
            pass
    return MAGIC + WHOLE + _compress(body)


def train(logs: Sequence[Mapping[str, Any]]) -> bytes:
    """A zstd dictionary (:data:`DICTIONARY_SIZE` bytes) trained on sealed ``logs`` as
    :func:`pack` compresses them (``python -m benchmarks.replays --train-dictionary``)."""
    samples = [encode(_reduced(log) or log) for log in logs]
    trained = _zstd().train_dictionary(DICTIONARY_SIZE, samples, level=LEVEL)
    data: bytes = trained.as_bytes()
    return data


def whole(blob: bytes) -> bytes:
    """The log stored in ``blob``, in form 2 with nothing left out, quickly compressed: what
    reads back without rebuilding anything (a cache's copy; :func:`pack` writes the smaller)."""
    return quick(unpacked_json(blob))


def quick(body: bytes) -> bytes:
    """A log's canonical JSON ``body`` in form 2, whole, quickly compressed (:func:`whole`)."""
    return MAGIC + WHOLE + _compress(body, level=FAST_LEVEL)


_ZSTD_LOCK = threading.Lock()
"""zstandard's compressors and decompressors must not be used by two threads at once (a worker
plays many matches in threads of one process, docs/OPERATIONS.md): the cached ones are used
under this lock."""


def _compress(raw: bytes, *, level: int = LEVEL) -> bytes:
    with _ZSTD_LOCK:
        compressed: bytes = _compressor(level).compress(raw)
    return compressed


@functools.cache
def _compressor(level: int) -> zstandard.ZstdCompressor:
    found: zstandard.ZstdCompressor = _zstd().ZstdCompressor(
        level=level, dict_data=dictionary(DICTIONARY_ID)
    )
    return found


@functools.cache
def _decompressor(dict_id: int) -> zstandard.ZstdDecompressor:
    found: zstandard.ZstdDecompressor = _zstd().ZstdDecompressor(dict_data=dictionary(dict_id))
    return found


def _reduced(sealed: Mapping[str, Any]) -> dict[str, Any] | None:
    """A copy of ``sealed`` without what it rebuilds, or None if it cannot leave it out."""
    rebuilt = _rebuilt(sealed)
    reduced = copy.deepcopy(dict(sealed))
    for h, hand in enumerate(reduced.get("hands", ())):
        for d, decision in enumerate(hand.get("decisions", ())):
            timing = decision.get("timing")
            if (h, d) not in rebuilt or not decision.keys() >= FIELDS:
                return None
            if timing is not None and not timing.keys() >= TIMING_FIELDS:
                return None
            rebuilt_id, rebuilt_sha, body_bytes = rebuilt[h, d]
            if decision["decision_id"] != rebuilt_id:
                return None
            del decision["decision_id"]
            if decision["request_sha256"] == rebuilt_sha:
                del decision["request_sha256"]
            if timing is not None and timing["bytes_sent"] == body_bytes:
                del timing["bytes_sent"]
            answer = decision["answer"]
            if answer is not None and answer == _answer(decision):
                del decision["answer"]
                if timing is not None and timing["bytes_received"] == len(answer.encode()):
                    del timing["bytes_received"]
    return reduced


FIELDS = {"decision_id", "request_sha256", "answer", "timing"}
"""The fields of a decision the reduced form may leave out (each where the rebuilt value is
the recorded one), and ``timing``, whose byte counts it may leave out."""
TIMING_FIELDS = {"bytes_sent", "bytes_received"}


def _answer(decision: Mapping[str, Any]) -> str | None:
    """The answer a bot sends for the decision's applied move, in the protocol's canonical
    form, for an answer taken as it was (status ``ok``); None otherwise."""
    if decision.get("status") != _OK:
        return None
    seat, applied = decision["seat"], decision["applied"]
    key = seat, repr(applied)  # repr: the same values of the same types (1 is not True)
    found = _ANSWERS.get(key)
    if found is None:
        found = encode(answer_of(Move.from_json({"seat": seat, **applied}))).decode()
        keep(_ANSWERS, key, found, _ANSWERS_KEPT)
    return found


_OK: str = Status.OK.value
_ANSWERS: dict[tuple[object, str], str] = {}
"""Each applied move's answer, made once (a match plays each card of the deck many times)."""
_ANSWERS_KEPT = 1 << 14


def unpacked_json(blob: bytes) -> bytes:
    """A stored log's canonical JSON, exactly as it was sealed, from either form."""
    raw, reduced = _opened(blob)
    if reduced is None:
        return raw
    restored = _restored(reduced)
    unsealed = encode({k: v for k, v in restored.items() if k != "integrity"})
    if hashlib.sha256(unsealed).hexdigest() != restored.get("integrity", {}).get("sha256"):
        raise PackingError("the stored log does not rebuild to the log that was sealed")
    return encode(restored)


def _opened(blob: bytes, *, whole_numbers: bool = False) -> tuple[bytes, dict[str, Any] | None]:
    """The bytes ``blob`` holds, and for the reduced form their JSON object (else None; with
    ``whole_numbers``, a ValueError if that JSON holds a number that is not an integer)."""
    if not blob.startswith(MAGIC):
        try:
            return zlib.decompress(blob), None
        except zlib.error as error:
            raise PackingError(f"not a stored log: {error}") from None
    flag, frame = blob[len(MAGIC) : len(MAGIC) + 1], blob[len(MAGIC) + 1 :]
    zstd = _zstd()
    try:
        dict_id = zstd.get_frame_parameters(frame).dict_id
        with _ZSTD_LOCK:
            raw: bytes = _decompressor(dict_id).decompress(frame)
    except zstd.ZstdError as error:
        raise PackingError(f"not a stored log: {error}") from None
    return raw, None if flag == WHOLE else _json_object(raw, whole_numbers=whole_numbers)


def _restored(reduced: dict[str, Any]) -> dict[str, Any]:
    """``reduced`` with every field it left out put back (:func:`_reduced`)."""
    try:
        _restore_answers(reduced)
        typed = MatchLog.from_json(upgrade(reduced))
    except (KeyError, TypeError, ValueError) as error:
        raise PackingError(f"the stored log cannot be read: {error}") from None
    for (h, d), (_, rebuilt_sha, body_bytes) in _rebuilt(reduced, typed).items():
        decision = reduced["hands"][h]["decisions"][d]
        decision.setdefault("request_sha256", rebuilt_sha)
        if decision.get("timing") is not None:
            decision["timing"].setdefault("bytes_sent", body_bytes)
    return reduced


def _restore_answers(reduced: dict[str, Any]) -> tuple[set[tuple[int, int]], set[tuple[int, int]]]:
    """Put back in ``reduced`` what it left out that needs no referee: every decision's id, and
    the answers (and their sizes) taken as they were. Returns the decisions, by (hand index,
    decision index), whose request hash and whose request size (``timing.bytes_sent``) it left
    out: the referee's walk rebuilds those."""
    match_id = str(reduced.get("match_id"))
    hashes, sizes = set(), set()
    for h, hand in enumerate(reduced.get("hands", ())):
        for index, decision in enumerate(hand.get("decisions", ())):
            decision["decision_id"] = decision_id(match_id, hand["hand_number"], index)
            if "request_sha256" not in decision:
                hashes.add((h, index))
            timing = decision.get("timing")
            if isinstance(timing, dict) and "bytes_sent" not in timing:
                sizes.add((h, index))
            if "answer" not in decision:
                decision["answer"] = _answer(decision)
                if timing is not None and "bytes_received" not in timing:
                    timing["bytes_received"] = len(str(decision["answer"]).encode())
    return hashes, sizes


@dataclass(frozen=True)
class Verified:
    """A stored log read back and verified by the referee in one walk (:func:`verified`)."""

    data: dict[str, Any]
    """The sealed log's JSON object, exactly as it was sealed."""
    unsealed: bytes
    """Its canonical JSON without the ``integrity`` block, whose SHA-256 is the seal's."""
    log: MatchLog
    """The log as :func:`replays.upgrade.read_log` reads ``data``, less what the stored form
    left out of its decisions and the walk rebuilt: request hashes and request sizes (None)."""
    verification: Verification
    """:func:`replays.verify.verify` of the log (its deals not checked: :func:`check_deals`)."""


def verified(blob: bytes) -> Verified | None:
    """A reduced blob of the current format, read back and verified in one walk: each request
    the stored form left out is rebuilt once, both to put its hash back for the seal and to
    check the decision. The log is written back from what was read and verified, with those
    hashes, and its SHA-256 must be the seal's: so the log sealed is the log verified, and it
    reads back to exactly its JSON (as :func:`replays.upgrade.read_log` checks).

    The log is written back by :func:`sorted_json`, so one holding a number that is not an
    integer (which the arena never writes) is not read here.

    None whenever this cannot say that all is well: another form, an older format, a log
    the referee finds a discrepancy in, one that does not rebuild to the sealed log, one that
    is not even shaped as a log (the schema is checked afterwards, on the log rebuilt), one
    holding a number that is not an integer. Read
    those with :func:`unpacked_json` and verify them apart, which says what is wrong."""
    try:
        found = _verified(blob)
    except (IndexError, KeyError, TypeError, ValueError):  # PackingError among them
        return None  # a blob or a log out of shape: the schema or the reading says how
    return found


def _verified(blob: bytes) -> Verified | None:
    _, reduced = _opened(blob, whole_numbers=True)  # what sorted_json writes as encode does
    if reduced is None or reduced.get("format") != FORMAT:
        return None
    hashes, sizes = _restore_answers(reduced)
    if not sizes <= hashes:  # a size left out beside a hash kept: that hash was not rebuilt
        return None
    typed = MatchLog.from_json(reduced)
    result = verify(typed, left_out=hashes)
    if not result.ok or result.rebuilt.keys() != hashes:
        return None
    written = typed.to_json()
    for (h, d), (sha, size) in result.rebuilt.items():
        decision = written["hands"][h]["decisions"][d]
        decision["request_sha256"] = sha
        if (h, d) in sizes:
            decision["timing"]["bytes_sent"] = size
    unsealed = sorted_json(written)
    seal = reduced.get("integrity")
    if not isinstance(seal, dict) or hashlib.sha256(unsealed).hexdigest() != seal.get("sha256"):
        return None
    return Verified({**written, "integrity": seal}, unsealed, typed, result)


def sorted_json(data: Mapping[str, Any]) -> bytes:
    """:func:`bot_sdk.protocol.encode` of JSON without a number that is not an integer (what
    the arena writes), by orjson where it is installed, about 7 times as fast: with sorted
    keys, no spaces and UTF-8 its bytes are then the same (the same escapes, the same order of
    keys; tests/replays/test_packing.py compares them on every character and on random
    values). A value it cannot write (an integer beyond 64 bits) is a TypeError."""
    orjson = _orjson()
    if orjson is None:  # installed without its dependencies: the standard library's encoder
        return encode(data)
    written: bytes = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    return written


@functools.cache
def _orjson() -> ModuleType | None:
    """The ``orjson`` package, where installed: the arena's, beside ``zstandard``."""
    try:  # by name: mypyc compiles this module where orjson may not be installed
        return importlib.import_module("orjson")
    except ImportError:
        return None


def _no_float(text: str) -> Any:
    raise ValueError(f"not an integer: {text}")


def _rebuilt(data: Mapping[str, Any], typed: MatchLog | None = None) -> Rebuilt:
    """Every decision's rebuilt id, request hash and request size (from ``typed``, else from
    ``data`` read as a log); none for a log that cannot be read or walked."""
    try:
        log = read_log(data) if typed is None else typed
        hands = {id(hand): n for n, hand in enumerate(log.hands)}
        rebuilt: Rebuilt = {}
        for hand, index, record, obs in replay(log):
            body = request_body(log, record, obs)
            rebuilt[hands[id(hand)], index] = (
                decision_id(log.match_id, hand.hand_number, index),
                body_sha256(body),
                len(body),
            )
        return rebuilt
    except (IndexError, ValueError):  # LogReadError, IllegalMoveError, DealError; a seat not listed
        return {}


def _json_object(raw: bytes, *, whole_numbers: bool = False) -> dict[str, Any]:
    data = (
        json.loads(raw, parse_float=_no_float, parse_constant=_no_float)
        if whole_numbers
        else json.loads(raw)
    )
    if not isinstance(data, dict):
        raise PackingError("a stored log is a JSON object")
    return data
