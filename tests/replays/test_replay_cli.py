"""``python -m replays`` verify, show and export, on plain, packed and piped logs."""

from __future__ import annotations

import base64
import dataclasses
import json
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from referee import Observation, Pass
from replays.cli import KEY_PATH, NOT_AUTHENTICATED, bounded_map, main
from replays.integrity import digest, generate_key, pack, public_key_pem
from replays.log import FORMAT, MatchLog
from tests.bot_sdk.bot_sdk_support import running
from tests.replays.replay_support import (
    DEAL_SECRET,
    KEY,
    PROFILES,
    forfeiting_players,
    record,
    sealed,
)

LOG: MatchLog = record(PROFILES["pass_next"], 11, forfeiting_players(11))
SEALED = sealed(LOG)


def run(*args: str, stdin: bytes | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=stdin)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    where = tmp_path_factory.mktemp("logs")
    paths = {
        "json": where / "match.json",
        "packed": where / "match.json.z",
        "key": where / "arena.pem",
        "other_key": where / "other.pem",
        "tampered": where / "tampered.json",
        "unsealed_tampered": where / "unsealed-tampered.json",
    }
    paths["json"].write_text(json.dumps(SEALED, indent=2))
    paths["packed"].write_bytes(pack(SEALED))
    paths["key"].write_bytes(public_key_pem(KEY.public_key()))
    paths["other_key"].write_bytes(public_key_pem(generate_key().public_key()))
    tampered: dict[str, Any] = json.loads(json.dumps(SEALED))
    play = next(i for i, d in enumerate(tampered["hands"][0]["decisions"]) if d["kind"] == "play")
    tampered["hands"][0]["decisions"][play], tampered["hands"][0]["decisions"][play + 1] = (
        tampered["hands"][0]["decisions"][play + 1],
        tampered["hands"][0]["decisions"][play],
    )
    paths["tampered"].write_text(json.dumps(tampered))
    del tampered["integrity"]
    paths["unsealed_tampered"].write_text(json.dumps(tampered))
    return paths


# -- verify -------------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["json", "packed"])
def test_verify_a_sealed_log(files: dict[str, Path], form: str) -> None:
    outcome = run("verify", str(files[form]), "--public-key", str(files["key"]))
    assert outcome.exit_code == 0, outcome.output
    decisions = sum(len(hand.decisions) for hand in LOG.hands)
    asked = sum(d.request_sha256 is not None for hand in LOG.hands for d in hand.decisions)
    block = SEALED["integrity"]
    assert outcome.output.splitlines() == [
        f"integrity  ok: SHA-256 {block['sha256']}, signed by key {block['key_id']}",
        f"format     ok: {FORMAT}; the schema is satisfied",
        f"deals      not checked: committed to {LOG.deals.commitment}; the tournament reveals its "
        "secret when it ends (pass it with --secret, or the arena's address with --url)",
        f"referee    ok: {len(LOG.hands)} hands, {decisions} decisions, {asked} requests "
        "rebuilt to their recorded SHA-256",
    ]


def test_verify_without_a_key_says_the_log_is_not_authenticated(files: dict[str, Path]) -> None:
    outcome = run("verify", "-", stdin=files["packed"].read_bytes())
    assert outcome.exit_code == NOT_AUTHENTICATED == 3, outcome.output
    assert "matches; signature not checked (no key)" in outcome.output
    assert "referee    ok" in outcome.output  # every other check is still made and shown
    assert outcome.output.splitlines()[-1].startswith("verdict    NOT AUTHENTICATED: ")
    digest_only = run("verify", "-", "--digest-only", stdin=files["packed"].read_bytes())
    assert digest_only.exit_code == 0, digest_only.output
    assert "NOT AUTHENTICATED" not in digest_only.output


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_verify_several_logs_reports_each_under_its_name(files: dict[str, Path], jobs: str) -> None:
    names = [files["json"], files["packed"], files["tampered"]]
    outcome = run("verify", *map(str, names), "--public-key", str(files["key"]), "--jobs", jobs)
    alone = [run("verify", str(name), "--public-key", str(files["key"])) for name in names]
    assert outcome.output == "".join(
        f"== {n}\n{one.output}" for n, one in zip(names, alone, strict=True)
    )
    assert [one.exit_code for one in alone] == [0, 0, 1]
    assert outcome.exit_code == 1  # the worst of theirs


