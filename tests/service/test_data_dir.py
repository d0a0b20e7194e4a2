"""The data directory made its owner's only (``DataDir.make_private``): what the arena keeps
there, however deep, and what is made there from then on; nothing else, and no link followed
out of it. End to end, under the run command: tests/e2e/test_data_private.py."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.runtime import DataDir, private_directory


@pytest.fixture
def umask() -> Iterator[None]:
    """The test process's own umask, put back after the test."""
    before = os.umask(0o022)
    os.umask(before)
    yield
    os.umask(before)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_what_the_arena_keeps_is_closed_and_what_it_makes_stays_closed(
    tmp_path: Path, umask: None
) -> None:
    data = tmp_path / "data"
    blob = data / "archive" / "ab" / "abcd"
    blob.parent.mkdir(parents=True)
    blob.write_bytes(b"log")
    (data / "operator-token").write_text("t")
    others = data / "notes.txt"  # not the arena's: left as it is
    others.write_text("mine")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (data / "redis").symlink_to(outside)  # a link is not followed
    for path in (data, data / "archive", blob.parent, outside):
        path.chmod(0o755)
    for path in (blob, data / "operator-token", others):
        path.chmod(0o644)

    changed = DataDir(data).make_private()

    assert changed == [data, data / "archive", blob.parent, blob, data / "operator-token"]
    assert {_mode(p) for p in changed} == {0o700, 0o600}
    assert (_mode(others), _mode(outside)) == (0o644, 0o755)
    assert _mode(data / "logs") == 0o700  # made now
    (data / "logs" / "arena.log").write_text("made after")
    assert _mode(data / "logs" / "arena.log") == 0o600
    assert DataDir(data).make_private() == []  # nothing left to close


def test_a_directory_of_its_own_is_closed_whole(tmp_path: Path, umask: None) -> None:
    redis_dir = tmp_path / "redis"
    (redis_dir / "appendonlydir").mkdir(parents=True)
    aof = redis_dir / "appendonlydir" / "appendonly.aof.1.incr.aof"
    aof.write_bytes(b"")
    aof.chmod(0o644)
    assert private_directory(redis_dir) == [redis_dir, redis_dir / "appendonlydir", aof]
    assert _mode(aof) == 0o600
