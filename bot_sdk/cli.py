"""The ``python -m bot_sdk`` command: serve a bot in one line.

GONGZHU_BOT_SECRET=... python -m bot_sdk serve my_module:MyBot --port 8000
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import sys
from pathlib import Path

import click

from bot_sdk.bot import Bot
from bot_sdk.dispatch import DEFAULT_MARGIN_MS, BotSource
from bot_sdk.practice import practice_command
from bot_sdk.server import serve as serve_bot


@click.group()
def main() -> None:
    """The Gong Zhu bot SDK."""


@main.command()
@click.argument("target")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, help="Port to listen on.")
@click.option(
    "--secret-env",
    "secret_envs",
    multiple=True,
    default=("GONGZHU_BOT_SECRET",),
    show_default=True,
    help="Environment variable holding the signing secret; repeat it during a rotation.",
)
@click.option("--insecure", is_flag=True, help="Accept unsigned requests (local testing only).")
@click.option("--threads", default=8, show_default=True, help="Server threads.")
@click.option(
    "--margin-ms",
    default=DEFAULT_MARGIN_MS,
    show_default=True,
    help="Time kept back from each decision's limit before answering the fallback.",
)
@click.option(
    "--no-fallback",
    is_flag=True,
    help="Debugging: wait for a slow bot, and answer a crash with a 500 error.",
)
@click.option("--log-level", default="info", show_default=True)
def serve(
    *,
    target: str,
    host: str,
    port: int,
    secret_envs: tuple[str, ...],
    insecure: bool,
    threads: int,
    margin_ms: int,
    no_fallback: bool,
    log_level: str,
) -> None:
    """Serve the bot TARGET, written module:Class or path/to/file.py:Class."""
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(message)s")
    bot = load_bot(target)
    secrets = [os.environ[name] for name in secret_envs if os.environ.get(name)]
    if not secrets and not insecure:
        raise click.UsageError(
            f"set {' or '.join(secret_envs)} to the bot's signing secret from the arena, "
            "or pass --insecure to accept unsigned requests while testing locally"
        )
    serve_bot(
        bot,
        host=host,
        port=port,
        secret=secrets or None,
        threads=threads,
        verify_signatures=not insecure,
        margin_ms=margin_ms,
        fallback_on_timeout=not no_fallback,
        fallback_on_error=not no_fallback,
    )


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
