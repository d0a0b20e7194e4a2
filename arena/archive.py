"""Where sealed match logs live: an archive outside Redis, addressed by the SHA-256 of the
stored bytes (docs/REPLAYS.md, "Where logs live").

One small interface, :class:`Archive`: ``put(blob)`` returns the blob's digest once the blob is
durable, ``get(digest)`` returns exactly those bytes or raises :class:`~arena.errors.ArchiveError`
(a blob missing, or whose bytes no longer hash to its name: never a wrong log), ``blobs()``
lists what is kept with each blob's age and ``delete`` removes one (the sweep's, for blobs no
match references); ``probe`` says whether the archive takes writes now (``/ready``), and
``clear_temporaries`` removes what writes cut short left behind. Content addressing makes a
write idempotent: the same bytes always go under the same name, so a job played again writes
nothing new or a blob of its own.

A write cut short (the process killed, the disk full, an upload broken off) never leaves a blob
under a name: a directory's blob appears only by the rename of a whole, fsynced file, and an S3
object only when the server has the whole body and has checked its SHA-256. What such a write
leaves is a temporary file (a directory's; the sweep clears it once it is older than
:data:`TEMPORARY_AGE_S`) or nothing (S3).

Two kinds, chosen by ``GONGZHU_ARCHIVE`` (:func:`open_archive`): a directory (the default, in
the data directory), or an S3-compatible bucket (``s3://bucket/prefix``) through boto3.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from botocore.exceptions import BotoCoreError, ClientError

from arena.errors import ArchiveError

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

logger = logging.getLogger(__name__)

S3_SCHEME = "s3://"
TEMPORARY_AGE_S = 3600
"""A directory archive's temporary file older than this (an hour) is one a killed writer left:
a write takes milliseconds (a log is kilobytes), and a writer that is somehow still at it when
its temporary file is cleared fails its rename, an :class:`ArchiveError` like any failed write,
and leaves no blob."""
PROBE_KEY = ".gongzhu-probe"
"""The empty object an S3 archive's :meth:`~S3Archive.probe` writes (not a digest: never a blob)."""


def digest_of(blob: bytes) -> str:
    """A blob's name in the archive: the hex SHA-256 of its bytes."""
    return hashlib.sha256(blob).hexdigest()


def checked(digest: str, blob: bytes | None) -> bytes:
    """``blob`` if it is the blob named ``digest``; :class:`ArchiveError` if it is missing or
    its bytes hash to another name (damaged, or replaced)."""
    if blob is None:
        raise ArchiveError(f"the archive has no blob {digest}: it is missing")
    if digest_of(blob) != digest:
        raise ArchiveError(f"the archive's blob {digest} is damaged: its SHA-256 does not match")
    return blob


def _is_digest(name: str) -> bool:
    return len(name) == 64 and all(c in "0123456789abcdef" for c in name)


def _valid(digest: str) -> str:
    if not _is_digest(digest):
        raise ValueError(f"{digest!r} is not a SHA-256 in hex")
    return digest


@dataclass(frozen=True)
class Kept:
    """A blob the archive holds: its name and when it was last written (seconds since the
    epoch)."""

    digest: str
    written: float


class Archive(Protocol):
    def put(self, blob: bytes) -> str:
        """Keep ``blob`` durably (on return it survives a crash) and return its digest."""
        ...

    def get(self, digest: str) -> bytes:
        """The blob named ``digest``, checked against it; :class:`ArchiveError` otherwise."""
        ...

    def blobs(self) -> Iterator[Kept]:
        """Every blob kept, in no particular order."""
        ...

    def delete(self, digest: str) -> None:
        """Remove the blob named ``digest`` (nothing if there is none)."""
        ...

    def probe(self) -> None:
        """Return if the archive takes a write now; :class:`ArchiveError` otherwise."""
        ...

    def clear_temporaries(self, older_than: float) -> int:
        """Remove what writes cut short left, last changed before ``older_than`` (seconds since
        the epoch); returns how many were removed."""
        ...


class DirectoryArchive:
    """Blobs as files ``<root>/<first 2 hex digits>/<digest>``. A blob is written to a temporary
    file in its directory, fsynced, renamed to its name and the directory fsynced: once
    :meth:`put` returns, the blob is there after a crash or a power cut, whole or not at all."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, digest: str) -> Path:
        return self.root / digest[:2] / _valid(digest)

    def put(self, blob: bytes) -> str:
        digest = digest_of(blob)
        path = self._path(digest)
        try:
            made = not path.parent.exists()
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists() and path.read_bytes() == blob:  # kept already: written now
                os.utime(path)
                return digest
            fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(blob)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(temporary, path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
            _fsync_directory(path.parent)
            if made:  # the new directory's own entry
                _fsync_directory(self.root)
        except OSError as error:
            raise ArchiveError(f"cannot write to the archive {self.root}: {error}") from None
        return digest

    def get(self, digest: str) -> bytes:
        try:
            blob: bytes | None = self._path(digest).read_bytes()
        except FileNotFoundError:
            blob = None
        except OSError as error:
            raise ArchiveError(f"cannot read the archive {self.root}: {error}") from None
        return checked(digest, blob)

    def blobs(self) -> Iterator[Kept]:
        for path in self.root.glob("??/*"):
            if not _is_digest(path.name):  # a temporary file, or not the archive's
                continue
            try:
                yield Kept(path.name, path.stat().st_mtime)
            except FileNotFoundError:  # deleted meanwhile
                continue

    def delete(self, digest: str) -> None:
        self._path(digest).unlink(missing_ok=True)

    def probe(self) -> None:
        """A temporary file created in the archive's directory and removed."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=self.root, prefix=".", suffix=".probe")
            os.close(fd)
            os.unlink(temporary)
        except OSError as error:
            raise ArchiveError(f"cannot write to the archive {self.root}: {error}") from None

    def clear_temporaries(self, older_than: float) -> int:
        removed = 0
        for path in [*self.root.glob("??/.*.tmp"), *self.root.glob(".*.probe")]:
            try:
                if path.stat().st_mtime < older_than:
                    path.unlink()
                    removed += 1
            except FileNotFoundError:  # renamed into place, or removed, meanwhile
                continue
        return removed


