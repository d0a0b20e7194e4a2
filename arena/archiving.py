"""The archive's upkeep (docs/OPERATIONS.md, "The archive of sealed logs"): the logs it could
not take when their matches were recorded, moved into it once it takes writes again
(:func:`move_held`, the cron process every ``GONGZHU_RECOVERY_S``); the logs recorded before
it moved out of Redis (``gongzhu migrate-replays``); the sweep of blobs no match references and
of temporary files that writes cut short left (the cron process, every
``GONGZHU_ARCHIVE_SWEEP_S``); what ``/ready`` says of it (:func:`status`).

**An archive outage costs no match.** A log the archive cannot take when its match is recorded
is held in Redis, in the result's own transaction (:meth:`arena.store.Store.record_result`):
the result counts at once, its replay is served from Redis (checked against its name like any
stored log), and :func:`move_held` writes it to the archive, reads it back and only then drops
it from Redis. The match's record names the blob from the start, exactly as if the archive had
never failed. This is chosen over retrying the write alone with back-off because a retry holds
the match's job (and its place among its worker's matches) for as long as the outage lasts, its
result, standings, ratings and the next rotation of its ladder table or gauntlet waiting with
it, and a worker that dies meanwhile loses the match, which is then played again; held, nothing
waits. What it costs is Redis's memory: at most ``GONGZHU_ARCHIVE_HOLD_MB`` of logs are held
(about 4.5 KB a five-hand match). Past that bound a match whose log cannot be archived fails
its run, as it did before the hold existed: its job is run again (the match played again) and,
its retries spent, the match is failed, then queued again by :mod:`arena.healing` once the
archive takes writes.

A match's blob is written before its result is recorded, so a worker dying in between leaves a
blob no match names: harmless, and the sweep removes it once it is older than
:data:`SWEEP_AGE_S`, far longer than any job takes from writing its blob to recording it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arena.archive import TEMPORARY_AGE_S, digest_of
from arena.context import Arena
from arena.errors import ArchiveError
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


def move_held(arena: Arena) -> int:
    """Move the logs held in Redis into the archive, each written, read back, then dropped from
    Redis; returns how many were moved. Stops at the first the archive refuses (it is still
    out: the next call tries again). A held log that no longer hashes to its name (damaged in
    Redis) is left there and logged: it is never archived under a name it does not have."""
    store = arena.store
    moved = 0
    for name in store.held_logs():
        blob = store.held_log(name)
        if blob is None:  # moved meanwhile
            continue
        if digest_of(blob) != name:
            logger.error("the log %s held in Redis is damaged: it does not hash to its name", name)
            continue
        try:
            store.archive.put(blob)
            store.archive.get(name)  # read back: an ArchiveError unless it returns it intact
        except ArchiveError as error:
            logger.warning("%d log(s) still held in Redis: %s", len(store.held_logs()), error)
            break
        moved += store.release_held(name)
    if moved:
        logger.info("moved %d log(s) held in Redis into the archive", moved)
    return moved


def status(arena: Arena) -> dict[str, Any]:
    """What ``/ready`` says of the archive: whether it takes writes now (probed at most every
    :data:`arena.archive.PROBE_S` in a process), and the logs held in Redis waiting for it."""
    waiting, size = arena.store.held_size()
    return {
        "writable": arena.archive_probe.writable(),
        "logs_waiting": waiting,
        "bytes_waiting": size,
    }