def test_verify_several_logs_takes_them_as_the_checks_go() -> None:
    """``--jobs N`` hands the processes a few logs ahead, not the season at once."""
    taken: list[int] = []

    def items() -> Iterator[int]:
        for n in range(100):
            taken.append(n)
            yield n

    with ThreadPoolExecutor(2) as pool:
        squares = bounded_map(pool, lambda n: n * n, items(), 8)
        assert next(squares) == 0
        assert len(taken) <= 8
        assert list(squares) == [n * n for n in range(1, 100)]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_verify_several_logs_holds_few_files_open(
    files: dict[str, Path], tmp_path: Path, jobs: str
) -> None:
    """Each file is opened when it is read and closed after: more logs than the process may
    hold open at once are all checked."""
    names = []
    for n in range(80):
        names.append(tmp_path / f"match-{n}.json.z")
        names[-1].write_bytes(files["packed"].read_bytes())
    limit = "import resource; resource.setrlimit(resource.RLIMIT_NOFILE, (48, 48)); "
    script = limit + "import sys; from replays.cli import main; main(sys.argv[1:])"
    done = subprocess.run(
        [sys.executable, "-c", script, "verify", "--digest-only", "--jobs", jobs, *map(str, names)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-1000:] + done.stderr[-2000:]
    assert done.stdout.count("referee    ok") == len(names)


def test_verify_several_logs_exits_with_the_worst_status(files: dict[str, Path]) -> None:
    unsigned = run("verify", str(files["json"]), str(files["packed"]))
    assert unsigned.exit_code == NOT_AUTHENTICATED, unsigned.output
    assert unsigned.output.count("verdict    NOT AUTHENTICATED") == 2
    not_a_log = files["key"]  # a PEM file
    both = run("verify", str(not_a_log), str(files["json"]), "--digest-only", "--jobs", "2")
    assert both.exit_code == 1, both.output
    assert both.output.startswith(f"== {not_a_log}\nError: not a match log")
    assert "referee    ok" in both.output  # the other log is still checked


def test_verify_refuses_an_original_for_several_logs(files: dict[str, Path]) -> None:
    outcome = run(
        "verify", str(files["json"]), str(files["packed"]), "--original", str(files["json"])
    )
    assert outcome.exit_code == 2
    assert "--original is the voided match of one log" in outcome.output


def _forgeries() -> dict[str, dict[str, Any]]:
    """What a forger makes of the sealed log without the arena's private key."""
    stripped = {k: v for k, v in SEALED.items() if k != "integrity"}
    swapped = json.loads(json.dumps(stripped))
    swapped["seats"][0]["bot_id"], swapped["seats"][1]["bot_id"] = (
        swapped["seats"][1]["bot_id"],
        swapped["seats"][0]["bot_id"],
    )
    resealed = {**swapped, "integrity": {**SEALED["integrity"], "sha256": digest(swapped)}}
    flipped_signature = json.loads(json.dumps(SEALED))
    signature = bytearray(base64.b64decode(flipped_signature["integrity"]["signature"]))
    signature[0] ^= 1
    flipped_signature["integrity"]["signature"] = base64.b64encode(signature).decode()
    return {
        "seal stripped": stripped,
        "seats swapped, digest recomputed": resealed,
        "signature bit flipped": flipped_signature,
    }


@pytest.mark.parametrize("name", list(_forgeries()))
def test_a_forgery_never_verifies(files: dict[str, Path], tmp_path: Path, name: str) -> None:
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(_forgeries()[name]))
    without_key = run("verify", str(path))
    assert without_key.exit_code != 0, without_key.output
    with_key = run("verify", str(path), "--public-key", str(files["key"]))
    assert with_key.exit_code == 1, with_key.output
    assert "integrity  FAILED" in with_key.output


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
def test_a_log_holding_a_number_json_has_no_text_for_fails_its_seal_check(
    files: dict[str, Path], tmp_path: Path, number: str
) -> None:
    """Python's json reads NaN and Infinity, which no sealed log holds: the check says so
    (with a key or without), it does not crash."""
    path = tmp_path / "forged.json"
    path.write_text(json.dumps({**SEALED, "extra": {"x": 0}}).replace('"x": 0', f'"x": {number}'))
    for options in (["--digest-only"], ["--public-key", str(files["key"])]):
        outcome = run("verify", str(path), *options)
        assert outcome.exception is None or isinstance(outcome.exception, SystemExit)
        assert outcome.exit_code == 1, outcome.output
        assert "integrity  FAILED: the log is not JSON the arena writes" in outcome.output


