"""The README's SDK install, for real: ``pip install .`` of this repository into a fresh virtual
environment gives a bot author the SDK, the referee and the replay tools, serves and practises
an example bot, and installs none of the arena (no Flask, RQ or Redis client). Its ``gongzhu``
runs every command the docs give a bot author against a real arena (served by this test's own
environment), and says what to install for the operator's.

It needs PyPI (or pip's cache): its pure-Python install took 40 s to 2 min 20 s on a busy 2-core
machine (README, "Quick start"), and the author's commands about a minute more, one process
each as an author runs them, hence tests/e2e."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import venv
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import requests

from arena import disputes
from arena.context import Arena
from arena.redis_server import free_port
from arena.store import store as store_module
from service import Config
from service.author_cli import OPERATOR_COMMANDS
from tests.e2e.conftest import TOKEN, played_match
from tests.workers.test_gauntlets import SECRET, play_out

ROOT = Path(__file__).resolve().parents[2]
ARENA_ONLY = ["flask", "rq", "redis", "gunicorn", "openskill"]


def _copy_of_the_repository(target: Path) -> Path:
    """The repository's tracked files (what a clone has), so the build leaves the worktree alone."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split("\0")
    for name in filter(None, tracked):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


@pytest.fixture(scope="module")
def sdk_python(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh virtual environment with ``pip install .`` of the repository (the README's
    command), nothing else; pure Python (``GONGZHU_COMPILE=0``): what is installed is the
    question here, and the compiled build's install is tests/referee/test_compiled.py's, whose
    minute of compiling this would repeat."""
    clone = _copy_of_the_repository(tmp_path_factory.mktemp("clone"))
    home = tmp_path_factory.mktemp("sdk-venv")
    venv.create(home, with_pip=True)
    python = home / "bin" / "python"
    started = time.monotonic()
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "."],
        cwd=clone,
        check=True,
        timeout=600,
        env={**os.environ, "GONGZHU_COMPILE": "0"},
    )
    print(f"pip install . took {time.monotonic() - started:.0f} s")
    yield python


def _run(
    program: Path, *args: str, env: dict[str, str] | None = None, **kw: Any
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(program), *args], check=False, capture_output=True, text=True, cwd="/",
        env=_environment() if env is None else env, **kw,
    )  # fmt: skip


def test_the_sdk_installs_without_the_arena(sdk_python: Path) -> None:
    found = _run(sdk_python, "-c", "import bot_sdk, referee, replays; print(bot_sdk.__file__)")
    assert found.returncode == 0, found.stderr
    assert "site-packages" in found.stdout  # the installed copy, not this checkout
    version = _run(sdk_python, "-m", "referee", "--version")
    pure = "pure Python (not compiled at install)"
    assert version.stdout.strip().endswith(f"referee {pure}, bot_sdk {pure}, replays {pure}"), (
        version.stdout + version.stderr
    )
    for module in ARENA_ONLY:
        missing = _run(sdk_python, "-c", f"import {module}")
        assert missing.returncode != 0 and "ModuleNotFoundError" in missing.stderr, module


AUTHORS = ("bots", "disputes", "doctor", "gauntlet", "practice", "replay", "standings",
           "tournaments")  # fmt: skip
"""The commands a bot author's gongzhu lists."""


def test_the_sdk_installs_gongzhu_with_the_authors_commands_and_says_what_the_others_need(
    sdk_python: Path,
) -> None:
    gongzhu = sdk_python.parent / "gongzhu"
    shown = _run(gongzhu, "--help")
    assert shown.returncode == 0, shown.stderr
    listed = shown.stdout.partition("Commands:")[2].partition("\n\n")[0]
    assert tuple(line.split()[0] for line in listed.strip().splitlines()) == AUTHORS
    assert "The arena's own commands (run, web, worker, cron, redis, migrate-replays," in (
        shown.stdout
    )
    assert "pip install '.[arena]' in a clone of the repository" in shown.stdout.replace("\n", " ")
    assert (
        "create, start, requeue-failed, schedule" in _run(gongzhu, "tournaments", "--help").stdout
    )
    operators = [[name] for name in OPERATOR_COMMANDS["gongzhu"]]
    operators += [["run", "--help"], ["tournaments", "create", "cup", "--participant", "bot_1"]]
    operators += [["tournaments", "start", "t_1"], ["disputes", "rule", "d_1", "--reject", "no"]]
    for command in operators:
        refused = _run(gongzhu, *command)
        assert refused.returncode == 1, (command, refused.stdout, refused.stderr)
        assert f"Error: `gongzhu {' '.join(c for c in command if c in _NAMES)}` is one of the " in (
            refused.stderr
        )
        assert "pip install '.[arena]'" in refused.stderr and "Traceback" not in refused.stderr


_NAMES = {name for names in OPERATOR_COMMANDS.values() for name in names} | {
    "tournaments",
    "disputes",
}


@contextmanager
def served_bot(python: Path, port: int, secret: str) -> Iterator[str]:
    """``python -m bot_sdk serve`` of the example bot from the SDK install, with ``secret``."""
    env = {**_environment(), "GONGZHU_BOT_SECRET": secret}
    target = "bot_sdk.examples.lowest_card:LowestCard"
    server = subprocess.Popen(
        [str(python), "-m", "bot_sdk", "serve", target, "--port", str(port)], env=env, cwd="/",
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                requests.get(url, timeout=1)
                break
            except requests.ConnectionError:
                assert time.monotonic() < deadline, "the bot was not served"
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(10)


def test_a_bot_author_runs_every_command_the_docs_give_against_a_real_arena(
    sdk_python: Path,
    served: tuple[str, Config],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every author's command of README, PROTOCOL, LADDER, GAUNTLETS, DISPUTES and REPLAYS, run
    as shown by the SDK install's gongzhu (GONGZHU_URL names the arena), in the order an author
    meets them: register, serve with the wrong secret then the right one, doctor, verify, the
    ladder, a gauntlet, a dispute, the match's log verified before and after its tournament
    ends, re-asked, practice, a new secret. The arena's matches are played in this process (no
    workers), against the bot served from the SDK install."""
    url, config = served
    arena = Arena.from_config(config)
    monkeypatch.setattr(store_module, "draw_secret", lambda: SECRET)  # the gauntlet's deals
    env = {**_environment(), "GONGZHU_URL": url}

    def gongzhu(*args: str | Path, status: int = 0) -> subprocess.CompletedProcess[str]:
        done = _run(sdk_python.parent / "gongzhu", *map(str, args), env=env)
        assert done.returncode == status, (args, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr, done.stderr
        return done

    port = free_port()
    bot_url = f"http://127.0.0.1:{port}/"
    registered = gongzhu("bots", "register", "author-bot", bot_url, "--contact", "me@x.org")
    made = json.loads(registered.stdout)
    bot_id, token, secret = made["bot"]["id"], made["token"], made["signing_secret"]
    assert f"gongzhu bots verify {bot_id} --token TOKEN --url {url}" in registered.stderr
    pull = gongzhu("bots", "register", "pulled", "--pull", "--contact", "me@x.org")
    assert "python -m bot_sdk connect my_bot:MyBot --arena" in pull.stderr

    with served_bot(sdk_python, port, "last-years-secret"):
        refused = gongzhu("bots", "verify", bot_id, "--token", token, status=1)
        assert "refused the hello's signature (HTTP 401: " in refused.stderr
        assert f"gongzhu bots rotate-secret {bot_id} --token TOKEN" in refused.stderr
        assert secret not in refused.stderr and "last-years-secret" not in refused.stderr
        wrong = gongzhu("doctor", "--url", bot_url, "--secret", secret, status=1)
        assert "hello  FAIL  " in wrong.stdout and "--secret (or GONGZHU_BOT_SECRET here)" in (
            wrong.stdout
        )

    with served_bot(sdk_python, port, secret):
        assert "all checks passed" in gongzhu("doctor", "--url", bot_url, "--secret", secret).stdout
        verified = gongzhu("bots", "verify", bot_id, "--token", token, "--url", url)
        assert json.loads(verified.stdout)["status"] == "active"
        listed = json.loads(gongzhu("bots", "list").stdout)
        assert {b["name"] for b in listed} == {"author-bot", "pulled"}
        assert "all checks passed" in gongzhu("doctor", "--bot", bot_id, "--token", token).stdout
        ladder = ["bots", "ladder", bot_id, "--token", token]
        joined = gongzhu(*ladder, "--join", "--max-concurrent", "2")
        assert joined.stdout == "author-bot: in the ladder, at most 2 ladder match(es) at once\n"
        assert gongzhu(*ladder).stdout == ""  # no rated version yet
        gongzhu("standings")

        started = gongzhu("gauntlet", "start", bot_id, "house:normal", "--token", token,
                          "--opponent", "house:easy", "--hands", "1")  # fmt: skip
        gauntlet_id = started.stdout.split()[1].rstrip(":")
        play_out(arena, gauntlet_id)  # a worker plays its matches, asking the served bot
        verdict = gongzhu("gauntlet", "show", gauntlet_id, "--wait").stdout.splitlines()[-1]
        assert verdict.startswith(f"{gauntlet_id}: worse after "), verdict
        over = gongzhu("gauntlet", "cancel", gauntlet_id, "--token", token, status=1)
        assert ": 409: " in over.stderr

        played = played_match(arena, bot_id)
        assert gongzhu("tournaments", "list").stdout.startswith(f"{played.tournament_id} ")
        mine = next(i for i, d in enumerate(played.log.hands[0].decisions) if d.seat == 0)
        decision = ["--hand", "1", "--decision", str(mine)]
        filed = gongzhu("disputes", "file", played.match_id, *decision,
                        "--statement", "my bot was in time", "--token", token)  # fmt: skip
        dispute_id = filed.stdout.split()[1]
        disputes.build_evidence(arena, dispute_id)  # a worker's job: it asks the bot again
        shown = gongzhu("disputes", "show", dispute_id, "--token", token).stdout
        assert "seal: ok; referee re-run: ok" in shown and "asked again: ok" in shown
        assert f"{dispute_id}  open" in gongzhu("disputes", "list", "--token", token).stdout

        log = tmp_path / "match.json"
        operator = {"Authorization": f"Bearer {TOKEN}"}  # the deal's embargo: the operator's
        replay = f"{url}/api/matches/{played.match_id}/replay"
        log.write_bytes(requests.get(replay, headers=operator, timeout=10).content)
        running = gongzhu("replay", "verify", log, "--url", url).stdout
        assert f"tournament {played.tournament_id} is still running (created)" in running
        assert "integrity  ok: " in running and "referee    ok: " in running
        assert "hand 1 of 1" in gongzhu("replay", "show", log, "--hand", "1").stdout
        seat = json.loads(gongzhu("replay", "export", log, "--hand", "1", "--seat", "0").stdout)
        assert seat["seat"]["bot_id"] == bot_id
        reask = gongzhu("replay", "reask", log, *decision, "--url", bot_url, "--secret", secret)
        assert "bot        ok: lowest-card 1.0, as in seat 0 of the match" in reask.stdout
        assert "verdict    ok: same" in reask.stdout, reask.stdout
        cancelled = requests.post(
            f"{url}/api/tournaments/{played.tournament_id}/cancel", headers=operator, timeout=10
        )
        assert cancelled.json()["deal_secret"], cancelled.text  # over: its secret revealed
        ended = gongzhu("replay", "verify", log, "--url", url).stdout
        assert "deals      ok: every deal follows from the committed secret revealed by the " in (
            ended
        )

    practised = gongzhu("practice", "bot_sdk.examples.lowest_card:LowestCard",
                        "--opponents", "easy,easy,easy", "--matches", "1", "--quiet")  # fmt: skip
    assert practised.stdout.strip()
    rotated = gongzhu("bots", "rotate-secret", bot_id, "--token", token)
    assert json.loads(rotated.stdout)["signing_secret"] != secret


def _environment() -> dict[str, str]:
    """This process's environment without what points Python at this checkout."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def test_an_example_bot_is_served_and_practised_from_the_sdk_install(sdk_python: Path) -> None:
    port = free_port()
    env = _environment()
    serve = [str(sdk_python), "-m", "bot_sdk", "serve", "bot_sdk.examples.lowest_card:LowestCard"]
    server = subprocess.Popen(
        [*serve, "--port", str(port), "--insecure"], env=env, cwd="/",
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                requests.get(url, timeout=1)
                break
            except requests.ConnectionError:
                time.sleep(0.2)
        practice = _run(sdk_python, "-m", "bot_sdk", "practice", url, "--matches", "1", "--quiet")
        assert practice.returncode == 0, practice.stderr
        assert "Traceback" not in practice.stderr
        assert practice.stdout.strip(), "practice printed no summary"
    finally:
        server.terminate()
        server.wait(10)
    assert sys.executable  # the test's own interpreter is untouched by the venv
