"""Which build runs: the hot modules of the referee, the SDK's requests and the replay checks
compiled by mypyc, or their pure-Python source.

``pip install .`` compiles the modules of ``COMPILED_MODULES`` with mypyc wherever a C compiler
is available (setup.py), all of them in one group: one shared library, in which the compiled
code of each package calls the others' compiled functions and reads their compiled classes
directly. Each package's compiled modules go to its own ``_mypyc/`` directory, beside the digest
of the sources of all three packages they were built from. Each package puts its directory first
on its path (its ``__init__`` calls :func:`use_compiled`) only while that digest matches the
sources, so an edited source (in an editable install) runs as pure Python, with a warning, until
it is built again, never as the stale compiled code. The choice is one for the three packages:
one group's compiled code expects the others' compiled classes, so one package cannot run
compiled beside another's pure Python. ``GONGZHU_COMPILE=0`` runs pure Python. This module uses
the standard library only: setup.py loads it by path.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import os
import warnings
from collections.abc import MutableSequence
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from types import ModuleType
from typing import Final, NamedTuple

ROOT: Final = Path(__file__).resolve().parent.parent
"""Where the packages are installed, side by side."""
COMPILED_MODULES: Final = {
    "referee": ("game", "cards", "deal", "moves", "observation", "players", "records", "scoring"),
    "bot_sdk": ("fragments", "protocol"),
    "replays": ("verify", "deals", "faults", "log", "packing", "schema", "upgrade"),
}
"""The modules compiled in each package; the first is the one that says whether it runs."""
SUBDIR: Final = "_mypyc"
"""In each package: where its compiled modules are installed (a directory, not a package)."""
DIGEST_FILE: Final = "sources.sha256"
"""In each ``SUBDIR``: the digests of the sources the compiled modules were built from."""
COMPILED: Final = "compiled (mypyc)"
PURE: Final = "pure Python"


class StaleBuildWarning(RuntimeWarning):
    """The compiled modules were built from other sources than the packages': not loaded."""


def compiled_dir(package: str, root: Path = ROOT) -> Path:
    return root / package / SUBDIR


def sources_digest(package_dir: Path) -> str:
    """SHA-256 of a package's Python sources, names and contents, in name order."""
    digest = hashlib.sha256()
    for path in sorted(package_dir.glob("*.py")):
        digest.update(f"{path.name}\0{path.stat().st_size}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def sources_digests(root: Path = ROOT) -> str:
    """What each ``DIGEST_FILE`` holds: a line for each compiled package, its name and digest."""
    return "".join(f"{name} {sources_digest(root / name)}\n" for name in COMPILED_MODULES)


class Choice(NamedTuple):
    """Whether the compiled modules load, or why pure Python runs."""

    compiled: bool
    why_pure: str


@functools.cache
def choice() -> Choice:
    """Made once, when the first of the packages is imported."""
    if os.environ.get("GONGZHU_COMPILE") == "0":
        return Choice(False, "GONGZHU_COMPILE=0")
    current = sources_digests()
    changed = set()
    for package in COMPILED_MODULES:
        try:
            built_from = (compiled_dir(package) / DIGEST_FILE).read_text()
        except FileNotFoundError:
            return Choice(False, "not compiled at install")
        changed |= set(current.splitlines()) - set(built_from.splitlines())
    if changed:
        names = ", ".join(sorted(line.split()[0] for line in changed))
        warnings.warn(
            f"running {', '.join(COMPILED_MODULES)} as pure Python: the sources of {names} in "
            f"{ROOT} changed since they were compiled (install the package again to compile them)",
            StaleBuildWarning,
            stacklevel=3,
        )
        return Choice(False, "the compiled build is older than the sources")
    return Choice(True, "")


def use_compiled(package: str, path: MutableSequence[str]) -> None:
    """Put the package's compiled modules first on its ``__path__``, if they are to run: each
    compiled package's ``__init__`` calls this before it imports any of its modules."""
    if choice().compiled:
        path.insert(0, str(compiled_dir(package)))


def describe(package: str = "referee") -> str:
    """What runs of the package: ``compiled (mypyc)``, or ``pure Python (why)``."""
    if is_compiled(importlib.import_module(f"{package}.{COMPILED_MODULES[package][0]}")):
        return COMPILED
    # Chosen but not loaded: extensions built for another interpreter are not even found.
    return f"{PURE} ({choice().why_pure or 'the compiled modules do not load here'})"


def describe_all() -> dict[str, str]:
    """:func:`describe` of each compiled package."""
    return {package: describe(package) for package in COMPILED_MODULES}


def is_compiled(module: ModuleType) -> bool:
    """Whether the module was loaded from a C extension. (mypyc sets the ``__file__`` of a module
    that another compiled module imported as if it were beside its source.)"""
    return (module.__file__ or "").endswith(tuple(EXTENSION_SUFFIXES))
