"""Reading a bot's answer (``arena.http_answer``) from scripted bytes: the status line, the
head's limits, which answers close the connection, and the three ways a body ends, none of them
taken whole when cut short."""

from __future__ import annotations

import pytest

from arena.http_answer import MAX_FIELDS, MAX_LINE, Answer, HttpAnswerError


def answer(raw: bytes, at_once: int = 7) -> Answer:
    """The answer to ``raw``, received ``at_once`` bytes at a time (lines and bodies straddle
    the reads)."""
    reads = iter([raw[i : i + at_once] for i in range(0, len(raw), at_once)])
    return Answer(lambda: next(reads, b""))


def body(raw: bytes, size: int = 4) -> tuple[list[bytes], Answer]:
    read = answer(raw)
    return list(read.pieces(size)), read


def test_a_body_by_its_length_comes_in_pieces_and_the_connection_stays() -> None:
    pieces, read = body(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789extra")
    assert b"".join(pieces) == b"0123456789" and max(map(len, pieces)) <= 4
    assert (read.status, read.location, read.will_close) == (200, None, False)


def test_a_chunked_body_is_joined_and_its_trailer_skipped() -> None:
    raw = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 99\r\n\r\n"
        b"6;ext=1\r\nabcdef\r\n2\r\ngh\r\n10\r\n0123456789abcdef\r\n0\r\nTrailer: x\r\n\r\n"
    )
    pieces, read = body(raw)
    assert b"".join(pieces) == b"abcdefgh0123456789abcdef" and max(map(len, pieces)) <= 4
    assert read.will_close is False


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123", "ended 6 bytes before"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabc", "ended 3 bytes"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n", "not a number"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "not a number"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n", "negative"),
    ],
    ids=["length", "chunk", "no-last-chunk", "bad-size", "negative-size"],
)
def test_a_body_cut_short_or_garbled_is_an_error(raw: bytes, message: str) -> None:
    with pytest.raises(HttpAnswerError, match=message):
        body(raw)


def test_a_body_without_a_length_ends_with_the_connection_which_closes() -> None:
    pieces, read = body(b"HTTP/1.1 200 OK\r\n\r\nall of it")
    assert b"".join(pieces) == b"all of it" and read.will_close


@pytest.mark.parametrize(
    ("head", "closes"),
    [
        (b"HTTP/1.1 200 OK\r\nConnection: close", True),
        (b"HTTP/1.1 200 OK\r\nConnection: keep-alive", False),
        (b"HTTP/1.0 200 OK", True),
        (b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive", False),
        (b"HTTP/1.0 200 OK\r\nKeep-Alive: timeout=5", False),
        (b"HTTP/1.0 200 OK\r\nKeep-Alive", True),  # not a field: no colon
    ],
)
def test_which_answers_close_the_connection(head: bytes, closes: bool) -> None:
    assert answer(head + b"\r\nContent-Length: 0\r\n\r\n").will_close is closes


@pytest.mark.parametrize("status", [204, 304, 199])
def test_answers_that_have_no_body(status: int) -> None:
    pieces, read = body(f"HTTP/1.1 {status} X\r\n\r\nnot a body".encode())
    assert (pieces, read.status, read.will_close) == ([], status, False)


def test_an_interim_100_is_skipped_and_the_location_kept() -> None:
    read = answer(
        b"HTTP/1.1 100 Continue\r\nX: y\r\n\r\n"
        b"HTTP/1.1 302 Found\r\nlocation:  https://elsewhere.example/ \r\nContent-Length: 0\r\n\r\n"
    )
    assert (read.status, read.location) == (302, "https://elsewhere.example/")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"", "closed connection without response"),
        (b"HTTP/1.1 2\r\n\r\n", "not an HTTP status line"),
        (b"HTTP/1.1 OK\r\n\r\n", "not an HTTP status line"),
        (b"HTTP/1.1 2000 OK\r\n\r\n", "not an HTTP status line"),
        (b"SPDY/3 200 OK\r\n\r\n", "not an HTTP status line"),
        (b"HTTP/2 200 OK\r\n\r\n", "not HTTP/1"),
        (b"HTTP/1.1 200 OK\r\nX: " + b"x" * MAX_LINE + b"\r\n\r\n", "longer than 64 KiB"),
        (b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * (MAX_FIELDS + 1) + b"\r\n", "more than 100"),
    ],
    ids=[
        "nothing",
        "short-status",
        "no-status",
        "long-status",
        "not-http",
        "http2",
        "long-line",
        "fields",
    ],
)
def test_what_is_not_an_answer_says_why(raw: bytes, message: str) -> None:
    with pytest.raises(HttpAnswerError, match=message):
        answer(raw)


