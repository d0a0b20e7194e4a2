"""The archive of sealed logs, both kinds through the one interface: a directory, and an S3
bucket on moto's standalone S3 server (``moto_server``, started here on a free loopback port:
no S3-compatible server installs from the package registries this project uses). What is put
comes back; the same bytes go under the same name; a blob missing or damaged is an
ArchiveError, never other bytes; the probe says whether it takes writes; and a write cut short
(the disk full, the writer killed, an upload broken off) leaves no blob under the name, only a
temporary file that the sweep clears once it is older than any write could take."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import boto3
import pytest
import requests

from arena import archiving
from arena.archive import (
    PROBE_S,
    TEMPORARY_AGE_S,
    Archive,
    DirectoryArchive,
    Probe,
    S3Archive,
    digest_of,
    open_archive,
)
from arena.config import Config
from arena.context import Arena
from arena.errors import ArchiveError
from arena.redis_server import free_port
from tests.workers.archive_outage import DirectoryOutage, Proxy

BLOB = b"\x00a sealed log's stored form\xff" * 40


@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """moto's S3 server, a process of its own."""
    port = free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("moto_server")), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            requests.get(url, timeout=5)
            break
        except requests.RequestException:  # not listening yet, or slow to answer its first
            if time.monotonic() > deadline:
                server.kill()
                raise AssertionError("moto_server did not start") from None
            time.sleep(0.1)
    yield url
    server.terminate()
    server.wait(10)


@pytest.fixture
def s3_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(name, value)


def make_bucket(endpoint: str, name: str) -> None:
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=name)


@pytest.fixture(params=["directory", "s3"])
def archive(request: pytest.FixtureRequest, tmp_path: Path) -> Archive:
    if request.param == "directory":
        return open_archive(str(tmp_path / "archive"))
    endpoint = request.getfixturevalue("s3_endpoint")
    request.getfixturevalue("s3_credentials")
    bucket = f"logs-{tmp_path.name.lower().replace('_', '-')[-40:]}"
    make_bucket(endpoint, bucket)
    return open_archive(f"s3://{bucket}/season-1", s3_endpoint=endpoint)


def test_what_is_put_comes_back_under_its_sha256(archive: Archive) -> None:
    digest = archive.put(BLOB)
    assert digest == digest_of(BLOB)
    assert archive.get(digest) == BLOB
    assert [kept.digest for kept in archive.blobs()] == [digest]


def test_the_same_bytes_go_under_the_same_name_once(archive: Archive) -> None:
    first = archive.put(BLOB)
    assert archive.put(BLOB) == first  # a job played again writing what it wrote
    assert [kept.digest for kept in archive.blobs()] == [first]


def test_a_missing_blob_is_an_archive_error(archive: Archive) -> None:
    with pytest.raises(ArchiveError, match="missing"):
        archive.get(digest_of(b"never put"))


def test_a_damaged_blob_is_an_archive_error_not_other_bytes(archive: Archive) -> None:
    digest = archive.put(BLOB)
    damage(archive, digest, BLOB[:-1] + b"\x00")
    with pytest.raises(ArchiveError, match="damaged"):
        archive.get(digest)


def test_putting_a_damaged_blob_again_repairs_it(archive: Archive) -> None:
    digest = archive.put(BLOB)
    damage(archive, digest, b"rotten")
    assert archive.put(BLOB) == digest
    assert archive.get(digest) == BLOB


def test_a_deleted_blob_is_gone(archive: Archive) -> None:
    digest = archive.put(BLOB)
    archive.delete(digest)
    assert list(archive.blobs()) == []
    archive.delete(digest)  # twice is fine


def damage(archive: Archive, digest: str, content: bytes) -> None:
    """Overwrite the blob ``digest`` with ``content``, as a failing disk or a person might."""
    if isinstance(archive, DirectoryArchive):
        path = archive.root / digest[:2] / digest
        path.chmod(0o644)
        path.write_bytes(content)
    else:
        assert isinstance(archive, S3Archive)
        key = archive.prefix + digest
        archive.client.put_object(Bucket=archive.bucket, Key=key, Body=content)


