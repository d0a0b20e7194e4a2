"""The archive of sealed logs, both kinds through the one interface: a directory, and an S3
bucket on moto's standalone S3 server (``moto_server``, started here on a free loopback port:
no S3-compatible server installs from the package registries this project uses). What is put
comes back; the same bytes go under the same name; a blob missing or damaged is an
ArchiveError, never other bytes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
import requests

from arena.archive import Archive, DirectoryArchive, S3Archive, digest_of, open_archive
from arena.errors import ArchiveError
from arena.redis_server import free_port

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
