"""The ``gongzhu`` command as a bot author has it: what ``pip install .`` installs (the SDK, the
referee, the replay tools, click and requests) is all its commands need, since they talk to an
arena over its HTTP API or work on the author's machine.

gongzhu doctor --url BOT --secret S     # probe a bot's endpoint as the arena will call it
gongzhu bots register NAME URL --contact ME; gongzhu bots verify ID --token T
gongzhu standings; gongzhu disputes file MATCH ...; gongzhu gauntlet start V2 V1 ...
gongzhu replay verify match.json --url ARENA   # and show, export, reask, ruling
gongzhu practice my_bot:MyBot           # the SDK's practice runner

The arena's own commands (``run``, ``web``, ``worker``, ...: :data:`OPERATOR_COMMANDS`) are in
:mod:`service.cli`, which needs the arena's dependencies; :class:`ArenaCommands` adds them when
they are asked for and installed, and says what to install when they are not. So this module
imports nothing of the arena but its modules that need none of its dependencies
(:mod:`arena.settings`, the push probe of :mod:`arena.doctor`).

The client commands find the arena at ``--url`` (``GONGZHU_URL``), else in the data directory's
settings (``GONGZHU_DATA_DIR``, default ``data``) that ``gongzhu run`` writes.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import sys
import time
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any, TypeVar
from urllib.parse import urlsplit

import click

from bot_sdk.practice import practice_command
from bot_sdk.protocol import DEFAULT_TIME_LIMIT_MS
from replays.cli import main as replay_group
from service.api_client import ApiCallError, ArenaClient

OPERATOR_COMMANDS: dict[str, tuple[str, ...]] = {
    "gongzhu": ("run", "web", "worker", "cron", "redis", "migrate-replays", "rerate"),
    "tournaments": ("create", "start", "requeue-failed", "schedule"),
    "disputes": ("rule",),
}
"""The operator's commands, by the group that holds them: :mod:`service.cli` adds them."""
ARENA_INSTALL = "pip install '.[arena]' in a clone of the repository"
OURS = {"arena", "bot_sdk", "referee", "replays", "service", "workers"}
FC = TypeVar("FC", bound=Callable[..., Any] | click.Command)


@cache
def missing_for_the_arena() -> str | None:
    """The package of the arena's dependencies that is not installed (None when all are): the
    operator's commands are imported from :mod:`service.cli` on the way."""
    try:
        importlib.import_module("service.cli")
    except ModuleNotFoundError as error:
        missing = (error.name or "").partition(".")[0]
        if not missing or missing in OURS:
            raise  # a module of ours missing is a bug, not an install without the arena
        return missing
    return None


class ArenaCommands(click.Group):
    """A group some of whose commands are the operator's (:data:`OPERATOR_COMMANDS`): they are
    added by importing :mod:`service.cli` when one is asked for (or listed), and where the
    arena's dependencies are not installed, each says what to install instead."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        if self._operators:
            missing_for_the_arena()
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self._operators:
            return super().get_command(ctx, cmd_name)
        missing = missing_for_the_arena()
        if missing is None:
            return super().get_command(ctx, cmd_name)
        return _needs_the_arena(ctx, cmd_name, missing)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        missing = missing_for_the_arena() if self._operators else None
        if missing is not None:
            formatter.write_paragraph()
            formatter.write_text(
                f"The arena's own commands ({', '.join(self._operators)}) need its dependencies, "
                f"which this install does not have ({missing} is missing): {ARENA_INSTALL}."
            )

    @property
    def _operators(self) -> tuple[str, ...]:
        return OPERATOR_COMMANDS.get(self.name or "", ())


def _needs_the_arena(ctx: click.Context, name: str, missing: str) -> click.Command:
    """A stand-in for the operator's command ``name``: whatever it is given, it says what to
    install."""

    def refuse() -> None:
        raise click.ClickException(
            f"`{ctx.command_path} {name}` is one of the arena's own commands: it needs the "
            f"arena's dependencies ({missing} is not installed here): {ARENA_INSTALL}. A bot "
            f"author's commands need none of them: {ctx.find_root().command_path} --help lists "
            "them."
        )

    return click.Command(
        name,
        callback=refuse,
        add_help_option=False,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )


@click.group("gongzhu", cls=ArenaCommands)
def main() -> None:
    """The Gong Zhu bot arena: a bot author's commands, and the arena's own where it is
    installed."""


url_option = click.option(
    "--url", envvar="GONGZHU_URL",
    help="The arena (env GONGZHU_URL; default: the one of $GONGZHU_DATA_DIR/arena.json).",
)  # fmt: skip


def owner_token(whose: str) -> Callable[[FC], FC]:
    """The ``--token`` of a command a bot's owner or the operator may run."""
    return click.option(
        "--token", envvar="GONGZHU_BOT_TOKEN",
        help=f"{whose} token (env GONGZHU_BOT_TOKEN), or the operator's.",
    )  # fmt: skip