def test_a_directory_blob_is_renamed_into_place_and_temporaries_are_not_blobs(
    tmp_path: Path,
) -> None:
    archive = DirectoryArchive(tmp_path)
    digest = archive.put(BLOB)
    assert (tmp_path / digest[:2] / digest).read_bytes() == BLOB
    (tmp_path / digest[:2] / ".abc.tmp").write_bytes(b"half")  # a writer that died
    assert [kept.digest for kept in archive.blobs()] == [digest]


def test_an_unwritable_directory_is_an_archive_error(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        root = tmp_path / "a-file"
        root.write_bytes(b"")  # root ignores permissions, not a file in the way
    else:
        root = tmp_path / "locked"
        root.mkdir(mode=0o500)
    with pytest.raises(ArchiveError, match="cannot write"):
        DirectoryArchive(root).put(BLOB)


def test_an_unreachable_bucket_is_an_archive_error(s3_credentials: None) -> None:
    archive = open_archive("s3://logs", s3_endpoint=f"http://127.0.0.1:{free_port()}")
    with pytest.raises(ArchiveError, match="cannot write"):
        archive.put(BLOB)


def test_an_s3_location_must_name_a_bucket() -> None:
    with pytest.raises(ValueError, match="no bucket"):
        open_archive("s3://")


# -- whether it takes writes (/ready) -------------------------------------------------------------


def test_a_probe_leaves_nothing_behind(archive: Archive) -> None:
    archive.probe()
    archive.probe()
    assert list(archive.blobs()) == []
    assert archive.clear_temporaries(time.time() + 3600) == 0


def test_an_archive_taken_away_fails_its_probe_and_passes_it_once_back(
    archive: Archive, tmp_path: Path
) -> None:
    digest = archive.put(BLOB)
    with taken_away(archive):
        with pytest.raises(ArchiveError, match="cannot write"):
            archive.probe()
        with pytest.raises(ArchiveError, match="cannot write"):
            archive.put(BLOB[::-1])
    archive.probe()
    assert archive.get(digest) == BLOB


@contextmanager
def taken_away(archive: Archive) -> Iterator[None]:
    """The archive unreachable: a directory's gone (a file in its place), an S3 bucket's server
    behind a proxy that refuses connections."""
    if isinstance(archive, DirectoryArchive):
        outage = DirectoryOutage(archive.root)
        outage.begin()
        try:
            yield
        finally:
            outage.end()
        return
    assert isinstance(archive, S3Archive)
    upstream = urlsplit(archive.client.meta.endpoint_url)
    proxy = Proxy((upstream.hostname or "", upstream.port or 80)).start()
    proxy.stop()
    away = open_archive(f"s3://{archive.bucket}/{archive.prefix}", s3_endpoint=proxy.url)
    assert isinstance(away, S3Archive)
    client, archive.client = archive.client, away.client
    try:
        yield
    finally:
        archive.client = client


def test_the_probe_is_kept_a_few_seconds(tmp_path: Path) -> None:
    now = [0.0]
    probe = Probe(DirectoryArchive(tmp_path / "archive"), clock=lambda: now[0])
    assert probe.writable()
    (tmp_path / "archive").rmdir()
    (tmp_path / "archive").write_bytes(b"")  # taken away
    assert probe.writable()  # the last probe's answer, for PROBE_S
    now[0] += PROBE_S
    assert not probe.writable()


# -- writes cut short ---------------------------------------------------------------------------

WRITER = """
import resource, signal, sys
from pathlib import Path
from arena.archive import DirectoryArchive
from arena.errors import ArchiveError

root, limit, full = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "full"
blob = sys.stdin.buffer.read()
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))  # no file grows past this
# failing the write (EFBIG, as a full disk fails it with ENOSPC), or killing the writer there
signal.signal(signal.SIGXFSZ, signal.SIG_IGN if full else signal.SIG_DFL)
try:
    DirectoryArchive(Path(root)).put(blob)
except ArchiveError as error:
    print(error)
    sys.exit(3)
"""
"""Writes ``stdin`` into the directory archive with files limited to ``limit`` bytes by the
kernel: the write stops half way, failing (``full``) or killing the writer (SIGXFSZ)."""

BIG = bytes(range(256)) * 1024  # 256 KiB: written in more than one go


def _write_cut_short(root: Path, how: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-c", WRITER, str(root), str(len(BIG) // 2), how],
        input=BIG,
        capture_output=True,
        check=False,
        timeout=60,
    )


def _temporaries(root: Path) -> list[Path]:
    return list(root.glob("??/.*.tmp"))


def test_a_directory_write_that_fails_half_way_leaves_no_blob_and_no_temporary(
    tmp_path: Path,
) -> None:
    root = tmp_path / "archive"
    written = _write_cut_short(root, "full")
    assert written.returncode == 3 and b"cannot write to the archive" in written.stdout
    archive = DirectoryArchive(root)
    assert not (root / digest_of(BIG)[:2] / digest_of(BIG)).exists()
    assert _temporaries(root) == []
    with pytest.raises(ArchiveError, match="missing"):
        archive.get(digest_of(BIG))
    assert archive.put(BIG) == digest_of(BIG) and archive.get(digest_of(BIG)) == BIG


def test_a_directory_writer_killed_half_way_leaves_no_blob_and_the_sweep_clears_its_temporary(
    tmp_path: Path,
) -> None:
    root = tmp_path / "archive"
    written = _write_cut_short(root, "killed")
    assert written.returncode == -signal.SIGXFSZ, written
    archive = DirectoryArchive(root)
    [left] = _temporaries(root)
    assert left.stat().st_size == len(BIG) // 2  # half of it written, then killed
    assert list(archive.blobs()) == []
    with pytest.raises(ArchiveError, match="missing"):
        archive.get(digest_of(BIG))
    assert archive.clear_temporaries(time.time() - TEMPORARY_AGE_S) == 0  # it may be writing
    assert archive.clear_temporaries(left.stat().st_mtime + 1) == 1
    assert _temporaries(root) == []


def test_the_archive_sweep_clears_temporaries_older_than_any_write_and_no_younger(
    config: Config,
) -> None:
    archive = DirectoryArchive(Path(config.archive))
    digest = archive.put(BLOB)
    old, young = (Path(config.archive) / digest[:2] / f".{name}.tmp" for name in ("old", "young"))
    for path in (old, young):
        path.write_bytes(b"half a log")
    stale = time.time() - TEMPORARY_AGE_S - 60
    os.utime(old, (stale, stale))
    archiving.sweep(Arena.from_config(config))
    assert not old.exists() and young.exists()
    assert archive.get(digest) == BLOB


def test_an_s3_upload_broken_off_half_way_is_an_archive_error_and_leaves_no_blob(
    s3_endpoint: str, s3_credentials: None, tmp_path: Path
) -> None:
    bucket = f"cut-{tmp_path.name.lower().replace('_', '-')[-40:]}"
    make_bucket(s3_endpoint, bucket)
    upstream = urlsplit(s3_endpoint)
    proxy = Proxy((upstream.hostname or "", upstream.port or 80)).start()
    try:
        proxy.cut_after = len(BIG) // 2  # every attempt: headers and half the body, then gone
        archive = open_archive(f"s3://{bucket}/season-1", s3_endpoint=proxy.url)
        with pytest.raises(ArchiveError, match="cannot write"):
            archive.put(BIG)
        proxy.cut_after = None
        with pytest.raises(ArchiveError, match="missing"):
            archive.get(digest_of(BIG))
        assert list(archive.blobs()) == []
        assert archive.put(BIG) == digest_of(BIG) and archive.get(digest_of(BIG)) == BIG
    finally:
        proxy.stop()
