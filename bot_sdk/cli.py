"""The ``python -m bot_sdk`` command: serve a bot in one line.

GONGZHU_BOT_SECRET=... python -m bot_sdk serve my_module:MyBot --port 8000

or, for a bot the arena cannot reach, connecting out to the arena:

GONGZHU_BOT_SECRET=... GONGZHU_BOT_TOKEN=... python -m bot_sdk connect my_module:MyBot \\
    --arena https://arena.example --bot-id bot_123
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

import click

from bot_sdk.bot import Bot
from bot_sdk.connect import CHANNELS, ArenaRefusedError, Channel, PullClient
from bot_sdk.dispatch import DEFAULT_MARGIN_MS, BotSource
from bot_sdk.gauntlet import gauntlet_command
from bot_sdk.practice import practice_command
from bot_sdk.protocol import SPOKEN, ProtocolVersion
from bot_sdk.server import BotApp, make_app, serve_app


@click.group()
def main() -> None:
    """The Gong Zhu bot SDK."""


F = TypeVar("F", bound=Callable[..., Any])

_BOT_OPTIONS = (
    click.option(
        "--secret-env",
        "secret_envs",
        multiple=True,
        default=("GONGZHU_BOT_SECRET",),
        show_default=True,
        help="Environment variable holding the signing secret; repeat it during a rotation.",
    ),
    click.option("--insecure", is_flag=True, help="Accept unsigned requests (local testing only)."),
    click.option(
        "--margin-ms",
        default=DEFAULT_MARGIN_MS,
        show_default=True,
        help="Time kept back from each decision's limit before answering the fallback.",
    ),
    click.option(
        "--no-fallback",
        is_flag=True,
        help="Debugging: wait for a slow bot, and answer a crash with a 500 error.",
    ),
    click.option(
        "--protocol",
        "protocols",
        multiple=True,
        type=click.Choice([p.value for p in SPOKEN]),
        default=[p.value for p in SPOKEN],
        show_default=True,
        help="A protocol version the bot may choose (repeat it for several): the latest the "
        "arena offers is chosen. --protocol gongzhu-bot/1 keeps a bot on version 1.",
    ),
    click.option("--log-level", default="info", show_default=True),
)


def bot_options(command: F) -> F:
    """The options of every command serving a bot: the signing secret, timing, logging."""
    for option in reversed(_BOT_OPTIONS):
        command = option(command)
    return command


def prepare_bot(
    target: str,
    *,
    secret_envs: tuple[str, ...],
    insecure: bool,
    margin_ms: int,
    no_fallback: bool,
    protocols: tuple[str, ...],
    log_level: str,
) -> BotApp:
    """What :func:`bot_options` ask for, made: logging set up, the bot loaded and its app made,
    refusing to run without a secret unless ``--insecure``."""
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(message)s")
    bot = load_bot(target)
    secrets = [os.environ[name] for name in secret_envs if os.environ.get(name)]
    if not secrets and not insecure:
        raise click.UsageError(
            f"set {' or '.join(secret_envs)} to the bot's signing secret from the arena, "
            "or pass --insecure to accept unsigned requests while testing locally"
        )
    return make_app(
        bot,
        secrets or None,
        verify_signatures=not insecure,
        margin_ms=margin_ms,
        fallback_on_timeout=not no_fallback,
        fallback_on_error=not no_fallback,
        protocols=tuple(ProtocolVersion(p) for p in protocols),
    )


@main.command()
@click.argument("target")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, help="Port to listen on.")
@click.option("--threads", default=8, show_default=True, help="Server threads.")
@bot_options
def serve(*, target: str, host: str, port: int, threads: int, **options: Any) -> None:
    """Serve the bot TARGET, written module:Class or path/to/file.py:Class."""
    serve_app(prepare_bot(target, **options), host=host, port=port, threads=threads)


@main.command()
@click.argument("target")
@click.option("--arena", required=True, help="The arena's address, e.g. https://arena.example.")
@click.option("--bot-id", required=True, help="The bot's id on the arena.")
@click.option(
    "--token",
    envvar="GONGZHU_BOT_TOKEN",
    show_envvar=True,
    help="The bot's API token from the arena (better from the environment than the command line).",
)
@click.option(
    "--channel",
    type=click.Choice(CHANNELS),
    default="websocket",
    show_default=True,
    help="websocket: one connection carries the requests and the answers (the fastest). "
    "stream: an NDJSON stream and a POST per answer, plain HTTP: use it when a proxy or firewall "
    "blocks WebSockets (the WebSocket does not go through HTTPS_PROXY).",
)
@bot_options
def connect(
    *,
    target: str,
    arena: str,
    bot_id: str,
    token: str | None,
    channel: Channel,
    **options: Any,
) -> None:
    """Serve the bot TARGET by connecting out to the arena: for a bot the arena cannot reach
    (behind NAT or a firewall). TARGET is written module:Class or path/to/file.py:Class."""
    if not token:
        raise click.UsageError("set GONGZHU_BOT_TOKEN (or --token) to the bot's API token")
    app = prepare_bot(target, **options)
    client = PullClient(app, arena=arena, bot_id=bot_id, token=token, channel=channel)
    with _stopping_on_signals(client):
        try:
            client.run()
        except ArenaRefusedError as exc:
            raise click.ClickException(str(exc)) from None


@contextmanager
def _stopping_on_signals(client: PullClient) -> Iterator[None]:
    """Ctrl-C and SIGTERM stop the client cleanly (the requests in hand are answered); a second
    Ctrl-C interrupts at once."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set in the main thread
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        if client.stopping:
            raise KeyboardInterrupt
        client.stop()

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def load_bot(target: str) -> BotSource:
    """The bot named by ``module:attr`` or ``file.py:attr``: a Bot subclass, factory or instance."""
    where, _, attr = target.rpartition(":")
    if not where or not attr:
        raise click.BadParameter(f"write module:Class or file.py:Class, not {target!r}")
    if where.endswith(".py"):
        path = Path(where)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None or not path.is_file():
            raise click.BadParameter(f"no Python file {where}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
    else:
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        module = importlib.import_module(where)
    found = getattr(module, attr, None)
    if isinstance(found, Bot) or callable(found):
        return found
    raise click.BadParameter(f"{where} has no bot class or instance named {attr!r}")


main.add_command(practice_command)
main.add_command(gauntlet_command)