def arena_client(url: str | None, token: str | None = None) -> ArenaClient:
    """:meth:`ArenaClient.find`, its refusal as the command's error."""
    with arena_errors():
        return ArenaClient.find(url, token)


def echo_json(data: object) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


@contextlib.contextmanager
def arena_errors() -> Iterator[None]:
    try:
        yield
    except ApiCallError as error:
        raise click.ClickException(str(error)) from None


@main.command()
@click.option("--tournament", "tournament_id", help="A tournament's standings (default: ladder).")
@url_option
def standings(tournament_id: str | None, url: str | None) -> None:
    """Print a tournament's standings, or the ladder."""
    arena = arena_client(url)
    with arena_errors():
        if tournament_id:
            print_standings(arena, arena.call("GET", f"/api/tournaments/{tournament_id}"))
            return
        for row in arena.call("GET", "/api/ladder?per_page=100")["items"]:
            mark = "  provisional" if row["provisional"] else ""
            click.echo(
                f"{row['rank']:>4}  {row['bot_id']:<18} {row['name']:<20} "
                f"{row['version'] or '-':<8} {row['rating']:>8.2f} "
                f"(mu {row['mu']:.2f}, sigma {row['sigma']:.2f})  "
                f"{row['matches']} matches{mark}"
            )


def print_standings(arena: ArenaClient, tournament: dict[str, Any]) -> None:
    tid = tournament["id"]
    rows = arena.call("GET", f"/api/tournaments/{tid}/standings")["standings"]
    names = {b["id"]: b["name"] for b in arena.call("GET", "/api/bots?per_page=100")["items"]}
    click.echo(f"\nStandings of {tournament['name']} ({tournament['status']}):")
    click.echo(f"  {'rank':>4}  {'participant':<20} {'matches':>7} {'wins':>5} {'pts/hand':>9}")
    for row in rows:
        name = names.get(row["bot_id"], row["bot_id"])
        click.echo(
            f"  {row['rank']:>4}  {name:<20} {row['matches']:>7} {row['wins']:>5} "
            f"{row['points_per_hand']:>+9.1f}"
        )
    matches = arena.call("GET", f"/api/matches?tournament={tid}&per_page=1")["items"]
    click.echo(f"\nStandings page:  {arena.url}/tournaments/{tid}")
    every = arena.call("GET", "/api/ladder/status")["interval_s"]
    plays = f"plays itself, a round every {every} s" if every else "the matchmaker is off"
    click.echo(f"Ladder:          {arena.url}/ ({plays})")
    if matches:
        click.echo(f"A replay:        {arena.url}/matches/{matches[0]['id']}")
    click.echo(f"Play a match:    {arena.url}/play")
    click.echo(f"API docs:        {arena.url}/api/docs")


@main.group()
def bots() -> None:
    """Register, verify and list bots; enter them in the ladder."""


bot_token = click.option(
    "--token", envvar="GONGZHU_BOT_TOKEN", required=True,
    help="The bot's token (env GONGZHU_BOT_TOKEN).",
)  # fmt: skip


