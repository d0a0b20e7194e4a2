"""The ``python -m replays`` command: check, read and question a match log without the service.

    python -m replays verify match.json.z --public-key arena-replays.pem
    python -m replays show match.json --hand 2
    python -m replays export match.json --hand 2 --seat 1 > seat-1.json
    python -m replays reask match.json --hand 2 --decision 17 --url http://127.0.0.1:8000/
    python -m replays ruling ruling.json --original match.json --replacement replay.json --url …

FILE is a log's JSON or its stored form (zlib-compressed canonical JSON); ``-`` reads standard
input. ``verify`` and ``reask`` exit with 1 when the log or the bot fails the check; ``verify``
exits with 3 when every check it could make held but the log's authenticity was not checked (no
key: anyone can write a log and its SHA-256), unless told ``--digest-only``.
"""

from __future__ import annotations

import gc
import hashlib
import io
import json
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import contextmanager, nullcontext, redirect_stdout
from dataclasses import dataclass
from functools import cache
from typing import IO, TYPE_CHECKING, Any, NoReturn, TypeVar
from urllib.parse import quote

import click

from replays.continuation import ContinuationError, check_continuation
from replays.deals import DealScheme, SecretError, parse_secret
from replays.export import seat_view
from replays.integrity import (
    IntegrityError,
    check,
    digest,
    key_id_of,
    public_key_from_pem,
    unpack,
)
from replays.log import MatchLog
from replays.packing import Verified, verified
from replays.render import count, render_match
from replays.rulings import RulingError, check_amended
from replays.schema import InvalidLogError, validate
from replays.upgrade import LogReadError, read_log, upgrade
from replays.verify import Verification, check_deals
from replays.verify import verify as verify_log

if TYPE_CHECKING:
    import requests

_LOG_FILE = click.argument("file", type=click.File("rb"))


@click.group()
def main() -> None:
    """Gong Zhu match logs: verify one, show it, export a seat's view, ask a bot again."""


def load_data(blob: bytes) -> dict[str, Any]:
    """A log's JSON object from its plain JSON or its stored (packed) bytes."""
    try:
        data = json.loads(blob) if blob.lstrip()[:1] == b"{" else unpack(blob)
    except (ValueError, zlib.error) as error:
        raise click.ClickException(
            f"not a match log (neither JSON nor a packed log): {error}"
        ) from None
    if not isinstance(data, dict):
        raise click.ClickException("not a match log: a log is a JSON object")
    return data


def _read(file: IO[bytes]) -> MatchLog:
    try:
        return read_log(load_data(file.read()))
    except LogReadError as error:
        raise click.ClickException(str(error)) from None


def _ok(step: str, text: str) -> None:
    click.echo(f"{step:<10} ok: {text}")


def _fail(step: str, text: str) -> NoReturn:
    click.echo(f"{step:<10} FAILED: {text}")
    raise click.exceptions.Exit(1)


