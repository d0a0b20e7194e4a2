"""``gongzhu``: run the arena, or one of its roles, and the commands operators and bot authors use.

gongzhu run                       # everything, with a demo tournament (scripts/run)
gongzhu web | worker | cron | redis
gongzhu replay verify match.json --url URL  # and show, export, reask
gongzhu practice my_bot:MyBot     # the SDK's practice runner
gongzhu doctor --url BOT --secret S  # probe a bot's endpoint as the arena will call it

``run`` writes the arena's settings into its data directory (:mod:`arena.settings`); every
other command finds the arena there (``GONGZHU_DATA_DIR``, default ``data``) unless the
environment names it (``REDIS_URL`` for the roles, ``GONGZHU_URL`` for the client commands).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import click

from arena.doctor import Report, examine
from arena.redis_server import redis_command
from arena.settings import (
    DEFAULT_DATA_DIR,
    ArenaSettings,
    NoArenaError,
    arena_environment,
    load_settings,
)
from bot_sdk.practice import practice_command
from bot_sdk.protocol import DEFAULT_TIME_LIMIT_MS
from replays.cli import main as replay_group
from service.api_client import ApiCallError, ArenaClient
from service.archive_cli import migrate_replays
from service.demo import (
    HOUSE,
    print_standings,
    register_bots,
    run_tournament,
    serve_bots,
)
from service.rerate_cli import rerate_command
from service.runtime import DataDir
from service.supervisor import (
    BACKOFF_S,
    CRASH_LIMIT,
    STEADY_S,
    STOP_WAIT_S,
    Supervisor,
    read_procfile,
)
from workers.cli import cron as cron_command
from workers.cli import worker as worker_command

ROOT = Path(__file__).resolve().parent.parent
PROCFILE = ROOT / "Procfile"
DEFAULT_REDIS_PORT = 6399
"""The arena's own Redis listens here, away from a system Redis on 6379."""


@click.group()
def main() -> None:
    """The Gong Zhu bot arena."""


url_option = click.option(
    "--url", envvar="GONGZHU_URL",
    help="The arena (env GONGZHU_URL; default: the one of $GONGZHU_DATA_DIR/arena.json).",
)  # fmt: skip
token_option = click.option(
    "--token", envvar="GONGZHU_OPERATOR_TOKEN",
    help="Operator token (env same name; default: the token of the arena's data directory).",
)  # fmt: skip


def _arena(url: str | None, token: str | None = None) -> ArenaClient:
    """The arena at ``url``, else the one the data directory's settings name. The operator
    token, when not given, is read from the settings' token file, and only for that arena."""
    if url:
        return ArenaClient(url.rstrip("/"), token or "")
    try:
        settings = load_settings(os.environ)
    except NoArenaError as error:
        raise click.ClickException(str(error)) from None
    if token is None:
        token = Path(settings.operator_token_file).read_text().strip()
    return ArenaClient(settings.url.rstrip("/"), token)


def _echo_json(data: object) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


@contextlib.contextmanager
def _arena_errors() -> Iterator[None]:
    try:
        yield
    except ApiCallError as error:
        raise click.ClickException(str(error)) from None