@bots.command("register")
@click.argument("name")
@click.argument("endpoint", required=False)
@click.option("--contact", required=True, help="How the arena reaches the bot's owner.")
@click.option("--description", default="")
@click.option("--pull", is_flag=True, help="A bot that connects out (behind NAT): no ENDPOINT.")
@click.option("--ladder", is_flag=True, help="Enter it in the ladder (rated matches, by itself).")
@click.option("--max-concurrent", type=int, default=1, show_default=True,
              help="The most ladder matches it plays at once.")  # fmt: skip
@url_option
def register_bot(
    *,
    name: str,
    endpoint: str | None,
    contact: str,
    description: str,
    pull: bool,
    ladder: bool,
    max_concurrent: int,
    url: str | None,
) -> None:
    """Register the bot NAME served at ENDPOINT (or, with --pull, one that connects out); prints
    its id, token and signing secret (once)."""
    body = {
        "name": name,
        "contact": contact,
        "description": description,
        "transport": "pull" if pull else "push",
        "ladder": ladder,
        "max_concurrent": max_concurrent,
        **({"endpoint": endpoint} if endpoint else {}),
    }
    arena = arena_client(url)
    with arena_errors():
        made = arena.call("POST", "/api/bots", json=body)
    echo_json(made)
    bot_id = made["bot"]["id"]
    if pull:
        click.echo(
            "Keep the token to manage the bot. Connect it (it verifies itself):\n"
            "  GONGZHU_BOT_TOKEN=TOKEN GONGZHU_BOT_SECRET=SECRET python -m bot_sdk connect "
            f"my_bot:MyBot --arena {arena.url} --bot-id {bot_id}",
            err=True,
        )
    else:
        click.echo(
            "Keep the token to manage the bot; serve the bot with the signing secret "
            "(GONGZHU_BOT_SECRET=SECRET python -m bot_sdk serve my_bot:MyBot), then make it "
            f"active: gongzhu bots verify {bot_id} --token TOKEN --url {arena.url}",
            err=True,
        )


@bots.command("verify")
@click.argument("bot_id")
@bot_token
@url_option
def verify_bot(bot_id: str, token: str, url: str | None) -> None:
    """Send the bot at its endpoint a signed hello; if it answers, the bot is active."""
    arena = arena_client(url)
    with arena_errors():
        echo_json(arena.call("POST", f"/api/bots/{bot_id}/verify-endpoint", token=token))


@bots.command("rotate-secret")
@click.argument("bot_id")
@bot_token
@url_option
def rotate_secret(bot_id: str, token: str, url: str | None) -> None:
    """Give the bot a new signing secret (printed once); the old one still signs the arena's
    requests for a grace period, so that matches in flight are not lost."""
    arena = arena_client(url)
    with arena_errors():
        echo_json(arena.call("POST", f"/api/bots/{bot_id}/rotate-secret", token=token))
    click.echo(
        "Serve the bot with the new secret (GONGZHU_BOT_SECRET, or a second --secret-env "
        "during the grace period) before the old one expires.",
        err=True,
    )


@bots.command("ladder")
@click.argument("bot_id")
@bot_token
@click.option("--join/--leave", default=None, help="Enter the ladder, or leave it.")
@click.option("--max-concurrent", type=int, help="The most ladder matches it plays at once.")
@url_option
def ladder_entry(
    bot_id: str, token: str, join: bool | None, max_concurrent: int | None, url: str | None
) -> None:
    """Enter the bot in the ladder or take it out, or change how many ladder matches it plays
    at once; with neither, print its rated versions."""
    arena = arena_client(url)
    changes = {
        **({} if join is None else {"ladder": join}),
        **({} if max_concurrent is None else {"max_concurrent": max_concurrent}),
    }
    with arena_errors():
        if changes:
            bot = arena.call("PATCH", f"/api/bots/{bot_id}", token=token, json=changes)
            click.echo(
                f"{bot['name']}: {'in' if bot['ladder'] else 'not in'} the ladder, "
                f"at most {bot['max_concurrent']} ladder match(es) at once"
            )
            return
        for version in arena.call("GET", f"/api/bots/{bot_id}/versions?per_page=100")["items"]:
            mark = "  provisional" if version["provisional"] else ""
            click.echo(
                f"{version['version'] or '-':<12} {version['rating']:>8.2f} "
                f"(mu {version['mu']:.2f}, sigma {version['sigma']:.2f})  "
                f"{version['matches']} matches, {version['points_per_hand']:+.1f} points a hand"
                f"{mark}"
            )


