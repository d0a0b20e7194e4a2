"""The archive's upkeep (docs/OPERATIONS.md, "The archive of sealed logs"): the logs recorded
before it moved out of Redis (``gongzhu migrate-replays``), and the sweep of blobs no match
references and of the temporary files that writes cut short left (the cron process, every
``GONGZHU_ARCHIVE_SWEEP_S``).

A match's blob is written before its result is recorded (:meth:`arena.store.Store.record_result`),
so a worker dying in between leaves a blob no match names: harmless, and the sweep removes it
once it is older than :data:`SWEEP_AGE_S`, far longer than any job takes from writing its blob
to recording it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arena.archive import TEMPORARY_AGE_S
from arena.context import Arena
from replays.integrity import IntegrityError, digest, pack, unpack

logger = logging.getLogger(__name__)

SWEEP_AGE_S = 24 * 3600
"""A blob no match names is removed once it is older than this (a day)."""


def checked(blob: bytes) -> bytes:
    """A log kept in Redis, as it is, once checked against its seal's SHA-256; an
    :class:`IntegrityError` if it is not what was sealed."""
    _sealed(blob)
    return blob


def repacked(blob: bytes) -> bytes:
    """A log kept in Redis, checked (:func:`checked`), in the current, smaller stored form
    (:func:`replays.integrity.pack`)."""
    return pack(_sealed(blob))


def _sealed(blob: bytes) -> dict[str, Any]:
    sealed = unpack(blob)
    recorded = sealed.get("integrity", {}).get("sha256")
    if digest(sealed) != recorded:
        raise IntegrityError("the log kept in Redis does not match its seal's SHA-256")
    return sealed


@dataclass
class Migration:
    """What a migration did: logs moved, and those left in Redis with the reason."""

    moved: int = 0
    left: dict[str, str] | None = None

    def leave(self, match_id: str, reason: str) -> None:
        self.left = {**(self.left or {}), match_id: reason}


def to_migrate(arena: Arena) -> list[str]:
    """The matches whose logs are still in Redis."""
    return arena.store.replays_in_redis()


def migrate(
    arena: Arena, match_ids: list[str], *, each: Callable[[str], None], repack: bool = False
) -> Migration:
    """Move the logs of ``match_ids`` from Redis to the archive, each checked against its seal
    (and, with ``repack``, packed in the current stored form: smaller, slower), written, read
    back, then named by its match and deleted from Redis in one transaction
    (:meth:`arena.store.Store.migrate_replay`). A log that fails its check stays in Redis and
    is reported; ``each`` is called after each match (a progress bar). Safe to stop at any
    point and run again: what is moved is not found again."""
    done = Migration()
    for match_id in match_ids:
        try:
            if arena.store.migrate_replay(match_id, repacked if repack else checked):
                done.moved += 1
        except (IntegrityError, ValueError) as error:
            done.leave(match_id, str(error))
        each(match_id)
    return done


def sweep(arena: Arena, *, now: float | None = None) -> int:
    """Remove the blobs older than :data:`SWEEP_AGE_S` that no recorded match names, and the
    temporary files older than :data:`arena.archive.TEMPORARY_AGE_S` (writes cut short);
    returns how many blobs were removed."""
    now = time.time() if now is None else now
    cutoff = now - SWEEP_AGE_S
    removed = 0
    for kept in arena.store.archive.blobs():
        if kept.written < cutoff and not arena.store.log_referenced(kept.digest):
            arena.store.archive.delete(kept.digest)
            removed += 1
    if removed:
        logger.info("archive sweep: removed %d blob(s) no match references", removed)
    cleared = arena.store.archive.clear_temporaries(now - TEMPORARY_AGE_S)
    if cleared:
        logger.info("archive sweep: removed %d temporary file(s) of writes cut short", cleared)
    return removed
