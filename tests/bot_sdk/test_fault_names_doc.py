"""docs/PROTOCOL.md's fault table names each fault by the log's status, and maps every one of the
SDK's finer fault names to the status the arena records for it."""

from __future__ import annotations

import re
from pathlib import Path

from bot_sdk.protocol import Fault, Status

PROTOCOL = Path(__file__).resolve().parents[2] / "docs" / "PROTOCOL.md"
ROW = re.compile(r"^\| `([a-z-]+)` \|\s*(?:`([a-z_]+)`)?\s*\|", re.M)


def test_the_fault_table_is_the_codes_mapping() -> None:
    table = PROTOCOL.read_text().split("## Faults and the fallback", 1)[1].split("\n## ", 1)[0]
    rows = ROW.findall(table)
    statuses = {Status(status) for status, _ in rows}
    assert statuses == {s for s in Status if s.is_fault}
    finer = {Fault(name): Status(status) for status, name in rows if name}
    assert finer == {f: f.status for f in Fault if f is not Fault.TIMEOUT}
    assert Fault.TIMEOUT.status is Status.TIMEOUT


def test_the_sdks_finer_names_appear_only_beside_their_status() -> None:
    """A bot author reads one name per fault, the log's: wherever a doc mentions one of the SDK's
    finer names of an invalid answer, the same line names `invalid`."""
    for path in PROTOCOL.parent.glob("*.md"):
        for line in path.read_text().splitlines():
            if "`malformed`" in line or "`wrong_kind`" in line:
                assert "`invalid`" in line, f"{path.name}: {line}"