NOT_AUTHENTICATED = 3
"""``verify``'s exit status when the checks held but nothing showed who wrote the log."""
KEY_PATH = "/api/replays/public-key"


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.File("rb", lazy=True))
@click.option(
    "--public-key",
    type=click.File("rb"),
    help="The arena's public key (PEM): check the log's signature with it.",
)
@click.option(
    "--url",
    help=f"The arena's address (https://arena.example): fetch its public key from {KEY_PATH}, "
    "and each log's tournament's deal secret once the tournament has ended.",
)
@click.option(
    "--digest-only",
    is_flag=True,
    help="Without a key, accept the SHA-256 alone (it shows the log is intact, not who wrote it).",
)
@click.option(
    "--secret",
    help="The tournament's deal secret (64 hex characters), revealed when it ends: check every "
    "deal against the commitment with it (with --url, the arena's is fetched).",
)
@click.option(
    "--original",
    type=click.File("rb"),
    help="For a match that continues a voided one: the voided match's log, to check that its "
    "decisions were re-enacted and the contested one's recorded answer struck in.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="With several FILES, check this many at once, each in its own process.",
)
def verify(
    files: tuple[IO[bytes], ...],
    *,
    public_key: IO[bytes] | None,
    url: str | None,
    digest_only: bool,
    secret: str | None,
    original: IO[bytes] | None,
    jobs: int,
) -> None:
    """Check a log: its seal, its schema, its deals against their commitment, every decision,
    trick and score by the referee, and for a continuation, the voided match it continues.
    Given several FILES (a season's logs), each is checked and reported under its name; the
    exit status is the worst of theirs."""
    try:
        revealed = None if secret is None else parse_secret(secret)
    except SecretError as error:
        raise click.BadParameter(str(error), param_hint="--secret") from None
    if public_key is not None and url is not None:
        raise click.UsageError("give the arena's key with --public-key or --url, not both")
    if original is not None and len(files) > 1:
        raise click.UsageError("--original is the voided match of one log: give one FILE")
    pem = public_key.read() if public_key is not None else None if url is None else _fetch_key(url)
    _tournament.cache_clear()  # a command's own answers: a tournament may have ended since
    check = LogCheck(pem, digest_only, revealed, None if original is None else original.read(), url)
    if len(files) == 1:
        check(files[0].read())
        return
    worst = 0
    with ProcessPoolExecutor(max_workers=jobs) if jobs > 1 else nullcontext() as pool:
        blobs = (_contents(file) for file in files)
        reports = (
            bounded_map(pool, check.reported, blobs, AHEAD * jobs)
            if pool
            else map(check.reported, blobs)
        )
        for file, (text, status) in zip(files, reports, strict=True):
            click.echo(f"== {file.name}\n{text}", nl=False)
            worst = max(worst, status, key=_SEVERITY.index)
    if worst:
        raise click.exceptions.Exit(worst)


AHEAD = 4
"""With ``--jobs N``, how many logs a process may have waiting for it: the files are read as
the checks go (a season's logs need not fit in memory), and opened only then."""


def _contents(file: IO[bytes]) -> bytes:
    """The whole file, closed after (a lazily opened one: each opens when it is read)."""
    with file:
        return file.read()


_In = TypeVar("_In")
_Out = TypeVar("_Out")


def bounded_map(
    pool: Executor, function: Callable[[_In], _Out], items: Iterable[_In], ahead: int
) -> Iterator[_Out]:
    """``pool.map(function, items)``, in order, with at most ``ahead`` items taken from
    ``items`` and not yet answered (``Executor.map`` takes them all at once)."""
    pending: deque[Future[_Out]] = deque()
    for item in items:
        pending.append(pool.submit(function, item))
        if len(pending) >= ahead:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


_SEVERITY = (0, NOT_AUTHENTICATED, 1)
"""Exit statuses from the best to the worst: a failed check is worse than an unsigned log."""


@dataclass(frozen=True)
class LogCheck:
    """``verify``'s checks of one log with the command's options (picklable: each of several
    logs may be checked in another process)."""

    pem: bytes | None
    digest_only: bool
    secret: bytes | None
    original: bytes | None
    url: str | None = None
    """The arena, which reveals each tournament's deal secret once the tournament has ended."""

    def __call__(self, blob: bytes) -> None:
        with cycles_held():
            self._check(blob)

    def _check(self, blob: bytes) -> None:
        # A stored log that is well is read and verified in one walk; any other, and any
        # that is not well, is read and verified step by step, which says what is wrong.
        found = verified(blob) if blob.lstrip()[:1] != b"{" else None
        data = load_data(blob) if found is None else found.data
        authentic = _integrity(data, self.pem, None if found is None else found.unsealed)
        try:
            current = upgrade(data)
            validate(current)
            log = read_log(current) if found is None else found.log
        except (LogReadError, InvalidLogError) as error:
            _fail("format", str(error))
        upgraded = "" if current["format"] == data.get("format") else f", from {data.get('format')}"
        _ok("format", f"{current['format']}{upgraded}; the schema is satisfied")
        secret, unrevealed = self.secret, None
        if secret is None and self.url is not None:
            secret, unrevealed = _revealed_secret(self.url, log)
        _deals(log, secret, by_arena=secret is not None and self.secret is None, why=unrevealed)
        result = _verification(log, secret, found)
        if result.discrepancy is not None:
            _fail("referee", str(result.discrepancy))
        _ok(
            "referee",
            f"{count(result.hands, 'hand')}, {count(result.decisions, 'decision')}, "
            f"{count(result.requests_checked, 'request')} rebuilt to their recorded SHA-256",
        )
        _continues(log, None if self.original is None else load_data(self.original))
        if not authentic and not self.digest_only:
            click.echo(
                "verdict    NOT AUTHENTICATED: nothing shows the arena wrote this log; check its "
                "signature with --public-key PEM or --url ARENA (--digest-only accepts that)"
            )
            raise click.exceptions.Exit(NOT_AUTHENTICATED)

    def reported(self, blob: bytes) -> tuple[str, int]:
        """What checking ``blob`` prints, and its exit status."""
        out = io.StringIO()
        with redirect_stdout(out):
            try:
                self(blob)
                status = 0
            except click.exceptions.Exit as stop:
                status = stop.exit_code
            except click.ClickException as error:
                click.echo(f"Error: {error.format_message()}")
                status = error.exit_code
        return out.getvalue(), status