@bots.command("list")
@url_option
def list_bots(url: str | None) -> None:
    """The registered bots (public fields)."""
    arena = arena_client(url)
    with arena_errors():
        echo_json(arena.call("GET", "/api/bots?per_page=100")["items"])


@main.group(cls=ArenaCommands)
def tournaments() -> None:
    """Follow tournaments; the operator also creates, starts and schedules them."""


@tournaments.command("list")
@url_option
def list_tournaments(url: str | None) -> None:
    """Tournaments with their status and progress."""
    arena = arena_client(url)
    with arena_errors():
        for t in arena.call("GET", "/api/tournaments?per_page=100")["items"]:
            done, total = t["progress"]["done"], t["progress"]["total"]
            failed = f" ({t['progress']['failed']} failed)" if t["progress"].get("failed") else ""
            click.echo(f"{t['id']:<20} {t['status']:<10} {done:>5}/{total:<5} {t['name']}{failed}")


@main.group()
def gauntlet() -> None:
    """Is a new version better? Gauntlets on duplicate deals (docs/GAUNTLETS.md)."""


gauntlet_token = owner_token("The candidate's")


@gauntlet.command("start")
@click.argument("candidate")
@click.argument("baseline")
@gauntlet_token
@click.option("--baseline-token", help="The baseline's own token, when it is another of yours.")
@click.option("--opponent", help="The bot in both other seats (default: a house bot).")
@click.option("--delta", type=float, default=10.0, show_default=True,
              help="The least difference worth knowing, points per hand.")  # fmt: skip
@click.option("--alpha", type=float, default=0.05, show_default=True)
@click.option("--beta", type=float, default=0.05, show_default=True)
@click.option("--max-deals", type=int, default=200, show_default=True)
@click.option("--hands", type=int, default=4, show_default=True, help="Hands per match.")
@click.option("--wait", is_flag=True, help="Follow it, a line per deal, until the verdict.")
@url_option
def start_gauntlet(
    *, candidate: str, baseline: str, token: str | None, baseline_token: str | None,
    opponent: str | None, delta: float, alpha: float, beta: float, max_deals: int, hands: int,
    wait: bool, url: str | None,
) -> None:  # fmt: skip
    """Start a gauntlet of CANDIDATE against BASELINE (a bot id or house:easy|normal|hard)."""
    body: dict[str, object] = {
        "candidate": candidate, "baseline": baseline, "delta": delta, "alpha": alpha,
        "beta": beta, "max_deals": max_deals, "hands": hands,
    }  # fmt: skip
    if baseline_token:
        body["baseline_token"] = baseline_token
    if opponent:
        body["opponents"] = [opponent, opponent]
    arena = arena_client(url, token)
    with arena_errors():
        made = arena.call("POST", "/api/gauntlets", token=token or arena.operator_token, json=body)
    click.echo(f"gauntlet {made['id']}: {candidate} against {baseline}, up to {max_deals} deals")
    if wait:
        _follow(arena, made["id"])


@gauntlet.command("show")
@click.argument("gauntlet_id")
@click.option("--wait", is_flag=True, help="Follow it, a line per deal, until the verdict.")
@url_option
def show_gauntlet(gauntlet_id: str, wait: bool, url: str | None) -> None:
    """A gauntlet's deals so far and its verdict."""
    arena = arena_client(url, "")
    if wait:
        _follow(arena, gauntlet_id)
        return
    with arena_errors():
        shown = arena.call("GET", f"/api/gauntlets/{gauntlet_id}")
    for line in _deal_lines(shown, 0):
        click.echo(line)
    click.echo(_verdict_line(shown))