class FakeArena:
    """The arena's two public answers ``verify --url`` reads: its key, and the tournament's
    record, with its deal secret once it is over."""

    def __init__(self, pem: bytes) -> None:
        self.pem = pem
        self.tournament: dict[str, Any] = {"status": "running", "deal_secret": None}
        self.asked: list[str] = []

    def __call__(self, environ: dict[str, Any], start: Any) -> list[bytes]:
        path = environ["PATH_INFO"]
        self.asked.append(path)
        if path == KEY_PATH:
            start("200 OK", [("Content-Type", "application/x-pem-file")])
            return [self.pem]
        if path == f"/api/tournaments/{LOG.tournament_id}":
            start("200 OK", [("Content-Type", "application/json")])
            return [json.dumps({"id": LOG.tournament_id, **self.tournament}).encode()]
        start("404 Not Found", [("Content-Type", "application/json")])
        return [b'{"error": "not_found", "message": "nothing here"}']


@pytest.fixture
def arena(files: dict[str, Path]) -> Iterator[tuple[FakeArena, str]]:
    fake = FakeArena(files["key"].read_bytes())
    with running(fake) as url:
        yield fake, url.removesuffix("/bot")


def test_verify_fetches_the_arenas_key_from_its_url(
    files: dict[str, Path], arena: tuple[FakeArena, str]
) -> None:
    base = arena[1]
    outcome = run("verify", str(files["json"]), "--url", base)
    assert outcome.exit_code == 0, outcome.output
    assert outcome.output.startswith("integrity  ok: SHA-256 ")
    wrong = run("verify", str(files["json"]), "--url", base + "/elsewhere")
    assert wrong.exit_code == 1 and "could not fetch the arena's key" in wrong.output


@pytest.mark.parametrize("status", ["created", "queued", "running"])
def test_verify_says_the_deals_wait_for_a_tournament_still_running(
    files: dict[str, Path], arena: tuple[FakeArena, str], status: str
) -> None:
    fake, base = arena
    fake.tournament = {"status": status, "deal_secret": None}
    outcome = run("verify", str(files["packed"]), "--url", base)
    assert outcome.exit_code == 0, outcome.output
    assert (
        f"deals      not checked: committed to {LOG.deals.commitment}; the tournament "
        f"tournament-1 is still running ({status}): the arena reveals its secret when it ends; "
        "verify again then\n"
    ) in outcome.output
    assert f"/api/tournaments/{LOG.tournament_id}" in fake.asked


@pytest.mark.parametrize("form", ["json", "packed"])
def test_verify_checks_the_deals_with_the_secret_a_finished_tournament_reveals(
    files: dict[str, Path], arena: tuple[FakeArena, str], form: str
) -> None:
    fake, base = arena
    fake.tournament = {"status": "done", "deal_secret": DEAL_SECRET.hex()}
    outcome = run("verify", str(files[form]), "--url", base)
    assert outcome.exit_code == 0, outcome.output
    assert (
        "deals      ok: every deal follows from the committed secret revealed by the arena, "
        f"label {LOG.deals.label!r}\n"
    ) in outcome.output
    assert "not checked" not in outcome.output


def test_verify_fails_a_log_whose_deals_are_not_those_the_revealed_secret_gives(
    tmp_path: Path, arena: tuple[FakeArena, str]
) -> None:
    fake, base = arena
    fake.tournament = {"status": "done_with_failures", "deal_secret": DEAL_SECRET.hex()}
    log = record(PROFILES["pass_next"], 12, forfeiting_players(12))
    forged = sealed(dataclasses.replace(log, deals=LOG.deals))  # LOG's label and commitment
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(forged))
    outcome = run("verify", str(path), "--url", base)
    assert outcome.exit_code == 1, outcome.output
    assert (
        "deals      FAILED: hand 1: deals: not the deal the committed secret gives for "
        f"{LOG.deals.label!r}"
    ) in outcome.output
    fake.tournament = {"status": "done", "deal_secret": "00" * 32}  # not the committed one
    outcome = run("verify", str(tmp_path / "forged.json"), "--url", base)
    assert outcome.exit_code == 1
    assert "deals      FAILED: match: deals: the secret does not match the commitment" in (
        outcome.output
    )