def _fsync_directory(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class S3Archive:
    """Blobs as objects ``<prefix><digest>`` in an S3-compatible bucket (AWS S3, MinIO, …).
    A ``PutObject`` is durable when it returns, and sends the blob's SHA-256 for the server to
    check (``ChecksumSHA256``), so a blob damaged on the way is refused, not kept."""

    def __init__(self, client: S3Client, bucket: str, prefix: str = "") -> None:
        self.client = client
        self.bucket = bucket
        self.prefix = prefix

    def put(self, blob: bytes) -> str:
        digest = digest_of(blob)
        self._put(self.prefix + digest, blob)
        return digest

    def _put(self, key: str, blob: bytes) -> None:
        try:
            self.client.put_object(
                Bucket=self.bucket,
                Key=key,
                Body=blob,
                ChecksumSHA256=base64.b64encode(hashlib.sha256(blob).digest()).decode(),
            )
        except (BotoCoreError, ClientError) as error:
            raise ArchiveError(f"cannot write to the archive s3://{self.bucket}: {error}") from None

    def get(self, digest: str) -> bytes:
        try:
            reply = self.client.get_object(Bucket=self.bucket, Key=self.prefix + _valid(digest))
            blob: bytes | None = reply["Body"].read()
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") not in ("NoSuchKey", "404"):
                raise ArchiveError(f"cannot read the archive s3://{self.bucket}: {error}") from None
            blob = None
        except BotoCoreError as error:
            raise ArchiveError(f"cannot read the archive s3://{self.bucket}: {error}") from None
        return checked(digest, blob)

    def blobs(self) -> Iterator[Kept]:
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=self.prefix
        )
        for page in pages:
            for item in page.get("Contents", ()):
                name = item["Key"][len(self.prefix) :]
                if _is_digest(name):  # not the probe, nor another program's object
                    yield Kept(name, item["LastModified"].timestamp())

    def delete(self, digest: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self.prefix + _valid(digest))

    def probe(self) -> None:
        """An empty object written under :data:`PROBE_KEY` (``s3:PutObject``, as a log is)."""
        self._put(self.prefix + PROBE_KEY, b"")

    def clear_temporaries(self, older_than: float) -> int:
        """Nothing to clear: a ``PutObject`` broken off leaves no part of its object."""
        return 0


def open_archive(location: str, *, s3_endpoint: str = "") -> Archive:
    """The archive ``location`` names: ``s3://bucket/prefix`` (at ``s3_endpoint``, else AWS;
    credentials and region from boto3's usual variables and files), else a directory."""
    if not location.startswith(S3_SCHEME):
        return DirectoryArchive(Path(location))
    bucket, _, prefix = location.removeprefix(S3_SCHEME).partition("/")
    if not bucket:
        raise ValueError(f"{location!r} names no bucket: write s3://bucket or s3://bucket/prefix")
    import boto3  # noqa: PLC0415 - loaded only for an S3 archive (it takes a while)
    from botocore.config import Config  # noqa: PLC0415 - likewise

    # a server that cannot be reached, or does not answer, is an ArchiveError after 3 attempts
    # of 5 s to connect and 5 s to read (the answer to a log of kilobytes), not botocore's 60 s
    # each of 5 attempts: a match job, and /ready's probe, do not wait minutes for it
    timeouts = Config(
        connect_timeout=5, read_timeout=5, retries={"mode": "standard", "max_attempts": 3}
    )
    client = boto3.client("s3", endpoint_url=s3_endpoint or None, config=timeouts)
    return S3Archive(client, bucket, prefix.strip("/") + "/" if prefix.strip("/") else "")


PROBE_S = 5.0
"""How long a process reuses its last :class:`Probe` of the archive."""


class Probe:
    """Whether ``archive`` takes writes, probed (:meth:`Archive.probe`) at most once every
    :data:`PROBE_S` seconds: ``/ready`` asks on every call, and stays cheap. While one caller
    probes, the others are answered what the last probe found."""

    def __init__(self, archive: Archive, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.archive = archive
        self._clock = clock
        self._lock = threading.Lock()
        self._at: float | None = None
        self._error: str | None = None

    def writable(self) -> bool:
        at = self._at
        if at is not None and self._clock() - at < PROBE_S:
            return self._error is None
        if not self._lock.acquire(blocking=at is None):  # another caller is probing
            return self._error is None
        try:
            try:
                self.archive.probe()
                error = None
            except ArchiveError as failed:
                error = str(failed)
            if error is not None and self._error is None:
                logger.warning("the archive takes no writes: %s", error)
            elif error is None and self._error is not None:
                logger.warning("the archive takes writes again")
            self._error, self._at = error, self._clock()
        finally:
            self._lock.release()
        return self._error is None