@contextmanager
def cycles_held() -> Iterator[None]:
    """The cyclic garbage collector held off until the block ends: checking a log makes tens of
    thousands of objects that live until the check ends and make few cycles, and the collector
    would scan them again and again (2% of the instructions of a stored log's check)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _verification(log: MatchLog, secret: bytes | None, found: Verified | None) -> Verification:
    """The referee's verification of ``log``: the one made while reading its stored form, if
    it was (its deals are checked apart, by :func:`_deals`)."""
    return verify_log(log, secret=secret) if found is None else found.verification


def _fetch_key(url: str) -> bytes:
    """The arena's public key, from its API."""
    return _fetch(url, KEY_PATH, "the arena's key").content


def _fetch(url: str, path: str, what: str) -> requests.Response:
    """The arena's answer to ``GET path``, or the command's error."""
    import requests  # noqa: PLC0415 - imported only here: it takes long to import

    address = url.rstrip("/") + path
    try:
        response = requests.get(address, timeout=10)
        response.raise_for_status()
    except requests.RequestException as error:
        raise click.ClickException(f"could not fetch {what} from {address}: {error}") from None
    return response


@cache
def _tournament(url: str, tournament_id: str) -> dict[str, Any]:
    """The arena's public record of a tournament, fetched once per process and command."""
    what = f"tournament {tournament_id}"
    response = _fetch(url, f"/api/tournaments/{quote(tournament_id, safe='')}", what)
    try:
        found = response.json()
    except ValueError:
        found = None
    if not isinstance(found, dict) or not isinstance(found.get("status"), str):
        raise click.ClickException(f"{url} answered no tournament record for {what}")
    return found


def _revealed_secret(url: str, log: MatchLog) -> tuple[bytes | None, str | None]:
    """The deal secret of the log's tournament as the arena at ``url`` reveals it, and, while it
    is not revealed, why (None when the log's deals need no secret from the arena)."""
    deals = log.deals
    if deals.scheme is not DealScheme.COMMITTED or deals.secret is not None:
        return None, None
    if log.tournament_id is None:
        return None, "the log names no tournament whose secret the arena could reveal"
    shown = _tournament(url, log.tournament_id)
    revealed = shown.get("deal_secret")
    if revealed is None:
        status = shown["status"]
        if status in _STILL_PLAYING:
            return None, (
                f"the tournament {log.tournament_id} is still running ({status}): the arena "
                "reveals its secret when it ends; verify again then"
            )
        return None, f"the arena does not reveal the secret of tournament {log.tournament_id}"
    try:
        return parse_secret(str(revealed)), None
    except SecretError as error:
        raise click.ClickException(
            f"{url} revealed a malformed secret for tournament {log.tournament_id}: {error}"
        ) from None


_STILL_PLAYING = frozenset({"created", "queued", "running"})
"""A tournament's statuses before it ends (arena.records.TournamentStatus)."""


