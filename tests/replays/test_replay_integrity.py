"""The seal's exact form: the canonical bytes a verifier in another language recomputes, the
algorithm and signature fields taken as written, and the key files."""

from __future__ import annotations

import zlib
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from replays.integrity import (
    IntegrityError,
    canonical,
    check,
    pack,
    private_key_from_pem,
    private_key_pem,
    public_key_from_pem,
    public_key_pem,
    seal,
    unpack,
)
from tests.replays.replay_support import KEY, KEY_ID, PUBLIC_KEYS

LOG = {"match_id": "m1", "format": "gongzhu-replay/2", "players": ["拱猪", "b"]}


def test_canonical_bytes_have_sorted_keys_no_spaces_and_raw_utf8() -> None:
    assert canonical({"b": [1, 2], "a": "拱猪"}) == '{"a":"拱猪","b":[1,2]}'.encode()


@pytest.mark.parametrize("algorithm", ["aes", "rsa", "ED25519", None])
def test_a_seal_naming_another_algorithm_is_refused(algorithm: str | None) -> None:
    sealed = seal(LOG, KEY, key_id=KEY_ID)
    sealed["integrity"]["algorithm"] = algorithm
    with pytest.raises(IntegrityError, match="unknown signature algorithm"):
        check(sealed, PUBLIC_KEYS)


def test_a_signature_with_characters_outside_base64_is_refused() -> None:
    sealed = seal(LOG, KEY, key_id=KEY_ID)
    signature = sealed["integrity"]["signature"]
    sealed["integrity"]["signature"] = signature[:8] + "!" + signature[8:]
    with pytest.raises(IntegrityError, match="not sealed by the arena"):
        check(sealed, PUBLIC_KEYS)


def test_key_files_round_trip() -> None:
    key = private_key_from_pem(private_key_pem(KEY))
    public = public_key_from_pem(public_key_pem(key.public_key()))
    check(seal(LOG, key, key_id=KEY_ID), {KEY_ID: public})


def _other_key_pems() -> tuple[bytes, bytes]:
    other: Any = ec.generate_private_key(ec.SECP256R1())
    private = other.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public = other.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return private, public


def test_key_files_of_another_kind_are_refused() -> None:
    private, public = _other_key_pems()
    with pytest.raises(ValueError, match="must be an Ed25519 private key"):
        private_key_from_pem(private)
    with pytest.raises(ValueError, match="not an Ed25519 public key"):
        public_key_from_pem(public)


def test_a_stored_log_is_a_json_object() -> None:
    assert unpack(pack(LOG)) == LOG
    with pytest.raises(ValueError, match="a stored log is a JSON object"):
        unpack(zlib.compress(b"[1, 2]"))


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_a_log_holding_a_number_json_has_no_text_for_is_refused_not_crashed_on(
    number: float,
) -> None:
    sealed = seal(LOG, KEY, key_id=KEY_ID)
    sealed["players"] = [
        number,
        "b",
    ]  # json.loads reads NaN and Infinity: a tamperer can write them
    with pytest.raises(IntegrityError, match="not JSON the arena writes"):
        check(sealed, PUBLIC_KEYS)
    with pytest.raises(IntegrityError, match="not JSON the arena writes"):
        canonical(sealed)
