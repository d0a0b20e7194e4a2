"""The figures of docs/RELIABILITY.md, measured by the tests that prove each promise.

A test calls :func:`record` with what it measured; that does nothing unless ``GONGZHU_FIGURES``
names a file, where each record is appended as a line of JSON. ``python -m
tests.reliability.figures`` runs those tests with it set and prints the figures as Markdown.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

FIGURES_ENV = "GONGZHU_FIGURES"
TESTS = (
    "tests/reliability",
    "tests/workers/test_crash_recovery.py",
    "tests/workers/test_redis_restart.py",
    "tests/service/test_durability.py",
)
"""The hostile-bot tournament and the crash tests."""
ROOT = Path(__file__).resolve().parents[2]


def record(test: str, **values: Any) -> None:
    """Keep ``values`` as figures of ``test`` when the figures are being collected."""
    path = os.environ.get(FIGURES_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"test": test, **values}, sort_keys=True) + "\n")


@dataclass(frozen=True)
class Run:
    records: list[dict[str, Any]]
    outcomes: dict[str, str]
    """Each test's outcome: ``passed``, ``failed``, ``error`` or ``skipped``."""
    seconds: float
    exit_code: int


def collect() -> Run:
    """Run :data:`TESTS` with figures on, in one pytest."""
    with tempfile.TemporaryDirectory() as directory:
        figures, junit = Path(directory) / "figures.jsonl", Path(directory) / "junit.xml"
        start = time.monotonic()
        pytest = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
        env = {**os.environ, FIGURES_ENV: str(figures)}
        code = subprocess.call([*pytest, f"--junitxml={junit}", *TESTS], cwd=ROOT, env=env)
        took = time.monotonic() - start
        outcomes = _outcomes(junit) if junit.exists() else dict.fromkeys(TESTS, "error")
        lines = figures.read_text().splitlines() if figures.exists() else []
    return Run([json.loads(line) for line in lines], outcomes, took, code)


def _outcomes(junit: Path) -> dict[str, str]:
    found = {}
    for case in ElementTree.parse(junit).iter("testcase"):
        verdicts = [c.tag for c in case if c.tag in ("failure", "error", "skipped")]
        found[f"{case.get('classname')}::{case.get('name')}"] = (verdicts or ["passed"])[0]
    return found


def markdown(records: list[dict[str, Any]]) -> str:
    """The figures, one table per test."""
    out: list[str] = []
    for item in records:
        values = {k: v for k, v in item.items() if k != "test"}
        out += [f"**{item['test']}**", "", "| figure | value |", "|---|---|"]
        out += [f"| {name} | {_shown(value)} |" for name, value in values.items()]
        out.append("")
    return "\n".join(out)


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_shown(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(map(_shown, value))
    return str(value)


def main() -> int:
    run = collect()
    print(markdown(run.records))
    passed = sum(v == "passed" for v in run.outcomes.values())
    print(f"{passed} of {len(run.outcomes)} tests passed in {run.seconds:.0f} s:")
    for name, outcome in run.outcomes.items():
        print(f"- {name}: {outcome}")
    return run.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