def test_verify_fails_when_the_arena_knows_no_such_tournament(
    files: dict[str, Path], arena: tuple[FakeArena, str]
) -> None:
    base = arena[1]
    other = sealed(dataclasses.replace(LOG, tournament_id="t_unknown"))
    outcome = run("verify", "-", "--url", base, stdin=json.dumps(other).encode())
    assert outcome.exit_code == 1
    assert (
        f"Error: could not fetch tournament t_unknown from {base}/api/tournaments/t_unknown"
    ) in outcome.output


def test_verify_refuses_another_arenas_key(files: dict[str, Path]) -> None:
    outcome = run("verify", str(files["json"]), "--public-key", str(files["other_key"]))
    assert outcome.exit_code == 1
    assert outcome.output.startswith("integrity  FAILED: no public key for key id")


def test_verify_finds_a_changed_sealed_log(files: dict[str, Path]) -> None:
    outcome = run("verify", str(files["tampered"]))
    assert outcome.exit_code == 1
    assert outcome.output == (
        "integrity  FAILED: the log was changed after it was sealed (SHA-256 mismatch)\n"
    )


def test_verify_reports_the_first_discrepancy_of_an_unsealed_log(files: dict[str, Path]) -> None:
    outcome = run("verify", str(files["unsealed_tampered"]))
    assert outcome.exit_code == 1
    lines = outcome.output.splitlines()
    assert lines[0] == "integrity  not sealed"
    assert lines[3].startswith("referee    FAILED: hand 1, decision ")
    assert "not pending" in lines[3]


def test_verify_checks_the_deals_with_the_revealed_secret(files: dict[str, Path]) -> None:
    key = str(files["key"])
    outcome = run("verify", str(files["json"]), "--secret", DEAL_SECRET.hex(), "--public-key", key)
    assert outcome.exit_code == 0, outcome.output
    label = LOG.deals.label
    assert f"deals      ok: every deal follows from the committed secret, label {label!r}" in (
        outcome.output
    )


def test_verify_fails_with_a_secret_that_was_not_committed(files: dict[str, Path]) -> None:
    outcome = run("verify", str(files["json"]), "--secret", "00" * 32)
    assert outcome.exit_code == 1
    assert "deals      FAILED: match: deals: the secret does not match the commitment" in (
        outcome.output
    )


def test_verify_fails_when_the_deals_are_not_the_committed_ones(tmp_path: Path) -> None:
    """A match played by the rules from other deals than it claims: the referee finds nothing
    wrong, only the commitment can tell."""
    log = record(PROFILES["pass_next"], 12, forfeiting_players(12))
    forged = dataclasses.replace(log, deals=LOG.deals)  # claims LOG's label and commitment
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(forged.to_json()))
    assert run("verify", str(path), "--digest-only").exit_code == 0  # no secret: cannot tell
    outcome = run("verify", str(path), "--secret", DEAL_SECRET.hex())
    assert outcome.exit_code == 1
    label = LOG.deals.label
    assert (
        f"deals      FAILED: hand 1: deals: not the deal the committed secret gives for {label!r}"
        in outcome.output
    )


def test_verify_refuses_a_secret_that_is_not_hex(files: dict[str, Path]) -> None:
    outcome = run("verify", str(files["json"]), "--secret", "not-hex")
    assert outcome.exit_code == 2
    assert "a deal secret is 64 hexadecimal characters" in outcome.output


def test_verify_with_a_key_refuses_an_unsealed_log(files: dict[str, Path]) -> None:
    outcome = run("verify", str(files["unsealed_tampered"]), "--public-key", str(files["key"]))
    assert (outcome.exit_code, outcome.output) == (1, "integrity  FAILED: the log is not sealed\n")


def test_verify_reports_a_schema_error(tmp_path: Path) -> None:
    data = LOG.to_json()
    data["hands"][0]["deal"][0][0] = "1S"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    outcome = run("verify", str(path))
    assert outcome.exit_code == 1
    assert "format     FAILED: hands/0/deal/0/0: '1S' does not match" in outcome.output


def test_a_file_that_is_not_a_log(tmp_path: Path) -> None:
    path = tmp_path / "nothing.bin"
    path.write_bytes(b"\x00\x01garbage")
    outcome = run("show", str(path))
    assert outcome.exit_code == 1
    assert "not a match log (neither JSON nor a packed log)" in outcome.output


