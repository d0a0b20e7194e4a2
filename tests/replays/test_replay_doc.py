"""docs/REPLAYS.md tells the truth: its examples are today's real outputs, its example log
verifies, its Python example runs, and it documents every field and command."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bot_sdk.protocol import Status
from replays.cli import main
from replays.integrity import check, pack, public_key_pem
from replays.log import FORMAT
from replays.schema import validate
from replays.upgrade import read_log
from replays.verify import verify
from tests.replays.replay_examples import DOC, example_log, render
from tests.replays.replay_support import KEY, PUBLIC_KEYS, sealed

TEXT = DOC.read_text("utf-8")


def generated(name: str) -> str:
    found = re.search(rf"<!-- generated: {name} -->\n(.*?)<!-- /generated -->", TEXT, re.DOTALL)
    assert found, name
    return found.group(1)


def test_the_generated_examples_are_up_to_date() -> None:
    assert render(TEXT) == TEXT, "run: .venv/bin/python -m tests.replays.replay_examples"


def _example() -> dict[str, Any]:
    block = generated("example_log").removeprefix("```json\n").removesuffix("```\n")
    data: dict[str, Any] = json.loads(block)
    return data


def test_the_example_log_is_sealed_valid_and_verified() -> None:
    data = _example()
    check(data, PUBLIC_KEYS)
    validate(data)
    assert verify(read_log(data)).ok
    statuses = {d["status"] for d in data["hands"][0]["decisions"]}
    assert statuses == {"ok", "invalid", "timeout"}


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {key for inner in value.values() for key in _keys(inner)}
    if isinstance(value, list):
        return {key for inner in value for key in _keys(inner)}
    return set()


def test_every_field_and_status_is_documented() -> None:
    for key in _keys(_example()):
        assert f"`{key}`" in TEXT, key
    for status in Status:
        assert f"| `{status.value}` |" in TEXT, status
    assert f"`{FORMAT}`" in TEXT


def test_every_command_is_documented() -> None:
    for name in main.commands:
        assert f"**`{name} FILE" in TEXT, name


def test_the_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    snippet = re.search(r"```python\n(from pathlib import Path.*?)```", TEXT, re.DOTALL)
    assert snippet
    (tmp_path / "match.json.z").write_bytes(pack(sealed(example_log())))
    (tmp_path / "arena-replays.pem").write_bytes(public_key_pem(KEY.public_key()))
    monkeypatch.chdir(tmp_path)
    printed: list[tuple[object, ...]] = []
    exec(snippet.group(1), {"print": lambda *args: printed.append(args)})
    assert printed == [(True, None)]
