"""``python -m referee --version``: the installed version, and which build of the referee runs."""

from __future__ import annotations

import argparse
from importlib import metadata

from referee.build import describe

DISTRIBUTION = "gongzhu-arena"


def version() -> str:
    """``gongzhu-arena 0.1.0, referee compiled (mypyc)``, or ``... referee pure Python (why)``."""
    try:
        installed = metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        installed = "(not installed)"
    return f"{DISTRIBUTION} {installed}, referee {describe()}"


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
