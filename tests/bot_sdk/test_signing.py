"""Request signing: a known answer, tampering, staleness, missing headers and rotation."""

from __future__ import annotations

import pytest

from bot_sdk.protocol import encode, hello_request
from bot_sdk.signing import (
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    SignatureError,
    Signer,
    sign,
    signature,
    verify,
)

SECRET = "gongzhu-example-secret"
TIMESTAMP = 1767225600
BODY = encode(hello_request())
# Computed independently: printf '%s' "1767225600.$BODY" | openssl dgst -sha256 -hmac "$SECRET"
EXPECTED = "bcb1e55c0bf39ec0f88b2bc07effa1703168684e5133bccfbee0db1d911b6f16"


def test_known_answer() -> None:
    assert BODY == (
        b'{"arena":"gongzhu-arena","deal_commitment":null,"match_id":null,"protocol":"gongzhu-bot/1",'
        b'"protocols":["gongzhu-bot/1","gongzhu-bot/2"],"rules":null,"seat":null,'
        b'"time_bank_ms":30000,"time_limit_ms":1000,"type":"hello"}'
    )
    assert sign(SECRET, BODY, TIMESTAMP) == {
        TIMESTAMP_HEADER: "1767225600",
        SIGNATURE_HEADER: f"v1={EXPECTED}",
    }
    assert sign(SECRET.encode(), BODY, TIMESTAMP)[SIGNATURE_HEADER] == f"v1={EXPECTED}"


def test_one_signer_signs_every_body_afresh() -> None:
    signer = Signer([SECRET, b"other"])
    bodies = [BODY, b"{}", BODY, b"x" * 5000, BODY]
    for n, body in enumerate(bodies):
        headers = signer.sign(body, TIMESTAMP + n)
        assert headers == {
            TIMESTAMP_HEADER: str(TIMESTAMP + n),
            SIGNATURE_HEADER: f"v1={signature(SECRET, body, TIMESTAMP + n)},"
            f"v1={signature(b'other', body, TIMESTAMP + n)}",
        }
    assert signer.sign(BODY, TIMESTAMP)[SIGNATURE_HEADER].startswith(f"v1={EXPECTED},")


def test_a_good_signature_verifies_within_the_tolerance() -> None:
    headers = sign(SECRET, BODY, TIMESTAMP)
    for now in (TIMESTAMP, TIMESTAMP - 300, TIMESTAMP + 300, TIMESTAMP + 0.5):
        verify(SECRET, headers, BODY, now)


def test_header_names_are_case_insensitive() -> None:
    headers = {k.lower(): v for k, v in sign(SECRET, BODY, TIMESTAMP).items()}
    verify(SECRET, headers, BODY, TIMESTAMP)


@pytest.mark.parametrize(
    ("body", "timestamp", "secret"),
    [
        (BODY.replace(b"1000", b"9000"), TIMESTAMP, SECRET),  # the body was changed
        (BODY + b" ", TIMESTAMP, SECRET),  # even by a byte
        (BODY, TIMESTAMP + 1, SECRET),  # the timestamp was changed
        (BODY, TIMESTAMP, "another-secret"),  # the wrong secret
    ],
)
def test_tampering_is_refused(body: bytes, timestamp: int, secret: str) -> None:
    headers = sign(SECRET, BODY, TIMESTAMP)
    headers[TIMESTAMP_HEADER] = str(timestamp)
    with pytest.raises(SignatureError, match="bad signature"):
        verify(secret, headers, body, TIMESTAMP)


def test_a_flipped_signature_digit_is_refused() -> None:
    headers = sign(SECRET, BODY, TIMESTAMP)
    digit = "0" if EXPECTED[-1] != "0" else "1"
    headers[SIGNATURE_HEADER] = f"v1={EXPECTED[:-1]}{digit}"
    with pytest.raises(SignatureError, match="bad signature"):
        verify(SECRET, headers, BODY, TIMESTAMP)


@pytest.mark.parametrize("now", [TIMESTAMP + 301, TIMESTAMP - 301, TIMESTAMP + 86_400])
def test_stale_or_future_timestamps_are_refused(now: float) -> None:
    with pytest.raises(SignatureError, match="stale timestamp"):
        verify(SECRET, sign(SECRET, BODY, TIMESTAMP), BODY, now)


def test_a_stale_timestamp_says_how_far_off_the_clocks_are() -> None:
    with pytest.raises(SignatureError, match=r"1767225600 is 400 s from this server's clock"):
        verify(SECRET, sign(SECRET, BODY, TIMESTAMP), BODY, TIMESTAMP + 400)


def test_the_tolerance_is_configurable() -> None:
    headers = sign(SECRET, BODY, TIMESTAMP)
    verify(SECRET, headers, BODY, TIMESTAMP + 3000, tolerance_s=3600)
    with pytest.raises(SignatureError, match="more than 5 s"):
        verify(SECRET, headers, BODY, TIMESTAMP + 6, tolerance_s=5)


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ({}, "missing X-Gongzhu-Timestamp"),
        ({TIMESTAMP_HEADER: "1767225600"}, "missing X-Gongzhu-Signature"),
        ({TIMESTAMP_HEADER: "1767225600.5", SIGNATURE_HEADER: "v1=00"}, "whole unix seconds"),
        ({TIMESTAMP_HEADER: "-1", SIGNATURE_HEADER: "v1=00"}, "whole unix seconds"),
        ({TIMESTAMP_HEADER: "1767225600", SIGNATURE_HEADER: EXPECTED}, "has no v1= signature"),
        ({TIMESTAMP_HEADER: "1767225600", SIGNATURE_HEADER: f"v0={EXPECTED}"}, "no v1="),
        # a later scheme is not v1 either, even carrying v1's right digest
        ({TIMESTAMP_HEADER: "1767225600", SIGNATURE_HEADER: f"v2={EXPECTED}"}, "no v1="),
        ({TIMESTAMP_HEADER: "1767225600", SIGNATURE_HEADER: "v1=ünïcode"}, "bad signature"),
    ],
)
def test_missing_or_malformed_headers_are_refused(headers: dict[str, str], message: str) -> None:
    with pytest.raises(SignatureError, match=message):
        verify(SECRET, headers, BODY, TIMESTAMP)


def test_rotation_the_bot_accepts_old_and_new_secrets() -> None:
    old, new = "old-secret", "new-secret"
    for signer in (old, new):
        verify([new, old], sign(signer, BODY, TIMESTAMP), BODY, TIMESTAMP)
    with pytest.raises(SignatureError):
        verify([new, old], sign("stolen", BODY, TIMESTAMP), BODY, TIMESTAMP)


def test_rotation_the_arena_signs_with_both_secrets() -> None:
    old, new = "old-secret", "new-secret"
    headers = sign([new, old], BODY, TIMESTAMP)
    assert headers[SIGNATURE_HEADER].count("v1=") == 2
    verify(old, headers, BODY, TIMESTAMP)  # a bot not yet updated
    verify(new, headers, BODY, TIMESTAMP)  # a bot already updated
    with pytest.raises(SignatureError):
        verify("other", headers, BODY, TIMESTAMP)


@pytest.mark.parametrize("secret", ["", b"", [], ["ok", ""]])
def test_empty_secrets_are_a_programming_error(secret: str | bytes | list[str]) -> None:
    with pytest.raises(ValueError, match="non-empty"):
        sign(secret, BODY, TIMESTAMP)
