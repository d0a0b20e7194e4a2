"""Integrity of a stored log: a digest over its canonical JSON and the arena's Ed25519 signature.

Anyone holding the arena's public key (served at ``GET /api/replays/public-key``) can check a
log independently: a changed byte anywhere breaks the digest, and a recomputed digest without the
arena's private key breaks the signature.

>>> key = generate_key()
>>> sealed = seal({"format": "gongzhu-replay/1", "match_id": "m1"}, key, key_id="k1")
>>> check(sealed, {"k1": key.public_key()})
>>> sealed["match_id"] = "m2"
>>> check(sealed, {"k1": key.public_key()})
Traceback (most recent call last):
...
replays.integrity.IntegrityError: the log was changed after it was sealed (SHA-256 mismatch)
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from bot_sdk.protocol import encode
from replays import packing

ALGORITHM = "ed25519"


class IntegrityError(ValueError):
    """A log whose digest or signature does not match its content."""


def canonical(data: Mapping[str, Any]) -> bytes:
    """The canonical bytes of a JSON object, as the protocol writes every message
    (:func:`bot_sdk.protocol.encode`: sorted keys, no spaces, UTF-8). A value JSON has no
    text for (NaN, an infinity), which no sealed log holds, is an :class:`IntegrityError`."""
    try:
        return encode(data)
    except ValueError as error:
        raise IntegrityError(f"the log is not JSON the arena writes ({error})") from None


def _unsealed(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "integrity"}


def digest(log: Mapping[str, Any]) -> str:
    """The hex SHA-256 of the log's canonical JSON, its integrity block left out: what a seal
    records. Comparing it needs no key, so it finds accidental damage anywhere."""
    return hashlib.sha256(canonical(_unsealed(log))).hexdigest()


def seal(log: Mapping[str, Any], key: Ed25519PrivateKey, *, key_id: str) -> dict[str, Any]:
    """The log with an ``integrity`` block: its SHA-256 and the arena's signature of it."""
    body = canonical(_unsealed(log))
    digest = hashlib.sha256(body).hexdigest()
    signature = key.sign(body)
    return {
        **_unsealed(log),
        "integrity": {
            "sha256": digest,
            "algorithm": ALGORITHM,
            "key_id": key_id,
            "signature": base64.b64encode(signature).decode(),
        },
    }


def check(
    sealed: Mapping[str, Any],
    public_keys: Mapping[str, Ed25519PublicKey],
    *,
    unsealed: bytes | None = None,
) -> None:
    """Raise :class:`IntegrityError` unless the log is exactly what the arena sealed.
    ``unsealed`` is its canonical JSON without the ``integrity`` block, if the caller has it."""
    block = sealed.get("integrity")
    if not isinstance(block, Mapping):
        raise IntegrityError("the log has no integrity block: it was never sealed")
    body = canonical(_unsealed(sealed)) if unsealed is None else unsealed
    if hashlib.sha256(body).hexdigest() != block.get("sha256"):
        raise IntegrityError("the log was changed after it was sealed (SHA-256 mismatch)")
    if block.get("algorithm") != ALGORITHM:
        raise IntegrityError(f"unknown signature algorithm {block.get('algorithm')!r}")
    key = public_keys.get(str(block.get("key_id")))
    if key is None:
        raise IntegrityError(f"no public key for key id {block.get('key_id')!r}")
    try:
        key.verify(base64.b64decode(str(block.get("signature")), validate=True), body)
    except (InvalidSignature, ValueError):
        raise IntegrityError(
            "the signature does not match: this log was not sealed by the arena"
        ) from None


def generate_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def private_key_from_pem(pem: bytes) -> Ed25519PrivateKey:
    key = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError("the replay signing key must be an Ed25519 private key")
    return key


def private_key_pem(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def public_key_pem(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def public_key_from_pem(pem: bytes) -> Ed25519PublicKey:
    key = serialization.load_pem_public_key(pem)
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError("not an Ed25519 public key")
    return key


def key_id_of(key: Ed25519PublicKey) -> str:
    """A short, stable name for a public key: the first 16 hex digits of its SHA-256."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def pack(sealed: Mapping[str, Any]) -> bytes:
    """The stored form of a sealed log (:mod:`replays.packing`)."""
    return packing.pack(sealed)


def unpacked_json(blob: bytes) -> bytes:
    """A stored log's canonical JSON, as bytes, from any stored form (:mod:`replays.packing`);
    an :class:`IntegrityError` if the blob does not read back to the log that was sealed."""
    try:
        return packing.unpacked_json(blob)
    except packing.PackingError as error:
        raise IntegrityError(str(error)) from None


def unpack(blob: bytes) -> dict[str, Any]:
    data = json.loads(unpacked_json(blob))
    if not isinstance(data, dict):
        raise ValueError("a stored log is a JSON object")
    return data