@gauntlet.command("cancel")
@click.argument("gauntlet_id")
@gauntlet_token
@url_option
def cancel_gauntlet(gauntlet_id: str, token: str | None, url: str | None) -> None:
    """Stop a gauntlet you started (or, with the operator's token, any)."""
    arena = arena_client(url, token)
    with arena_errors():
        path = f"/api/gauntlets/{gauntlet_id}/cancel"
        shown = arena.call("POST", path, token=token or arena.operator_token)
    click.echo(_verdict_line(shown))


FOLLOW_EVERY_S = 2.0


def _follow(arena: ArenaClient, gauntlet_id: str) -> None:
    """Print each deal as it ends, then the verdict."""
    printed = 0
    while True:
        with arena_errors():
            shown = arena.call("GET", f"/api/gauntlets/{gauntlet_id}")
        for line in _deal_lines(shown, printed):
            click.echo(line)
        printed = len(shown["deals"])
        if shown["verdict"] != "running":
            click.echo(_verdict_line(shown))
            return
        time.sleep(FOLLOW_EVERY_S)


def _deal_lines(shown: dict[str, Any], start: int) -> Iterator[str]:
    """A line for each deal from ``start``: its difference, and the test after it."""
    steps = iter(shown["trajectory"])
    counted = 0
    for deal in shown["deals"]:
        if deal["void"]:
            if deal["deal"] > start:
                yield f"deal {deal['deal']:>4}: void ({deal['void']})"
            continue
        state = next(steps)
        counted += 1
        if deal["deal"] > start:
            yield (
                f"deal {deal['deal']:>4}: Δ {deal['difference']:+8.2f}  mean {state['mean']:+7.2f} "
                f"[{_end(state['low'])}, {_end(state['high'])}]  "
                f"evidence {state['evidence']:+6.2f}  "
                f"Wald better {state['llr_better']:+7.2f}, worse {state['llr_worse']:+7.2f}"
            )


def _end(value: float | None) -> str:
    """An end of the interval (none before the second deal)."""
    return "n/a" if value is None else f"{value:+.2f}"


def _verdict_line(shown: dict[str, Any]) -> str:
    state = shown["state"]
    return (
        f"{shown['id']}: {shown['verdict_text']} after {state['deals']} deals "
        f"({shown['matches']} matches): Δ {state['mean']:+.2f} points per hand, 95% "
        f"[{_end(state['low'])}, {_end(state['high'])}]"
    )


LOCAL_HINT = (
    "Unless the bot says its clock is off, --secret (or GONGZHU_BOT_SECRET here) is not the "
    "secret the bot checks signatures with: "
    "give the one the bot reads where it runs (a bot the SDK serves reads GONGZHU_BOT_SECRET, or "
    "the variables --secret-env names, when it starts), the signing secret the arena gave when "
    "the bot was registered. Lost it? `gongzhu bots rotate-secret BOT_ID --token TOKEN` gives a "
    "new one"
)
"""The local doctor's word after a hello refused for its signature."""


def _endpoint_url(
    context: click.Context, parameter: click.Parameter, value: str | None
) -> str | None:
    if value is None:
        return None
    if urlsplit(value).scheme not in {"http", "https"} or not urlsplit(value).hostname:
        raise click.BadParameter(f"{value!r} is not an http:// or https:// URL")
    return value


