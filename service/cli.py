"""The arena's own commands of ``gongzhu``: running it, or one of its roles, and the operator's
commands. They need the arena's dependencies (``pip install '.[arena]'``); importing this module
adds them to the bot author's commands of :mod:`service.author_cli`, which the ``gongzhu``
command does when one is asked for.

gongzhu run                       # everything, with a demo tournament (scripts/run)
gongzhu web | worker | cron | redis
gongzhu tournaments create | start | requeue-failed | schedule
gongzhu disputes rule D --reject REASON
gongzhu migrate-replays | rerate

``run`` writes the arena's settings into its data directory (:mod:`arena.settings`); every
other command finds the arena there (``GONGZHU_DATA_DIR``, default ``data``) unless the
environment names it (``REDIS_URL`` for the roles, ``GONGZHU_URL`` for the client commands).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote

import click

from arena.redis_server import redis_command
from arena.settings import (
    DEFAULT_DATA_DIR,
    ArenaSettings,
    NoArenaError,
    arena_environment,
)
from service.api_client import ApiCallError, ArenaClient
from service.archive_cli import migrate_replays
from service.author_cli import (
    arena_client,
    arena_errors,
    disputes,
    echo_json,
    main,
    print_standings,
    tournaments,
    url_option,
)
from service.demo import (
    HOUSE,
    register_bots,
    run_tournament,
    serve_bots,
)
from service.rerate_cli import rerate_command
from service.runtime import DataDir, private_directory
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

token_option = click.option(
    "--token", envvar="GONGZHU_OPERATOR_TOKEN",
    help="Operator token (env same name; default: the token of the arena's data directory).",
)  # fmt: skip


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
    _say_made_private(data.path, data.make_private())
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


def _say_made_private(where: Path, changed: list[Path]) -> None:
    """Say which files and directories of ``where`` were just made their owner's only."""
    if not changed:
        return
    names = [str(path.relative_to(where)) for path in changed]
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    click.echo(
        f"Made {len(changed)} files and directories in {where} readable by their owner only "
        f"(an older version left them open to other users): {shown}"
    )


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
    password ``GONGZHU_REDIS_PASSWORD`` when it is set (``gongzhu run`` sets it); its directory
    and files readable by their owner only."""
    if directory is None:
        directory = Path(os.environ.get("GONGZHU_DATA_DIR") or DEFAULT_DATA_DIR) / "redis"
    _say_made_private(directory, private_directory(directory))
    command = redis_command(directory, port, password=os.environ.get("GONGZHU_REDIS_PASSWORD"))
    os.execv(command[0], command)


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
    arena = arena_client(url, token)
    with arena_errors():
        made = arena.operator("POST", "/api/tournaments", json=body)
        if start:
            made = arena.operator("POST", f"/api/tournaments/{made['id']}/start")
    echo_json(made)


@tournaments.command("start")
@click.argument("tournament_id")
@url_option
@token_option
def start_tournament(tournament_id: str, url: str | None, token: str | None) -> None:
    """Start a created tournament: its matches are queued for the workers."""
    with arena_errors():
        path = f"/api/tournaments/{tournament_id}/start"
        echo_json(arena_client(url, token).operator("POST", path))


@tournaments.command("requeue-failed")
@click.argument("tournament_id")
@url_option
@token_option
def requeue_failed(tournament_id: str, url: str | None, token: str | None) -> None:
    """Play a tournament's failed matches again (each with all its retries)."""
    with arena_errors():
        path = f"/api/tournaments/{tournament_id}/requeue-failed"
        echo_json(arena_client(url, token).operator("POST", path))


@tournaments.command("schedule")
@click.argument("cron")
@click.option("--name", required=True)
@url_option
@token_option
def schedule_tournament(cron: str, name: str, url: str | None, token: str | None) -> None:
    """Run a round of the ladder among all active bots whenever CRON fires (e.g. "0 3 * * *")."""
    with arena_errors():
        body = {"cron": cron, "template": {"name": name}}
        echo_json(arena_client(url, token).operator("POST", "/api/schedules", json=body))


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
    arena = arena_client(url, token)
    with arena_errors():
        ruled = arena.operator("POST", f"/api/disputes/{dispute_id}/ruling", json=body)
    click.echo(f"dispute {ruled['id']}: {ruled['status']}")


main.add_command(worker_command)
main.add_command(cron_command)
main.add_command(migrate_replays)
main.add_command(rerate_command)
