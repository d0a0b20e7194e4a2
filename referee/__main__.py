"""``python -m referee --version``: the installed version, and which build of each compiled package
runs (referee/build.py)."""

from __future__ import annotations

import argparse
from importlib import metadata

from referee.build import describe_all

DISTRIBUTION = "gongzhu-arena"


def version() -> str:
    """``gongzhu-arena 0.1.0, referee compiled (mypyc), bot_sdk compiled (mypyc), replays compiled
    (mypyc)``, or ``... referee pure Python (why), ...``."""
    try:
        installed = metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        installed = "(not installed)"
    builds = ", ".join(f"{package} {build}" for package, build in describe_all().items())
    return f"{DISTRIBUTION} {installed}, {builds}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m referee",
        description="The Gong Zhu referee (a library: see README.md).",
        formatter_class=argparse.RawTextHelpFormatter,  # the version on one line
    )
    parser.add_argument("--version", action="version", version=version())
    parser.parse_args(argv)
    parser.print_help()


if __name__ == "__main__":
    main()