def _with_this_python(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` with this Python's scripts first on the PATH: the Procfile's commands are
    the virtual environment's."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{environ.get('PATH', '')}"
    return {**environ, "PATH": path}


def procfile_processes(*, workers: int, own_redis: bool) -> dict[str, str]:
    """The Procfile's processes, name -> command: the worker line ``workers`` times, the redis
    line only when the arena runs its own Redis."""
    entries = read_procfile(PROCFILE.read_text())
    processes = {}
    for name, command in entries.items():
        if name == "redis" and not own_redis:
            continue
        if name == "worker":
            processes.update({f"worker.{n + 1}": command for n in range(workers)})
        else:
            processes[name] = command
    return processes


_RUN_HELP = f"""Run the whole arena: Redis (REDIS_URL, else its own), the web service, workers and
cron, the processes of the Procfile, and keep them running.

A process that ends is started again after {BACKOFF_S[0]:g} s, then after
{", ".join(f"{s:g}" for s in BACKOFF_S[1:-1])} and {BACKOFF_S[-1]:g} s while it keeps ending
within {STEADY_S:g} s of its start; its {CRASH_LIMIT}th such exit in a row stops the arena (exit
status 1). Ctrl-C or SIGTERM stops everything: each process is sent SIGTERM (Redis last) and
killed if it still runs {STOP_WAIT_S:g} s later; exit status 130 (Ctrl-C) or 143 (SIGTERM).
Exits, restarts and the reason to stop are said here and in DATA_DIR/logs/arena.log, with the
processes' output. Running again with the same --data-dir reuses the data.
"""


@main.command(help=_RUN_HELP)
@click.option(
    "--data-dir", type=click.Path(path_type=Path), default=Path(DEFAULT_DATA_DIR), show_default=True
)
@click.option("--port", default=8000, show_default=True, help="The web service's port.")
@click.option("--workers", default=2, show_default=True, help="RQ worker processes.")
@click.option("--redis-port", default=DEFAULT_REDIS_PORT, show_default=True)
@click.option("--demo/--no-demo", default=True, help="Register example bots and play a tournament.")
@click.option("--hands", default=2, show_default=True, help="Hands per demo match.")
def run(
    *, data_dir: Path, port: int, workers: int, redis_port: int, demo: bool, hands: int
) -> None:
    configured = os.environ.get("REDIS_URL")
    refuse_taken(port, "the web service's (--port)")
    if not configured:
        refuse_taken(redis_port, "the arena's own Redis's (--redis-port)")
    data = DataDir(data_dir.resolve())
    data.log_dir.mkdir(parents=True, exist_ok=True)
    where = f"127.0.0.1:{redis_port}/0"
    password_file = None if configured else data.redis_password_path()
    password = "" if password_file is None else password_file.read_text().strip()
    url = f"http://127.0.0.1:{port}"
    settings = ArenaSettings(
        url=url,
        bind=f"127.0.0.1:{port}",
        redis_url=configured or f"redis://:{quote(password, safe='')}@{where}",
        redis_port=redis_port,
        data_dir=str(data.path),
        operator_token_file=str(data.operator_token_path()),
        secret_key_file=str(data.secret_key_path()),
        replay_key_file=str(data.replay_key_path()),
        redis_password_file=None if password_file is None else str(password_file),
        allow_private_endpoints=demo,
    )
    settings.write(data.settings_path)
    env = {**_with_this_python(os.environ), **settings.environment()}
    log = (data.log_dir / "arena.log").open("a", buffering=1)
    supervisor = Supervisor(
        procfile_processes(workers=workers, own_redis=not configured),
        env=env,
        cwd=ROOT,
        log=log,
        echo=click.echo,
        last={"redis"},
    )
    click.echo(f"Arena data in {data.path}; process logs in {data.log_dir / 'arena.log'}")
    click.echo(f"Settings (for the other gongzhu commands): {data.settings_path}")
    click.echo(f"Operator token: in {settings.operator_token_file}")
    own_redis = f"its own, at redis://{where} (password in {password_file})"
    click.echo(f"Redis: {configured if configured else own_redis}")
    arena = ArenaClient(url, env["GONGZHU_OPERATOR_TOKEN"])
    follow = (_demo, (arena, data, hands, supervisor)) if demo else (_announce, (arena, supervisor))
    threading.Thread(target=follow[0], args=follow[1], daemon=True).start()
    status = supervisor.run()
    click.echo(f"The arena stopped; its processes' output is in {data.log_dir / 'arena.log'}")
    sys.exit(status)


def refuse_taken(port: int, whose: str) -> None:
    """Stop at once, before starting anything, when another program listens on ``port``."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gunicorn and Redis do
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as error:
            raise click.ClickException(
                f"port {port}, {whose}, is taken: another program holds 127.0.0.1:{port} "
                f"({error.strerror}). Stop it, or choose another port."
            ) from None


def _announce(arena: ArenaClient, supervisor: Supervisor) -> None:
    """Say where the arena serves once it answers there (``/ready``)."""
    try:
        arena.wait_ready()
    except ApiCallError as error:
        supervisor.stop(f"it did not start: {error}", 1)
        return
    click.echo(f"Serving {arena.url}/ (API docs {arena.url}/api/docs). Ctrl-C stops the arena.")


def _demo(arena: ArenaClient, data: DataDir, hands: int, supervisor: Supervisor) -> None:
    try:
        arena.wait_ready()
        with serve_bots() as urls:
            bots = register_bots(arena, urls, data.demo_bots_path)
            tournament = run_tournament(arena, [*bots, *HOUSE], hands=hands)
            print_standings(arena, tournament)
            click.echo("\nThe arena keeps running; Ctrl-C stops it.")
            threading.Event().wait()  # keep the demo bots served until the arena stops
    except ApiCallError as error:
        supervisor.stop(f"the demo failed: {error}", 1)


@main.command()
def web() -> None:
    """The web service alone: the Procfile's ``web`` line (gunicorn with the arena's gevent
    workers), configured from the environment or the data directory's settings."""
    try:
        env = arena_environment(os.environ, configured_by="REDIS_URL")
    except NoArenaError as error:
        raise click.ClickException(str(error)) from None
    command = procfile_processes(workers=0, own_redis=False)["web"]
    os.execvpe("sh", ["sh", "-c", f"exec {command}"], _with_this_python(env))


@main.command()
@click.option(
    "--dir",
    "directory",
    type=click.Path(path_type=Path),
    help="Where it keeps its files (default: redis/ in $GONGZHU_DATA_DIR, else in data/).",
)
@click.option("--port", envvar="GONGZHU_REDIS_PORT", default=DEFAULT_REDIS_PORT, show_default=True)
def redis(directory: Path | None, port: int) -> None:
    """The arena's own Redis in the foreground (append-only, fsync on every write), with the
    password ``GONGZHU_REDIS_PASSWORD`` when it is set (``gongzhu run`` sets it)."""
    if directory is None:
        directory = Path(os.environ.get("GONGZHU_DATA_DIR") or DEFAULT_DATA_DIR) / "redis"
    directory.mkdir(parents=True, exist_ok=True)
    command = redis_command(directory, port, password=os.environ.get("GONGZHU_REDIS_PASSWORD"))
    os.execv(command[0], command)


@main.command()
@click.option("--tournament", "tournament_id", help="A tournament's standings (default: ladder).")
@url_option
def standings(tournament_id: str | None, url: str | None) -> None:
    """Print a tournament's standings, or the ladder."""
    arena = _arena(url)
    with _arena_errors():
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


@main.group()
def bots() -> None:
    """Register and list bots."""


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
    arena = _arena(url)
    with _arena_errors():
        made = arena.call("POST", "/api/bots", json=body)
    _echo_json(made)
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
            "Keep the token to manage the bot; serve the bot with the signing secret, then make "
            f"it active: gongzhu bots verify {bot_id} --token TOKEN",
            err=True,
        )


@bots.command("verify")
@click.argument("bot_id")
@click.option("--token", envvar="GONGZHU_BOT_TOKEN", required=True, help="The bot's token.")
@url_option
def verify_bot(bot_id: str, token: str, url: str | None) -> None:
    """Send the bot at its endpoint a signed hello; if it answers, the bot is active."""
    path = f"/api/bots/{bot_id}/verify-endpoint"
    with _arena_errors():
        _echo_json(_arena(url).call("POST", path, token=token))


@bots.command("ladder")
@click.argument("bot_id")
@click.option("--token", envvar="GONGZHU_BOT_TOKEN", required=True, help="The bot's token.")
@click.option("--join/--leave", default=None, help="Enter the ladder, or leave it.")
@click.option("--max-concurrent", type=int, help="The most ladder matches it plays at once.")
@url_option
def ladder_entry(
    bot_id: str, token: str, join: bool | None, max_concurrent: int | None, url: str | None
) -> None:
    """Enter the bot in the ladder or take it out, or change how many ladder matches it plays
    at once; with neither, print its rated versions."""
    arena = _arena(url)
    changes = {
        **({} if join is None else {"ladder": join}),
        **({} if max_concurrent is None else {"max_concurrent": max_concurrent}),
    }
    with _arena_errors():
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
    with _arena_errors():
        _echo_json(_arena(url).call("GET", "/api/bots?per_page=100")["items"])


@main.group()
def gauntlet() -> None:
    """Is a new version better? Gauntlets on duplicate deals (docs/GAUNTLETS.md)."""


gauntlet_token = click.option(
    "--token", envvar="GONGZHU_BOT_TOKEN",
    help="The candidate's token (env GONGZHU_BOT_TOKEN), or the operator's.",
)  # fmt: skip


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
    arena = _arena(url, token)
    with _arena_errors():
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
    arena = _arena(url, "")
    if wait:
        _follow(arena, gauntlet_id)
        return
    with _arena_errors():
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
    arena = _arena(url, token)
    with _arena_errors():
        path = f"/api/gauntlets/{gauntlet_id}/cancel"
        shown = arena.call("POST", path, token=token or arena.operator_token)
    click.echo(_verdict_line(shown))


FOLLOW_EVERY_S = 2.0


def _follow(arena: ArenaClient, gauntlet_id: str) -> None:
    """Print each deal as it ends, then the verdict."""
    printed = 0
    while True:
        with _arena_errors():
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


@main.group()
def tournaments() -> None:
    """Create, start, schedule and follow tournaments (operator)."""


@tournaments.command("create")
@click.argument("name")
@click.option("--participant", "participants", multiple=True, required=True,
              help="A bot id or house:easy|normal|hard; repeat.")  # fmt: skip
@click.option(
    "--rules", default="{}", help='A rules profile as JSON, e.g. \'{"variants": ["teams"]}\'.'
)
@click.option("--hands", type=int, default=None, help="Hands per match (default: the rules' end).")
@click.option("--matches-per-table", type=int, default=1, show_default=True)
@click.option("--start", is_flag=True, help="Start it at once.")
@url_option
@token_option
def create_tournament(
    *, name: str, participants: tuple[str, ...], rules: str, hands: int | None,
    matches_per_table: int, start: bool, url: str | None, token: str | None,
) -> None:  # fmt: skip
    """Create the tournament NAME among the participants."""
    try:
        profile = json.loads(rules)
    except ValueError as error:
        raise click.BadParameter(f"not JSON: {error}", param_hint="--rules") from None
    tournament_format: dict[str, object] = {"matches_per_table": matches_per_table}
    if hands is not None:
        tournament_format["hands"] = hands
    body = {"name": name, "participants": list(participants), "rules": profile,
            "format": tournament_format}  # fmt: skip
    arena = _arena(url, token)
    with _arena_errors():
        made = arena.operator("POST", "/api/tournaments", json=body)
        if start:
            made = arena.operator("POST", f"/api/tournaments/{made['id']}/start")
    _echo_json(made)


@tournaments.command("start")
@click.argument("tournament_id")
@url_option
@token_option
def start_tournament(tournament_id: str, url: str | None, token: str | None) -> None:
    """Start a created tournament: its matches are queued for the workers."""
    with _arena_errors():
        path = f"/api/tournaments/{tournament_id}/start"
        _echo_json(_arena(url, token).operator("POST", path))


@tournaments.command("requeue-failed")
@click.argument("tournament_id")
@url_option
@token_option
def requeue_failed(tournament_id: str, url: str | None, token: str | None) -> None:
    """Play a tournament's failed matches again (each with all its retries)."""
    with _arena_errors():
        path = f"/api/tournaments/{tournament_id}/requeue-failed"
        _echo_json(_arena(url, token).operator("POST", path))


@tournaments.command("list")
@url_option
def list_tournaments(url: str | None) -> None:
    """Tournaments with their status and progress."""
    with _arena_errors():
        for t in _arena(url).call("GET", "/api/tournaments?per_page=100")["items"]:
            done, total = t["progress"]["done"], t["progress"]["total"]
            failed = f" ({t['progress']['failed']} failed)" if t["progress"].get("failed") else ""
            click.echo(f"{t['id']:<20} {t['status']:<10} {done:>5}/{total:<5} {t['name']}{failed}")


@tournaments.command("schedule")
@click.argument("cron")
@click.option("--name", required=True)
@url_option
@token_option
def schedule_tournament(cron: str, name: str, url: str | None, token: str | None) -> None:
    """Run a round of the ladder among all active bots whenever CRON fires (e.g. "0 3 * * *")."""
    with _arena_errors():
        body = {"cron": cron, "template": {"name": name}}
        _echo_json(_arena(url, token).operator("POST", "/api/schedules", json=body))


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
    if url is not None:
        if not secret:
            raise click.UsageError("--url needs --secret (or GONGZHU_BOT_SECRET)")
        report = examine(url, [secret], time_limit_ms=time_limit_ms, allow_private=True)
    else:
        if not token:
            raise click.UsageError("--bot needs --token (or GONGZHU_BOT_TOKEN)")
        with _arena_errors():
            found = _arena(arena_url).call("POST", f"/api/bots/{bot_id}/doctor", token=token)
        report = Report.from_json(found)
    if as_json:
        _echo_json(report.to_json())
    else:
        click.echo(report.text(), nl=False)
    sys.exit(0 if report.ok else 1)


# -- disputes (docs/DISPUTES.md) -----------------------------------------------------------------


@main.group()
def disputes() -> None:
    """Contest a decision your bot played; the operator rules (docs/DISPUTES.md)."""


dispute_token = click.option(
    "--token", envvar="GONGZHU_BOT_TOKEN",
    help="Your bot's token (env GONGZHU_BOT_TOKEN), or the operator's.",
)  # fmt: skip


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
    with _arena_errors():
        made = _arena(url, "").call("POST", "/api/disputes", token=token, json=body)
    click.echo(f"dispute {made['id']} filed; its evidence is being gathered: "
               f"gongzhu disputes show {made['id']} --token …")  # fmt: skip


@disputes.command("show")
@click.argument("dispute_id")
@dispute_token
@click.option("--json", "as_json", is_flag=True, help="The whole dispute and evidence, as JSON.")
@url_option
def show_dispute(dispute_id: str, token: str | None, as_json: bool, url: str | None) -> None:
    """A dispute, its ruling and (to its bot's owner and the operator) its evidence."""
    arena = _arena(url, token)
    with _arena_errors():
        shown = arena.call(
            "GET", f"/api/disputes/{dispute_id}", token=token or arena.operator_token
        )
    if as_json:
        _echo_json(shown)
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
    arena = _arena(url, token)
    params: dict[str, str] = {"per_page": "100"}
    if open_only:
        params["status"] = "open"
    if tournament:
        params["tournament"] = tournament
    with _arena_errors():
        found = arena.call(
            "GET", "/api/disputes", token=None if tournament else token or arena.operator_token,
            params=params,
        )  # fmt: skip
    for d in found["items"]:
        what = "hand" if d["decision"] is None else f"decision {d['decision']}"
        click.echo(f"{d['id']}  {d['status']:<8}  {d['match_id']} hand {d['hand']} {what}  "
                   f"{d['bot_id']}: {d['statement'][:60]}")  # fmt: skip
    click.echo(f"{found['total']} dispute(s)")


@disputes.command("rule")
@click.argument("dispute_id")
@click.option("--reject", "rejected", metavar="REASON", help="Reject it, saying why.")
@click.option("--uphold", "upheld", metavar="REASON", help="Uphold it, saying why.")
@click.option("--remedy", type=click.Choice(["replay", "strike"]), default=None,
              help="An upheld ruling's remedy: the match voided and played again (replay), or "
                   "continued from the contested decision with its recorded answer (strike, "
                   "where the evidence says the answer could stand).")  # fmt: skip
@url_option
@token_option
def rule_dispute(
    *, dispute_id: str, rejected: str | None, upheld: str | None, remedy: str | None,
    url: str | None, token: str | None,
) -> None:  # fmt: skip
    """Rule on a dispute (operator): --reject REASON, or --uphold REASON --remedy replay (or
    strike)."""
    if (rejected is None) == (upheld is None):
        raise click.UsageError("give --reject REASON or --uphold REASON")
    status, reason = ("rejected", rejected) if rejected is not None else ("upheld", upheld)
    body = {"status": status, "reason": reason, "remedy": remedy}
    arena = _arena(url, token)
    with _arena_errors():
        ruled = arena.operator("POST", f"/api/disputes/{dispute_id}/ruling", json=body)
    click.echo(f"dispute {ruled['id']}: {ruled['status']}")


main.add_command(worker_command)
main.add_command(cron_command)
main.add_command(replay_group, "replay")
main.add_command(practice_command)
main.add_command(migrate_replays)
main.add_command(rerate_command)
