"""``gongzhu``: run the arena, or one of its roles, and the commands operators and bot authors use.

gongzhu run                       # everything, with a demo tournament (scripts/run)
gongzhu web | worker | cron | redis
gongzhu replay verify match.json  # and show, export, reask
gongzhu practice my_bot:MyBot     # the SDK's practice runner
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import click
from honcho.environ import parse_procfile
from honcho.manager import Manager
from honcho.printer import Printer

from bot_sdk.practice import practice_command
from replays.cli import main as replay_group
from service.demo import (
    ArenaClient,
    DemoError,
    print_standings,
    register_bots,
    run_tournament,
    serve_bots,
)
from service.runtime import DataDir
from workers.cli import cron as cron_command
from workers.cli import worker as worker_command
from workers.redis_server import redis_server_binary

ROOT = Path(__file__).resolve().parent.parent
PROCFILE = ROOT / "Procfile"
DEFAULT_DATA = Path("data")
DEFAULT_REDIS_PORT = 6399
"""The arena's own Redis listens here, away from a system Redis on 6379."""


@click.group()
def main() -> None:
    """The Gong Zhu bot arena."""


def procfile_processes(*, workers: int, own_redis: bool) -> dict[str, str]:
    """The Procfile's processes, name -> command: the worker line ``workers`` times, the redis
    line only when the arena runs its own Redis."""
    entries = parse_procfile(PROCFILE.read_text()).processes
    processes = {}
    for name, command in entries.items():
        if name == "redis" and not own_redis:
            continue
        if name == "worker":
            processes.update({f"worker.{n + 1}": command for n in range(workers)})
        else:
            processes[name] = command
    return processes


@main.command()
@click.option(
    "--data-dir", type=click.Path(path_type=Path), default=DEFAULT_DATA, show_default=True
)
@click.option("--port", default=8000, show_default=True, help="The web service's port.")
@click.option("--workers", default=2, show_default=True, help="RQ worker processes.")
@click.option("--redis-port", default=DEFAULT_REDIS_PORT, show_default=True)
@click.option("--demo/--no-demo", default=True, help="Register example bots and play a tournament.")
@click.option("--hands", default=2, show_default=True, help="Hands per demo match.")
def run(
    *, data_dir: Path, port: int, workers: int, redis_port: int, demo: bool, hands: int
) -> None:
    """Run the whole arena: Redis (REDIS_URL, else its own), the web service, workers and cron.

    Ctrl-C stops everything; running again with the same --data-dir reuses the data.
    """
    data = DataDir(data_dir.resolve())
    data.log_dir.mkdir(parents=True, exist_ok=True)
    configured = os.environ.get("REDIS_URL")
    redis_url = configured or f"redis://127.0.0.1:{redis_port}/0"
    env = {
        **os.environ,
        **data.environment(redis_url, allow_private_endpoints=demo),
        "GONGZHU_DATA_DIR": str(data.path),
        "GONGZHU_REDIS_PORT": str(redis_port),
        "GONGZHU_BIND": f"127.0.0.1:{port}",
        # the Procfile's commands are this Python's (the virtual environment's)
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    log = (data.log_dir / "arena.log").open("a", buffering=1)
    manager = Manager(Printer(log))
    for name, command in procfile_processes(workers=workers, own_redis=not configured).items():
        manager.add_process(name, command, env=env, cwd=str(ROOT))
    url = f"http://127.0.0.1:{port}"
    click.echo(f"Arena data in {data.path}; process logs in {data.log_dir / 'arena.log'}")
    click.echo(f"Redis: {redis_url if configured else 'its own, at ' + redis_url}")
    if demo:
        arena = ArenaClient(url, env["GONGZHU_OPERATOR_TOKEN"])
        threading.Thread(target=_demo, args=(arena, data, hands, manager), daemon=True).start()
    else:
        click.echo(f"Serving {url}/ (API docs {url}/api/docs). Ctrl-C stops the arena.")
    manager.loop()
    if manager.returncode:
        click.echo(f"The arena stopped; its processes' output is in {data.log_dir / 'arena.log'}")
    sys.exit(manager.returncode or 0)


def _demo(arena: ArenaClient, data: DataDir, hands: int, manager: Manager) -> None:
    try:
        arena.wait_ready()
        with serve_bots() as urls:
            bots = register_bots(arena, urls, data.path / "demo-bots.json")
            tournament = run_tournament(arena, [*bots, "house:normal", "house:easy"], hands=hands)
            print_standings(arena, tournament)
            click.echo("\nThe arena keeps running; Ctrl-C stops it.")
            threading.Event().wait()  # keep the demo bots served until the arena stops
    except DemoError as error:
        click.echo(f"\nThe demo failed: {error}", err=True)
        manager.terminate()


@main.command()
def web() -> None:
    """The web service alone (gunicorn), configured from the environment."""
    os.execvp(sys.executable, [sys.executable, "-m", "gunicorn", "service.app:from_environment()"])


@main.command()
@click.option("--dir", "directory", type=click.Path(path_type=Path), required=True)
@click.option("--port", default=DEFAULT_REDIS_PORT, show_default=True)
def redis(directory: Path, port: int) -> None:
    """The arena's own Redis in the foreground (append-only, fsync on every write)."""
    directory.mkdir(parents=True, exist_ok=True)
    binary = redis_server_binary()
    os.execv(
        binary,
        [
            binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory),
            "--appendonly", "yes", "--appendfsync", "always", "--save", "",
        ],
    )  # fmt: skip


@main.command()
@click.option("--tournament", "tournament_id", help="A tournament's standings (default: ladder).")
@click.option("--url", default="http://127.0.0.1:8000", show_default=True)
def standings(tournament_id: str | None, url: str) -> None:
    """Print a tournament's standings, or the ladder."""
    arena = ArenaClient(url.rstrip("/"), "")
    try:
        if tournament_id:
            print_standings(arena, arena.call("GET", f"/api/tournaments/{tournament_id}"))
            return
        for row in arena.call("GET", "/api/ladder")["items"]:
            click.echo(
                f"{row['rank']:>4}  {row['bot_id']:<24} {row['rating']:>8.2f} "
                f"(mu {row['mu']:.2f}, sigma {row['sigma']:.2f})  {row['matches']} matches"
            )
    except DemoError as error:
        raise click.ClickException(str(error)) from None


main.add_command(worker_command)
main.add_command(cron_command)
main.add_command(replay_group, "replay")
main.add_command(practice_command)