def test_a_head_of_the_most_fields_is_read() -> None:
    raw = b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * (MAX_FIELDS - 1) + b"Content-Length: 2\r\n\r\nok"
    assert body(raw)[0] == [b"ok"]


def _outcome(raw: bytes, at_once: int) -> tuple[object, ...]:
    """What reading ``raw`` gives: the answer's fields and body, or its error's message."""
    try:
        read = answer(raw, at_once)
        content = b"".join(read.pieces(1 << 20))
    except HttpAnswerError as error:
        return ("error", str(error))
    return (read.status, read.location, read.will_close, read.length, content)


_X = b"X: " + b"x" * (64 * 1024 - 5)
"""A field line of exactly 64 KiB with its CRLF, :mod:`http.client`'s longest."""
_STATUS = b"HTTP/1.1 200 " + b"x" * (64 * 1024 - 15)
"""A status line of exactly 64 KiB with its CRLF."""
HEADS = {
    "plain": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nServer: w\r\n\r\nok",
    "no-fields": b"HTTP/1.1 200 OK\r\n\r\nbody\r\n\r\nmore",
    "bare-lf": b"HTTP/1.1 200 OK\nContent-Length: 2\nConnection: close\n\nok",
    "mixed-lf": b"HTTP/1.1 200 OK\r\nConnection: close\nContent-Length: 2\r\n\r\nok",
    "lf-blank": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\nX: y\r\n\r\nok",
    "longest-line": b"HTTP/1.1 200 OK\r\n" + _X + b"\r\n\r\nok",
    "too-long-line": b"HTTP/1.1 200 OK\r\n" + _X + b"x\r\n\r\nok",
    "longest-status": _STATUS + b"\r\nContent-Length: 2\r\n\r\nok",
    "too-long-status": _STATUS + b"x\r\n\r\nok",
    "longest-alone": _STATUS + b"\r\n\r\nok",
    "most-fields": b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * (MAX_FIELDS - 1) + b"A: b\r\n\r\n",
    "too-many": b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * MAX_FIELDS + b"A: b\r\n\r\n",
    "first-wins": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-length: 9\r\n\r\nok",
    "interim": b"HTTP/1.1 100 Continue\r\nX: y\r\n\r\nHTTP/1.1 204 No\r\nLocation: /a\r\n\r\n",
    "no-blank": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n",
    "chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
    "no-length": b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nall of it",
    "no-colon": b"HTTP/1.0 200 OK\r\nKeep-Alive\r\nContent-Length: 2\r\n\r\nok",
    "under-100": b"HTTP/1.1 099 Odd\r\nX: y\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    "identity": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 2\r\n\r\nok",
}


@pytest.mark.parametrize("raw", HEADS.values(), ids=HEADS.keys())
def test_a_head_received_at_once_reads_as_one_received_byte_by_byte(raw: bytes) -> None:
    assert _outcome(raw, len(raw)) == _outcome(raw, 1)


@pytest.mark.parametrize("at_once", [1, 1 << 20], ids=["byte-by-byte", "at-once"])
def test_the_head_s_limits_hold_however_it_is_received(at_once: int) -> None:
    assert _outcome(HEADS["longest-line"], at_once)[-1] == b"ok"
    assert "longer than 64 KiB" in str(_outcome(HEADS["too-long-line"], at_once))
    assert _outcome(HEADS["longest-status"], at_once)[-1] == b"ok"
    assert "longer than 64 KiB" in str(_outcome(HEADS["too-long-status"], at_once))
    assert _outcome(HEADS["most-fields"], at_once)[0] == 200
    assert "more than 100" in str(_outcome(HEADS["too-many"], at_once))
    assert _outcome(HEADS["first-wins"], at_once)[-1] == b"ok"


