"""What the Redis client answers, as the store reads it: hashes and lists of UTF-8 strings."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def fields(raw: Mapping[bytes, bytes]) -> dict[str, str]:
    """An ``HGETALL`` reply, decoded (empty for a missing key)."""
    return {k.decode(): v.decode() for k, v in raw.items()}


def texts(raw: Iterable[bytes]) -> list[str]:
    """A list or set of members, decoded."""
    return [v.decode() for v in raw]