# -- show ---------------------------------------------------------------------------------------


def test_show_prints_every_hand_and_the_ranking(files: dict[str, Path]) -> None:
    outcome = run("show", str(files["packed"]))
    assert outcome.exit_code == 0, outcome.output
    text = outcome.output
    assert text.startswith(f"match {LOG.match_id} (tournament tournament-1, table table-11")
    for hand in LOG.hands:
        assert f"hand {hand.hand_number} of {len(LOG.hands)}: first leader seat" in text
        for seat, cards in enumerate(hand.deal):
            assert f"  seat {seat}: {cards}" in text
    assert "passes (next)" in text and "exposures" in text
    assert "   #  lead  seat 0  seat 1  seat 2  seat 3  winner  scoring cards" in text
    assert "final ranking" in text and "forfeited" in text
    faults = [d for hand in LOG.hands for d in hand.decisions if d.fault]
    for decision in faults:
        assert f"seat 2: {decision.status.value} ({decision.latency_ms} ms): " in text
    assert text.count("    ! decision ") == len(faults) == 5


def test_show_one_hand(files: dict[str, Path]) -> None:
    outcome = run("show", str(files["json"]), "--hand", "1")
    assert outcome.exit_code == 0, outcome.output
    assert "hand 1 of" in outcome.output
    assert "hand 2 of" not in outcome.output and "final ranking" not in outcome.output
    result = LOG.hands[0].result
    for seat, score in enumerate(result.seats):
        row = [line for line in outcome.output.splitlines() if line.startswith(f"     {seat}  ")]
        assert row and row[-1].split()[-2:] == [str(score.score), str(result.totals[seat])]


def test_show_a_hand_that_is_not_there(files: dict[str, Path]) -> None:
    outcome = run("show", str(files["json"]), "--hand", str(len(LOG.hands) + 1))
    assert outcome.exit_code == 2
    assert f"the match has {len(LOG.hands)} hands" in outcome.output


# -- export -------------------------------------------------------------------------------------


def test_export_is_the_seats_own_view(files: dict[str, Path]) -> None:
    outcome = run("export", str(files["json"]), "--hand", "1", "--seat", "1")
    assert outcome.exit_code == 0, outcome.output
    view = json.loads(outcome.output)
    hand = LOG.hands[0]
    mine = [i for i, d in enumerate(hand.decisions) if d.seat == 1]
    assert [d["index"] for d in view["decisions"]] == mine
    assert view["seat"]["seat"] == 1 and view["result"] == hand.result.to_json()
    dealt = hand.deal[1]
    for entry in view["decisions"]:
        obs = Observation.from_json(entry["observation"])
        assert obs.seat == 1 and obs.hand_number == 1 and obs.decision is not None
        assert obs.decision.kind.value == entry["kind"]
        if obs.received is None:
            assert obs.hand.issubset(dealt)
        else:
            assert obs.hand.issubset(dealt | obs.received)
    assert set(view) == {"match_id", "hand_number", "seat", "decisions", "result"}
    assert set(view["decisions"][0]) == {
        "index", "decision_id", "kind", "status", "latency_ms", "answer", "fault", "applied",
        "request_sha256", "observation",
    }  # fmt: skip
    passed = next(d.applied for d in hand.decisions if d.seat == 1 and d.kind.value == "pass")
    assert isinstance(passed, Pass)
    later = [Observation.from_json(entry["observation"]) for entry in view["decisions"][1:]]
    assert all(obs.passed == passed.cards for obs in later)


def test_export_of_a_forfeited_seat_shows_its_autoplay(files: dict[str, Path]) -> None:
    outcome = run("export", str(files["packed"]), "--hand", "1", "--seat", "2")
    statuses = [entry["status"] for entry in json.loads(outcome.output)["decisions"]]
    assert statuses[5:] and set(statuses[5:]) == {"forfeit-autoplay"}


def test_export_needs_a_hand_and_a_seat(files: dict[str, Path]) -> None:
    outcome = run("export", str(files["json"]), "--hand", "1", "--seat", "4")
    assert outcome.exit_code == 2
    assert "4 is not in the range 0<=x<=3" in outcome.output


def test_python_dash_m_replays(files: dict[str, Path]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "replays", "verify", str(files["packed"]), "--digest-only"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "referee    ok" in done.stdout