@main.command()
@click.option(
    "--url",
    callback=_endpoint_url,
    help="Your bot's endpoint (not the arena's): probe it from here.",
)
@click.option(
    "--secret",
    envvar="GONGZHU_BOT_SECRET",
    help="With --url: the bot's signing secret (env GONGZHU_BOT_SECRET).",
)
@click.option(
    "--bot",
    "bot_id",
    help="A registered bot's id: the arena probes it (a pull bot through its connection).",
)
@click.option(
    "--token", envvar="GONGZHU_BOT_TOKEN", help="With --bot: its token (env GONGZHU_BOT_TOKEN)."
)
@click.option(
    "--arena",
    "arena_url",
    envvar="GONGZHU_URL",
    help="With --bot: the arena (env GONGZHU_URL; default: the one of the data directory).",
)
@click.option("--time-limit-ms", default=DEFAULT_TIME_LIMIT_MS, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the report card as JSON.")
def doctor(
    *,
    url: str | None,
    secret: str | None,
    bot_id: str | None,
    token: str | None,
    arena_url: str | None,
    time_limit_ms: int,
    as_json: bool,
) -> None:
    """Probe a bot the way the arena will call it and print a report card; exits 1 when a check
    fails. Either --url and --secret (a push bot's endpoint, from this machine, before or after
    registering it), or --bot and --token (any registered bot, push or pull, probed by the
    arena; a pull bot must be connected)."""
    if (url is None) == (bot_id is None):
        raise click.UsageError("give --url (an endpoint) or --bot (a registered bot), not both")
    from arena.doctor import Report, examine  # noqa: PLC0415 - imported only here: it is slow

    if url is not None:
        if not secret:
            raise click.UsageError("--url needs --secret (or GONGZHU_BOT_SECRET)")
        report = examine(
            url, [secret], time_limit_ms=time_limit_ms, allow_private=True, secret_hint=LOCAL_HINT
        )
    else:
        if not token:
            raise click.UsageError("--bot needs --token (or GONGZHU_BOT_TOKEN)")
        arena = arena_client(arena_url)
        with arena_errors():
            found = arena.call("POST", f"/api/bots/{bot_id}/doctor", token=token)
        report = Report.from_json(found)
    if as_json:
        echo_json(report.to_json())
    else:
        click.echo(report.text(), nl=False)
    sys.exit(0 if report.ok else 1)


# -- disputes (docs/DISPUTES.md) -----------------------------------------------------------------


@main.group(cls=ArenaCommands)
def disputes() -> None:
    """Contest a decision your bot played; the operator rules (docs/DISPUTES.md)."""


dispute_token = owner_token("Your bot's")


@disputes.command("file")
@click.argument("match_id")
@click.option("--hand", type=int, required=True, help="The hand, from 1.")
@click.option(
    "--decision", type=int, default=None, help="Its index in the hand, from 0 (default: the hand)."
)
@click.option("--statement", required=True, help="What you contest, briefly.")
@dispute_token
@url_option
def file_dispute(
    *, match_id: str, hand: int, decision: int | None, statement: str, token: str | None,
    url: str | None,
) -> None:  # fmt: skip
    """File a dispute on a decision (or a hand) of MATCH_ID your bot played."""
    if not token:
        raise click.UsageError("filing needs your bot's --token (or GONGZHU_BOT_TOKEN)")
    body = {"match_id": match_id, "hand": hand, "decision": decision, "statement": statement}
    arena = arena_client(url, "")
    with arena_errors():
        made = arena.call("POST", "/api/disputes", token=token, json=body)
    click.echo(f"dispute {made['id']} filed; its evidence is being gathered: "
               f"gongzhu disputes show {made['id']} --token …")  # fmt: skip


@disputes.command("show")
@click.argument("dispute_id")
@dispute_token
@click.option("--json", "as_json", is_flag=True, help="The whole dispute and evidence, as JSON.")
@url_option
def show_dispute(dispute_id: str, token: str | None, as_json: bool, url: str | None) -> None:
    """A dispute, its ruling and (to its bot's owner and the operator) its evidence."""
    arena = arena_client(url, token)
    with arena_errors():
        shown = arena.call(
            "GET", f"/api/disputes/{dispute_id}", token=token or arena.operator_token
        )
    if as_json:
        echo_json(shown)
        return
    for line in dispute_lines(shown):
        click.echo(line)


def dispute_lines(shown: dict[str, Any]) -> Iterator[str]:
    """A dispute as text: what it contests, the evidence decision by decision, the ruling."""
    d = shown["dispute"]
    what = "the whole hand" if d["decision"] is None else f"decision {d['decision']}"
    yield f"dispute {d['id']} ({d['status']}): match {d['match_id']}, hand {d['hand']}, {what}"
    yield f"  seat {d['seat']} ({d['bot_id']}), filed {d['filed_at']}: {d['statement']}"
    report = shown.get("evidence")
    if report is None:
        yield "  evidence: " + ("being gathered" if not shown["evidence_ready"] else "not yours")
    else:
        yield f"  seal: {report['seal']}; referee re-run: " + (
            "ok" if report["rerun"]["ok"] else str(report["rerun"]["discrepancy"]))  # fmt: skip
        for item in report["decisions"]:
            yield from _evidence_lines(item)
    ruling = d.get("ruling")
    if ruling:
        remedy = f", remedy {ruling['remedy']}" if ruling["remedy"] else ""
        applied = (
            "" if not ruling["remedy"] else " (applied)" if ruling["applied"] else " (pending)"
        )
        yield f"  ruling: {ruling['status']}{remedy}{applied} at {ruling['ruled_at']}"
        yield f"    {ruling['reason']}"
        if ruling["replacement"]:
            how = "continued" if ruling["remedy"] == "strike" else "replayed"
            yield f"    {how} as match {ruling['replacement']}"


def _evidence_lines(item: dict[str, Any]) -> Iterator[str]:
    recorded, timing = item["recorded"], item.get("timing") or {}
    yield f"  decision {item['index']}: {recorded['status']}" + (
        f" ({recorded['fault']})" if recorded["fault"] else "")  # fmt: skip
    request = item["request"]
    if "error" in request:
        yield f"    request: {request['error']}"
        return
    check = "matches the log" if request["matches"] else "no hash in the log"
    yield f"    request: sha256 {request['sha256'][:16]}… {check}"
    if timing.get("sent_us") is not None:
        received = timing.get("received_us")
        yield (
            f"    sent at {timing['sent_us'] / 1000:.1f} ms, last byte received at "
            + ("—" if received is None else f"{received / 1000:.1f} ms")
            + f"; allowed {timing['allowed_ms']} ms, latency {timing['latency_ms']} ms"
            + (f", deadline expired: {timing['deadline']}" if timing.get("deadline") else "")
        )
    stand = item.get("answer_check")
    if stand is not None:
        verdict = "yes" if stand["could_stand"] else "no"
        yield f"    could the answer stand: {verdict} ({stand['why']})"
    asked = item["reask"]
    if asked.get("asked"):
        yield f"    asked again: {asked['status']} in {asked['latency_ms']} ms" + (
            ", the same answer" if asked["same"] else "")  # fmt: skip


@disputes.command("list")
@dispute_token
@click.option("--open", "open_only", is_flag=True, help="Only those not yet ruled on (operator).")
@click.option("--tournament", help="A tournament's ruled disputes (no token needed).")
@url_option
def list_disputes(
    token: str | None, open_only: bool, tournament: str | None, url: str | None
) -> None:
    """The operator's disputes (all, or --open), your bot's, or a tournament's rulings."""
    arena = arena_client(url, token)
    params: dict[str, str] = {"per_page": "100"}
    if open_only:
        params["status"] = "open"
    if tournament:
        params["tournament"] = tournament
    with arena_errors():
        found = arena.call(
            "GET", "/api/disputes", token=None if tournament else token or arena.operator_token,
            params=params,
        )  # fmt: skip
    for d in found["items"]:
        what = "hand" if d["decision"] is None else f"decision {d['decision']}"
        click.echo(f"{d['id']}  {d['status']:<8}  {d['match_id']} hand {d['hand']} {what}  "
                   f"{d['bot_id']}: {d['statement'][:60]}")  # fmt: skip
    click.echo(f"{found['total']} dispute(s)")


main.add_command(replay_group, "replay")
main.add_command(practice_command)
