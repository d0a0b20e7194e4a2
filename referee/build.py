"""Which build of the referee runs: its modules compiled by mypyc, or their pure-Python source.

``pip install .`` compiles the referee's hot modules with mypyc wherever a C compiler is
available (setup.py), into ``referee/_mypyc/`` beside a digest of the sources they were built
from. The package puts that directory first on its path only while the digest matches its
sources, so an edited source (in an editable install) runs as pure Python, with a warning,
until it is built again, never as the stale compiled code. ``GONGZHU_COMPILE=0`` runs pure
Python. This module uses the standard library only: setup.py loads it by path.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import os
import warnings
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from types import ModuleType
from typing import Final, NamedTuple

PACKAGE_DIR: Final = Path(__file__).resolve().parent
COMPILED_DIR: Final = PACKAGE_DIR / "_mypyc"
"""Where the compiled modules are installed (a directory, not a package)."""
DIGEST_FILE: Final = "sources.sha256"
"""In ``COMPILED_DIR``: the digest of the sources the compiled modules were built from."""
COMPILED: Final = "compiled (mypyc)"
PURE: Final = "pure Python"


class StaleBuildWarning(RuntimeWarning):
    """The compiled modules were built from other sources than the package's: not loaded."""


def sources_digest(package_dir: Path) -> str:
    """SHA-256 of the package's Python sources, names and contents, in name order."""
    digest = hashlib.sha256()
    for path in sorted(package_dir.glob("*.py")):
        digest.update(f"{path.name}\0{path.stat().st_size}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


class Choice(NamedTuple):
    """The directory of compiled modules to load first, or None and why pure Python runs."""

    directory: Path | None
    why_pure: str


@functools.cache
def choice() -> Choice:
    """Made once, when the package is first imported (``referee/__init__.py``)."""
    if os.environ.get("GONGZHU_COMPILE") == "0":
        return Choice(None, "GONGZHU_COMPILE=0")
    try:
        built_from = (COMPILED_DIR / DIGEST_FILE).read_text().strip()
    except FileNotFoundError:
        return Choice(None, "not compiled at install")
    if built_from != sources_digest(PACKAGE_DIR):
        warnings.warn(
            f"running the referee as pure Python: its sources in {PACKAGE_DIR} changed since "
            "they were compiled (install the package again to compile them)",
            StaleBuildWarning,
            stacklevel=2,
        )
        return Choice(None, "the compiled build is older than the sources")
    return Choice(COMPILED_DIR, "")


def describe() -> str:
    """What runs: ``compiled (mypyc)``, or ``pure Python (why)``."""
    if is_compiled(importlib.import_module("referee.game")):
        return COMPILED
    # Chosen but not loaded: extensions built for another interpreter are not even found.
    return f"{PURE} ({choice().why_pure or 'the compiled modules do not load here'})"


def is_compiled(module: ModuleType) -> bool:
    """Whether the module was loaded from a C extension. (mypyc sets the ``__file__`` of a module
    that another compiled module imported as if it were beside its source.)"""
    return (module.__file__ or "").endswith(tuple(EXTENSION_SUFFIXES))