def test_a_small_body_already_received_is_taken_at_once_and_any_other_left_to_pieces() -> None:
    raw = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody"
    whole = answer(raw, len(raw))
    assert whole.received(4) == b"body"
    assert answer(raw, len(raw)).received(5) == b"body"
    followed = raw + b"HTTP/1.1"  # bytes after the answer, received with it
    assert answer(followed, len(followed)).received(4) == b"body"
    larger = answer(raw, len(raw))
    assert larger.received(3) is None
    assert b"".join(larger.pieces(3)) == b"body"
    partly = answer(raw, len(raw) - 2)
    assert partly.received(4) is None
    assert b"".join(partly.pieces(4)) == b"body"
    for other in (HEADS["chunked"], b"HTTP/1.1 200 OK\r\n\r\nto the end"):
        read = answer(other, len(other))
        assert read.received(1 << 20) is None
        assert b"".join(read.pieces(4)) in (b"ok", b"to the end")


@pytest.mark.parametrize("length", ["-1", "ten", ""])
def test_a_length_that_is_not_a_count_is_none_and_the_body_ends_with_the_connection(
    length: str,
) -> None:
    pieces, read = body(f"HTTP/1.1 200 OK\r\nContent-Length: {length}\r\n\r\nall of it".encode())
    assert (b"".join(pieces), read.length, read.will_close) == (b"all of it", None, True)


@pytest.mark.parametrize(
    "raw",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbody\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nA: 1\r\nB: 2\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
    ],
    ids=["length", "chunked", "trailer", "interim"],
)
def test_an_answer_is_read_to_its_last_byte_and_no_further(raw: bytes) -> None:
    """What follows an answer on a kept-alive connection is left there, and nothing of the
    answer is: a byte at a time, the reads end exactly where the answer does."""
    reads = iter([bytes([byte]) for byte in raw + b"NEXT"])
    read = Answer(lambda: next(reads, b""))
    b"".join(read.pieces(4))
    assert b"".join(reads) == b"NEXT"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"X" * 100 + b"\r\n\r\n", "not an HTTP status line: '" + "X" * 80 + "'"),
        (b"HTTP/30" + b"9" * 50 + b" 200 OK\r\n\r\n", "not HTTP/1: 'HTTP/30" + "9" * 13 + "'"),
    ],
    ids=["status-line", "version"],
)
def test_a_wrong_status_line_is_quoted_cut_short(raw: bytes, message: str) -> None:
    for at_once in (1, len(raw)):
        with pytest.raises(HttpAnswerError) as wrong:
            answer(raw, at_once)
        assert str(wrong.value) == message


@pytest.mark.parametrize(
    ("size", "shown"),
    [(b"z" * 50, "z" * 40), (b"-" + b"1" * 50, "-" + "1" * 39)],
    ids=["not-a-number", "negative"],
)
def test_a_wrong_chunk_size_is_quoted_cut_short(size: bytes, shown: str) -> None:
    raw = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + size + b"\r\n"
    with pytest.raises(HttpAnswerError, match=f"size is .*: b'{shown}'$"):
        body(raw)


def test_a_transfer_coding_other_than_chunked_leaves_the_body_to_its_length() -> None:
    pieces, read = body(HEADS["identity"])
    assert (b"".join(pieces), read.chunked, read.will_close) == (b"ok", False, False)


@pytest.mark.parametrize("at_once", [1, 1 << 20], ids=["byte-by-byte", "at-once"])
def test_only_100_is_an_interim_answer(at_once: int) -> None:
    """Another 1xx (or lower) status is the answer, with no body."""
    assert _outcome(HEADS["under-100"], at_once)[:4] == (99, None, False, 0)


@pytest.mark.parametrize("at_once", [1, 1 << 20], ids=["byte-by-byte", "at-once"])
def test_a_line_without_a_colon_is_no_field(at_once: int) -> None:
    """HTTP/1.0 keeps the connection only for a Keep-Alive field: a bare word is none."""
    assert _outcome(HEADS["no-colon"], at_once) == (200, None, True, 2, b"ok")
