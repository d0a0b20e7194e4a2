"""The ``gongzhu`` command's entry point: the arena's commands, or, when the arena's
dependencies are not installed (``pip install .`` installs the SDK only), a message saying how
to get them instead of a traceback."""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from service.cli import main as arena_main  # noqa: PLC0415 - the arena may be absent
    except ModuleNotFoundError as error:
        sys.exit(
            f"gongzhu: {error.name} is not installed: the arena's commands need the arena's "
            "dependencies (pip install '.[arena]' in the repository). The SDK's commands need "
            "none: python -m bot_sdk serve|practice, python -m replays verify|show."
        )
    arena_main()
