"""docs/PROTOCOL.md tells the truth: its examples are today's real messages."""

from __future__ import annotations

import json
import re
from pathlib import Path

from bot_sdk.dispatch import DEFAULT_MARGIN_MS
from bot_sdk.protocol import DEFAULT_FAULT_LIMIT, DEFAULT_TIME_BANK_MS, DEFAULT_TIME_LIMIT_MS
from bot_sdk.schemas import validate, validate_request
from bot_sdk.signing import verify
from tests.bot_sdk.protocol_examples import DOC, SECRET, render

TEXT = DOC.read_text("utf-8")
EXAMPLE_BOT = Path(__file__).resolve().parents[2] / "bot_sdk" / "examples" / "lowest_card.py"


def generated(name: str) -> str:
    found = re.search(rf"<!-- generated: {name} -->\n(.*?)<!-- /generated -->", TEXT, re.DOTALL)
    assert found, name
    return found.group(1)


def json_of(name: str) -> object:
    return json.loads(generated(name).removeprefix("```json\n").removesuffix("```\n"))


def test_the_generated_examples_are_up_to_date() -> None:
    assert render(TEXT) == TEXT, "run: .venv/bin/python -m tests.bot_sdk.protocol_examples"


def test_every_example_is_valid() -> None:
    for request in ("hello", "pass", "expose", "play", "hand_end", "match_end"):
        validate_request(json_of(f"{request}_request"))
    validate("hello_answer", json_of("hello_answer"))
    for kind in ("pass", "expose", "play"):
        validate(f"{kind}_answer", json_of(f"{kind}_answer"))


def test_the_signing_example_verifies() -> None:
    fields = dict(
        line.split(maxsplit=1) for line in generated("signing").splitlines()[1:6] if line.strip()
    )
    assert fields["secret"] == SECRET
    body = fields["body"].encode()
    assert fields["signed"] == f"{fields['timestamp']}.{fields['body']}"
    headers = {
        "X-Gongzhu-Timestamp": fields["timestamp"],
        "X-Gongzhu-Signature": f"v1={fields['signature']}",
    }
    verify(SECRET, headers, body, now=int(fields["timestamp"]))
    after = TEXT[TEXT.index(generated("signing")) :]
    assert f"printf '%s' '{fields['signed']}'" in after  # the openssl check uses the same bytes
    assert (
        f"openssl dgst -sha256 -hmac '{SECRET}'\n# SHA2-256(stdin)= {fields['signature']}" in after
    )


def test_the_quick_start_bot_is_the_example_file() -> None:
    snippet = re.search(r"```python\n(from bot_sdk import Bot.*?)```", TEXT, re.DOTALL)
    assert snippet and snippet.group(1) in EXAMPLE_BOT.read_text("utf-8")


def test_the_documented_defaults_are_the_codes() -> None:
    assert f"`time_limit_ms` = {DEFAULT_TIME_LIMIT_MS}" in TEXT
    assert f"`time_bank_ms` = {DEFAULT_TIME_BANK_MS:,}".replace(",", " ") in TEXT
    assert f"at the {DEFAULT_FAULT_LIMIT}th fault in one match" in TEXT
    assert f"minus its margin\n({DEFAULT_MARGIN_MS} ms)" in TEXT