def _deals(
    log: MatchLog, secret: bytes | None, *, by_arena: bool = False, why: str | None = None
) -> None:
    """The deals' line: checked against ``secret`` (the arena's, ``by_arena``), or ``why``
    not."""
    deals = log.deals
    found = check_deals(log, secret)
    if found.discrepancy is not None:
        _fail("deals", str(found.discrepancy))
    if deals.scheme is DealScheme.UNCHECKED:
        click.echo("deals      not checked: a format 1 log, whose seed is for information only")
    elif deals.scheme is DealScheme.PRACTICE:
        _ok("deals", f"every deal follows from the seed {deals.seed!r}, which the client chose")
    elif not found.checked:
        why = why or (
            "the tournament reveals its secret when it ends (pass it with --secret, or the "
            "arena's address with --url)"
        )
        click.echo(f"deals      not checked: committed to {deals.commitment}; {why}")
    else:
        source = " revealed by the arena" if by_arena else ""
        _ok("deals", f"every deal follows from the committed secret{source}, label {deals.label!r}")


def _continues(log: MatchLog, original: dict[str, Any] | None) -> None:
    header = log.continues
    if header is None:
        if original is not None:
            _fail("continues", f"match {log.match_id} does not continue another match")
        return
    if original is None:
        click.echo(
            f"continues  not checked: match {header.match_id} (SHA-256 {header.sha256}), from "
            f"its decision {header.prefix}; give that match's log with --original"
        )
        return
    try:
        voided = read_log(original)
        prefix = check_continuation(log, voided, digest(original))
    except (LogReadError, ContinuationError) as error:
        _fail("continues", str(error))
    _ok(
        "continues",
        f"match {voided.match_id}: its first {count(prefix, 'decision')} re-enacted, then its "
        f"decision {prefix}'s recorded answer without fault",
    )


def _integrity(data: dict[str, Any], pem: bytes | None, unsealed: bytes | None) -> bool:
    """Check the seal: with the arena's key (``pem``), its signature; without, the SHA-256
    only. True when the signature was checked. ``unsealed`` is the log's canonical JSON without
    its seal, when reading its stored form made it (it is not made again)."""
    block = data.get("integrity")
    if not isinstance(block, dict):
        if pem is not None:
            _fail("integrity", "the log is not sealed")
        click.echo("integrity  not sealed")
        return False
    if pem is None:
        try:
            found = digest(data) if unsealed is None else hashlib.sha256(unsealed).hexdigest()
        except IntegrityError as error:
            _fail("integrity", str(error))
        if found != block.get("sha256"):
            _fail("integrity", "the log was changed after it was sealed (SHA-256 mismatch)")
        click.echo(f"integrity  SHA-256 {found} matches; signature not checked (no key)")
        return False
    try:
        key = public_key_from_pem(pem)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--public-key/--url") from None
    try:
        check(data, {key_id_of(key): key}, unsealed=unsealed)
    except IntegrityError as error:
        _fail("integrity", str(error))
    _ok("integrity", f"SHA-256 {block['sha256']}, signed by key {block['key_id']}")
    return True


@main.command()
@_LOG_FILE
@click.option("--hand", type=click.IntRange(min=1), help="Show only this hand (from 1).")
def show(file: IO[bytes], hand: int | None) -> None:
    """Print a match, or one hand of it, as tables."""
    log = _read(file)
    if hand is not None and hand > len(log.hands):
        played = count(len(log.hands), "hand")
        raise click.BadParameter(f"the match has {played}", param_hint="--hand")
    click.echo(render_match(log, hand), nl=False)


@main.command()
@_LOG_FILE
@click.option("--hand", type=click.IntRange(min=1), required=True, help="The hand (from 1).")
@click.option("--seat", type=click.IntRange(0, 3), required=True, help="The seat (0 to 3).")
def export(file: IO[bytes], hand: int, seat: int) -> None:
    """Print one hand as one seat saw it (JSON): each of its decisions with the observation
    it was sent."""
    log = _read(file)
    try:
        view = seat_view(log, hand, seat)
    except IndexError as error:
        raise click.BadParameter(str(error), param_hint="--hand") from None
    except ValueError as error:
        raise click.ClickException(f"the log breaks the rules ({error}): run verify") from None
    click.echo(json.dumps(view, indent=2, ensure_ascii=False))


