"""The ``gongzhu`` command's operator and bot-author commands against a real service."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from arena import disputes
from arena.context import Arena
from arena.store import store as store_module
from bot_sdk.examples.lowest_card import LowestCard
from bot_sdk.server import make_app
from service import Config
from service.author_cli import OPERATOR_COMMANDS
from service.cli import main
from tests.bot_sdk.bot_sdk_support import running
from tests.e2e.conftest import TOKEN, played_match
from tests.workers.test_gauntlets import SECRET, play_out


def gongzhu(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_register_a_bot_then_create_start_and_list_a_tournament(arena_url: str) -> None:
    with running(make_app(LowestCard, None, verify_signatures=False)) as bot_url:
        register = ["bots", "register", "lowbot", bot_url, "--contact", "me@x.org"]
        out = gongzhu(*register, "--url", arena_url)
        made = json.loads(out[: out.rindex("}") + 1])
        assert made["bot"]["name"] == "lowbot" and made["token"] and made["signing_secret"]
        assert made["bot"]["status"] == "pending"  # until its endpoint is verified
        verify = ["bots", "verify", made["bot"]["id"], "--token", made["token"]]
        assert json.loads(gongzhu(*verify, "--url", arena_url))["status"] == "active"
        listed = json.loads(gongzhu("bots", "list", "--url", arena_url))
        assert [b["name"] for b in listed] == ["lowbot"]
        create = ["tournaments", "create", "cup", "--participant", made["bot"]["id"]]
        create += ["--participant", "house:easy", "--hands", "1"]
        create += ["--rules", '{"variants": ["teams"]}']
        tournament = json.loads(gongzhu(*create, "--url", arena_url, "--token", TOKEN))
        assert tournament["rules"]["variants"] == ["teams"]
        assert tournament["status"] == "created"
        assert "created" in gongzhu("tournaments", "list", "--url", arena_url)
        schedule = ["tournaments", "schedule", "0 3 * * *", "--name", "nightly"]
        scheduled = json.loads(gongzhu(*schedule, "--url", arena_url, "--token", TOKEN))
        assert scheduled["cron"] == "0 3 * * *"


def test_errors_are_the_arenas_messages_not_tracebacks(arena_url: str) -> None:
    create = ["tournaments", "create", "cup", "--participant", "nobody"]
    result = CliRunner().invoke(main, [*create, "--url", arena_url, "--token", TOKEN])
    assert result.exit_code == 1
    assert "Error: POST /api/tournaments: 4" in result.output
    assert "Traceback" not in result.output
    start = ["tournaments", "start", "t_x", "--url", arena_url]
    no_token = CliRunner().invoke(main, start, env={"GONGZHU_OPERATOR_TOKEN": ""})
    assert no_token.exit_code == 1 and "operator token" in no_token.output
    down = CliRunner().invoke(main, ["bots", "list", "--url", "http://127.0.0.1:9"])
    assert down.exit_code == 1 and "cannot reach the arena" in down.output


def test_an_owner_enters_the_ladder_and_reads_its_versions(arena_url: str) -> None:
    with running(make_app(LowestCard, None, verify_signatures=False)) as bot_url:
        register = ["bots", "register", "laddered", bot_url, "--contact", "me@x.org"]
        out = gongzhu(*register, "--ladder", "--max-concurrent", "2", "--url", arena_url)
        made = json.loads(out[: out.rindex("}") + 1])
        assert (made["bot"]["ladder"], made["bot"]["max_concurrent"]) == (True, 2)
        bot_id, token = made["bot"]["id"], made["token"]
        entry = ["bots", "ladder", bot_id, "--token", token, "--url", arena_url]
        assert "not in the ladder, at most 3" in gongzhu(*entry, "--leave", "--max-concurrent", "3")
        assert "laddered: in the ladder" in gongzhu(*entry, "--join")
        assert gongzhu(*entry) == ""  # no rated version yet
        too_many = CliRunner().invoke(main, [*entry, "--max-concurrent", "99"])
        assert too_many.exit_code == 1 and "max_concurrent" in too_many.output
        assert "provisional" not in gongzhu("standings", "--url", arena_url)  # an empty ladder


def test_a_gauntlet_is_started_followed_and_cannot_be_cancelled_once_over(
    served: tuple[str, Config], monkeypatch: pytest.MonkeyPatch
) -> None:
    arena_url, config = served
    monkeypatch.setattr(store_module, "draw_secret", lambda: SECRET)  # the same deals each run
    with running(make_app(LowestCard, None, verify_signatures=False)) as bot_url:
        register = ["bots", "register", "lowbot", bot_url, "--contact", "me@x.org"]
        out = gongzhu(*register, "--url", arena_url)
        made = json.loads(out[: out.rindex("}") + 1])
        bot_id = made["bot"]["id"]
        gongzhu("bots", "verify", bot_id, "--token", made["token"], "--url", arena_url)
        start = ["gauntlet", "start", "house:normal", bot_id, "--opponent", "house:easy"]
        start += ["--hands", "1", "--url", arena_url, "--token", TOKEN]
        started = gongzhu(*start)
        gauntlet_id = started.split()[1].rstrip(":")
        assert f"house:normal against {bot_id}, up to 200 deals" in started
        play_out(Arena.from_config(config), gauntlet_id)  # a worker plays its matches
    shown = gongzhu("gauntlet", "show", gauntlet_id, "--url", arena_url)
    lines = shown.splitlines()
    assert lines[0].startswith("deal    1: Δ ") and "[n/a, n/a]" in lines[0]  # one deal
    assert "[n/a" not in lines[1]
    assert lines[-1].startswith(f"{gauntlet_id}: better after ") and "95% [" in lines[-1]
    assert gongzhu("gauntlet", "show", gauntlet_id, "--wait", "--url", arena_url) == shown
    cancel = ["gauntlet", "cancel", gauntlet_id, "--url", arena_url, "--token", TOKEN]
    over = CliRunner().invoke(main, cancel)
    assert over.exit_code == 1 and ": 409: " in over.output


def test_an_owner_files_a_dispute_and_the_operator_rules_on_it(
    served: tuple[str, Config],
) -> None:
    url, config = served
    arena = Arena.from_config(config)
    with running(make_app(LowestCard, None, verify_signatures=False)) as bot_url:
        out = gongzhu("bots", "register", "mine", bot_url, "--contact", "me@x.org", "--url", url)
        made = json.loads(out[: out.rindex("}") + 1])
        bot, token = made["bot"]["id"], made["token"]
        tournament_id, match_id, log = played_match(arena, bot)
        mine = next(i for i, r in enumerate(log.hands[0].decisions) if r.seat == 0)
        file = ["disputes", "file", match_id, "--hand", "1", "--decision", str(mine)]
        out = gongzhu(*file, "--statement", "my bot was in time", "--token", token, "--url", url)
        dispute_id = out.split()[1]
        assert out.startswith(f"dispute {dispute_id} filed")
        listed = gongzhu("disputes", "list", "--open", "--token", TOKEN, "--url", url)
        assert dispute_id in listed and "1 dispute(s)" in listed
        assert "being gathered" in gongzhu("disputes", "show", dispute_id, "--token", token,
                                           "--url", url)  # fmt: skip
        disputes.build_evidence(arena, dispute_id)  # a worker's job
        shown = gongzhu("disputes", "show", dispute_id, "--token", token, "--url", url)
        assert "seal: ok; referee re-run: ok" in shown and f"decision {mine}: ok" in shown
        assert "asked again: ok" in shown
        assert "could the answer stand: yes (no fault: the answer was applied)" in shown
        strike = ["disputes", "rule", dispute_id, "--uphold", "in time", "--remedy", "strike"]
        struck = CliRunner().invoke(main, [*strike, "--token", TOKEN, "--url", url])
        assert struck.exit_code == 1 and "no fault to strike" in struck.output
        rule = ["disputes", "rule", dispute_id, "--reject", "the answer was legal and counted"]
        assert "rejected" in gongzhu(*rule, "--token", TOKEN, "--url", url)
        public = gongzhu("disputes", "list", "--tournament", tournament_id, "--url", url)
        assert dispute_id in public and "rejected" in public
        again = CliRunner().invoke(main, [*rule, "--token", TOKEN, "--url", url])
        assert again.exit_code == 1 and "final" in again.output
        hand = ["disputes", "file", match_id, "--hand", "1", "--statement", "the whole hand"]
        assert "filed" in gongzhu(*hand, "--token", token, "--url", url)  # no --decision: null


ARENA_ONLY = ("flask", "redis", "rq", "cattrs", "gunicorn", "boto3", "croniter")
"""The arena's dependencies that a bot author's install (``pip install .``) does not have."""


def test_the_authors_commands_import_nothing_of_the_arena_and_the_operators_are_declared() -> None:
    """The bot author's commands (service.author_cli, and the doctor's probe they import when
    it runs) import none of the arena's dependencies, and the operator's commands service.cli
    adds are exactly those OPERATOR_COMMANDS declares (the ones the author's install says what
    to install for). In a fresh interpreter: this one has imported both."""
    script = f"""
import json, sys
import service.author_cli as author
import arena.doctor  # gongzhu doctor's push probe, imported when it runs
groups = {{"gongzhu": author.main, "tournaments": author.tournaments, "disputes": author.disputes}}
before = {{name: set(group.commands) for name, group in groups.items()}}
loaded = sorted(m for m in {ARENA_ONLY!r} if m in sys.modules)
import service.cli
added = {{name: sorted(set(group.commands) - before[name]) for name, group in groups.items()}}
print(json.dumps({{"loaded": loaded, "added": added}}))
"""
    found = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    shown = json.loads(found.stdout)
    assert shown["loaded"] == []
    assert shown["added"] == {name: sorted(names) for name, names in OPERATOR_COMMANDS.items()}
