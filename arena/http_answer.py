"""Reading a bot's HTTP/1.1 answer from its connection: :class:`Answer`.

The head is read as :mod:`http.client` reads it (the same status line checks, ``100 Continue``
skipped, at most :data:`MAX_FIELDS` header lines of at most :data:`MAX_LINE` bytes, the same
rules for a connection that closes), but only the few fields the arena uses are kept, from the
bytes as they were received: parsing each head into an email message through a buffered file,
as :class:`http.client.HTTPResponse` does, was a quarter of the arena's CPU per decision. A
head that came whole with the first bytes received (the usual case) is split in one step, where
reading it line by line could end no other way; tests/workers/test_http_answer.py compares the
two. The body is then read in pieces, by its length, chunked, or to the connection's end (a
small one already received, at once); one cut short of what its framing announced is an error,
never an answer.

A failure is a :class:`HttpAnswerError`, in words a bot author can act on, or the socket's own
``OSError``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

MAX_LINE = 65536
"""The longest line of a head (as :mod:`http.client`)."""
MAX_FIELDS = 100
"""The most header lines in a head (as :mod:`http.client`)."""
_NO_BODY = frozenset({204, 304})
_KEPT = ("location", "connection", "keep-alive", "content-length", "transfer-encoding")


class HttpAnswerError(Exception):
    """The bytes on the connection are not an HTTP answer, or one cut short."""


Receive = Callable[[], bytes]
"""The next bytes from the connection, as many as came at once; empty at its end."""


class Answer:
    """An answer whose head has been read from the connection (``receive``): its status,
    ``Location``, and whether the connection closes after it; the body is read with
    :meth:`pieces`."""

    def __init__(self, receive: Receive) -> None:
        self._receive = receive
        self._buffer = bytearray()
        """Received and not yet read (appended to in place: a line dripped byte by byte is
        not copied again for each byte)."""
        head = self._whole_head()
        if head is not None:
            version, self.status, fields = head
        else:
            version, self.status = self._status_line()
            while self.status == 100:  # an interim answer: the real one follows
                self._fields()
                version, self.status = self._status_line()
            fields = self._fields()
        self.location = fields.get("location")
        self.chunked = fields.get("transfer-encoding", "").lower() == "chunked"
        self.length = _length(fields.get("content-length"))
        """The body's length in bytes, None when it is chunked or ends with the connection."""
        if self.status in _NO_BODY or self.status < 200:
            self.length = 0
        elif self.chunked:
            self.length = None
        connection = fields.get("connection", "").lower()
        if version == 11:
            keep = "close" not in connection
        else:  # HTTP/1.0 keeps the connection only when the bot says so
            keep = "keep-alive" in fields or "keep-alive" in connection
        self.will_close = not keep or (self.length is None and not self.chunked)
        """Whether the bot closes the connection after this answer."""

    def received(self, size: int) -> bytes | None:
        """The whole body, taken at once, if its length frames it, is at most ``size`` bytes
        and has all been received (the usual small answer); else None, with nothing taken:
        read it with :meth:`pieces`."""
        length = self.length
        if self.chunked or length is None or length > size or len(self._buffer) < length:
            return None
        body = bytes(self._buffer[:length])
        del self._buffer[:length]
        return body

    def pieces(self, size: int) -> Iterator[bytes]:
        """The body in pieces of at most ``size`` bytes, as they are read."""
        if self.chunked:
            yield from self._chunks(size)
        elif self.length is None:
            while piece := self._take(size):
                yield piece
        else:
            yield from self._exactly(self.length, size)

    def _chunks(self, size: int) -> Iterator[bytes]:
        while True:
            line = self._line()
            try:
                left = int(line.split(b";", 1)[0], 16)
            except ValueError:
                raise HttpAnswerError(f"a chunk's size is not a number: {line[:40]!r}") from None
            if left < 0:
                raise HttpAnswerError(f"a chunk's size is negative: {line[:40]!r}")
            if left == 0:
                break
            yield from self._exactly(left, size)
            self._line()  # the chunk's end of line
        while self._line() not in (b"\r\n", b"\n", b""):  # trailer fields: not used
            continue

    def _exactly(self, length: int, size: int) -> Iterator[bytes]:
        left = length
        while left:
            piece = self._take(min(size, left))
            if not piece:
                raise HttpAnswerError(
                    f"the connection ended {left} bytes before the length it announced"
                )
            left -= len(piece)
            yield piece

    def _status_line(self) -> tuple[int, int]:
        """The HTTP version (10 or 11) and the status."""
        return _status(self._line().decode("iso-8859-1"))

    def _fields(self) -> dict[str, str]:
        """The head's fields the arena reads, by lower-case name (the first of each)."""
        fields: dict[str, str] = {}
        for _ in range(MAX_FIELDS + 1):
            line = self._line()
            if line in (b"\r\n", b"\n", b""):
                return fields
            _keep(fields, line.decode("iso-8859-1"))
        raise HttpAnswerError(f"the answer's head has more than {MAX_FIELDS} fields")

    def _whole_head(self) -> tuple[int, int, dict[str, str]] | None:
        """The version, status and fields of a head that came whole in the first bytes
        received, read at once where reading it line by line could end no other way: a final
        answer (not ``100 Continue``), every line ending with CRLF, within :data:`MAX_LINE`
        and :data:`MAX_FIELDS`. Else None, with nothing taken: the head is read line by line."""
        buffer = self._buffer
        buffer += self._receive()
        end = buffer.find(b"\r\n\r\n")
        if end <= 0 or end + 2 > MAX_LINE:
            return None
        head = buffer[:end]
        ends = head.count(b"\r\n")
        if head.count(b"\n") != ends or ends > MAX_FIELDS:
            return None  # a line ending with a bare LF, or too many fields
        status_line, *lines = head.decode("iso-8859-1").split("\r\n")
        try:
            version, status = _status(status_line)
        except HttpAnswerError:
            return None  # the same error, from the line as received
        if status == 100:
            return None
        del buffer[: end + 4]
        fields: dict[str, str] = {}
        for line in lines:
            _keep(fields, line)
        return version, status, fields

    def _take(self, size: int) -> bytes:
        """At most ``size`` bytes of what was received (receiving more if none is left)."""
        if not self._buffer:
            self._buffer += self._receive()
        piece = bytes(self._buffer[:size])
        del self._buffer[:size]
        return piece

    def _line(self) -> bytes:
        """The next line with its end (what is left at the connection's end)."""
        start = 0
        while (end := self._buffer.find(b"\n", start)) < 0:
            start = len(self._buffer)
            if start > MAX_LINE:
                break
            more = self._receive()
            if not more:
                break
            self._buffer += more
        cut = len(self._buffer) if end < 0 else end + 1
        if cut > MAX_LINE:
            raise HttpAnswerError(f"a line of the answer is longer than {MAX_LINE // 1024} KiB")
        line = bytes(self._buffer[:cut])
        del self._buffer[:cut]
        return line


def _status(line: str) -> tuple[int, int]:
    """The HTTP version (10 or 11) and the status of a status line."""
    if not line:
        raise HttpAnswerError("Remote end closed connection without response")
    version, status, *_ = [*line.split(None, 2), "", ""]
    if not version.startswith("HTTP/") or not (status.isdigit() and len(status) == 3):
        raise HttpAnswerError(f"not an HTTP status line: {line[:80]!r}")
    if version in ("HTTP/1.0", "HTTP/0.9"):
        return 10, int(status)
    if version.startswith("HTTP/1."):
        return 11, int(status)
    raise HttpAnswerError(f"not HTTP/1: {version[:20]!r}")


def _keep(fields: dict[str, str], line: str) -> None:
    """Note ``line``'s field in ``fields`` if the arena reads it and it is its first."""
    name, colon, value = line.partition(":")
    name = name.lower()
    if colon and name in _KEPT:
        fields.setdefault(name, value.strip())


def _length(field: str | None) -> int | None:
    if field is None:
        return None
    try:
        length = int(field)
    except ValueError:
        return None
    return length if length >= 0 else None