@main.command("reask")
@_LOG_FILE
@click.option("--hand", type=click.IntRange(min=1), required=True, help="The hand (from 1).")
@click.option(
    "--decision",
    type=click.IntRange(min=0),
    required=True,
    help="The decision's index in the hand (from 0), as in show and verify.",
)
@click.option("--url", required=True, help="The bot's endpoint.")
@click.option(
    "--secret",
    envvar="GONGZHU_BOT_SECRET",
    help="The bot's signing secret [env: GONGZHU_BOT_SECRET].",
)
@click.option("--insecure", is_flag=True, help="Send the request unsigned (a bot on --insecure).")
@click.option("--timeout", default=10.0, show_default=True, help="Seconds to wait for the bot.")
def reask_command(
    *,
    file: IO[bytes],
    hand: int,
    decision: int,
    url: str,
    secret: str | None,
    insecure: bool,
    timeout: float,
) -> None:
    """Send a recorded decision's exact request to the bot that played it again and compare its
    answer with the log. The bot at --url must be the seat's (the name it answers in its hello):
    asking another bot is refused."""
    if not secret and not insecure:
        raise click.UsageError("give --secret (or GONGZHU_BOT_SECRET), or --insecure")
    from replays.reask import ReaskError, WrongBotError, reask  # noqa: PLC0415 - as requests

    log = _read(file)
    try:
        result = reask(log, hand, decision, url, None if insecure else secret, timeout_s=timeout)
    except WrongBotError as error:
        _fail("bot", str(error))
    except (ReaskError, ValueError) as error:
        _fail("request", str(error))
    rebuilt = result.rebuilt
    record = rebuilt.record
    checked = "matches the log's SHA-256" if rebuilt.hash_checked else "no SHA-256 in the log"
    what = f"seat {record.seat} {record.kind.value}, {record.decision_id or 'no decision id'}"
    _ok("request", f"{what}; {len(rebuilt.body)} bytes, {checked}")
    seat = next(s for s in log.seats if s.seat == record.seat)
    bot = f"{result.bot.name} {result.bot.version}"
    if result.bot.version == seat.version:
        _ok("bot", f"{bot}, as in seat {record.seat} of the match")
    else:
        click.echo(
            f"{'bot':<10} {bot}; seat {record.seat} played version {seat.version or '?'}: "
            "another version may answer otherwise"
        )
    click.echo(f"{'answer':<10} HTTP {result.http_status}")
    if not result.same:
        _fail("verdict", result.verdict)
    _ok("verdict", result.verdict)


@main.command()
@click.argument("ruling", type=click.File("rb"))
@click.option("--original", type=click.File("rb"), required=True, help="The log ruled on.")
@click.option(
    "--replacement",
    type=click.File("rb"),
    help="The replacement's log, when the ruling voided the match (replayed or continued it).",
)
@click.option("--public-key", type=click.File("rb"), help="The arena's public key (PEM).")
@click.option("--url", help=f"The arena's address: fetch its public key from {KEY_PATH}.")
def ruling(
    ruling: IO[bytes],
    original: IO[bytes],
    replacement: IO[bytes] | None,
    public_key: IO[bytes] | None,
    url: str | None,
) -> None:
    """Check a dispute's sealed RULING (gongzhu-ruling/1) against the log it rules on and, for
    a voided match, its replacement: each seal, that the ruling names exactly that log, and
    that the replacement plays the same deal with the same seats and passes the referee (and,
    for a struck fault, continues that log from the contested decision)."""
    if (public_key is None) == (url is None):
        raise click.UsageError("give the arena's key with --public-key or --url")
    pem = public_key.read() if public_key is not None else _fetch_key(url or "")
    try:
        key = public_key_from_pem(pem)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--public-key/--url") from None
    replaced = None if replacement is None else load_data(replacement.read())
    try:
        found = check_amended(
            load_data(ruling.read()),
            load_data(original.read()),
            replaced,
            {key_id_of(key): key},
        )
    except RulingError as error:
        _fail("ruling", str(error))
    _ok("ruling", f"dispute {found.dispute_id} {found.ruling} on match {found.match_id}")
    _ok("result", f"the result that counts is match {found.counts}'s")
