"""The README's SDK install, for real: ``pip install .`` of this repository into a fresh virtual
environment gives a bot author the SDK, the referee and the replay tools, serves and practises
an example bot, and installs none of the arena (no Flask, RQ or Redis client).

It needs PyPI (or pip's cache) and takes about a minute, hence tests/e2e."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from arena.redis_server import free_port

ROOT = Path(__file__).resolve().parents[2]
ARENA_ONLY = ["flask", "rq", "redis", "gunicorn", "honcho", "openskill"]


def _copy_of_the_repository(target: Path) -> Path:
    """The repository's tracked files (what a clone has), so the build leaves the worktree alone."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split("\0")
    for name in filter(None, tracked):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


@pytest.fixture(scope="module")
def sdk_python(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh virtual environment with ``pip install .`` of the repository (the README's
    command), nothing else; pure Python (``GONGZHU_COMPILE=0``): what is installed is the
    question here, and the compiled build's install is tests/referee/test_compiled.py's, whose
    minute of compiling this would repeat."""
    clone = _copy_of_the_repository(tmp_path_factory.mktemp("clone"))
    home = tmp_path_factory.mktemp("sdk-venv")
    venv.create(home, with_pip=True)
    python = home / "bin" / "python"
    started = time.monotonic()
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "."],
        cwd=clone,
        check=True,
        timeout=600,
        env={**os.environ, "GONGZHU_COMPILE": "0"},
    )
    print(f"pip install . took {time.monotonic() - started:.0f} s")
    yield python


def _run(python: Path, *args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        [str(python), *args], check=False, capture_output=True, text=True, env=env, cwd="/", **kw
    )  # type: ignore[call-overload]


def test_the_sdk_installs_without_the_arena(sdk_python: Path) -> None:
    found = _run(sdk_python, "-c", "import bot_sdk, referee, replays; print(bot_sdk.__file__)")
    assert found.returncode == 0, found.stderr
    assert "site-packages" in found.stdout  # the installed copy, not this checkout
    version = _run(sdk_python, "-m", "referee", "--version")
    pure = "pure Python (not compiled at install)"
    assert version.stdout.strip().endswith(f"referee {pure}, bot_sdk {pure}, replays {pure}"), (
        version.stdout + version.stderr
    )
    for module in ARENA_ONLY:
        missing = _run(sdk_python, "-c", f"import {module}")
        assert missing.returncode != 0 and "ModuleNotFoundError" in missing.stderr, module
    gongzhu = _run(sdk_python.parent / "gongzhu", "standings")
    assert gongzhu.returncode == 1
    assert "pip install '.[arena]'" in gongzhu.stderr and "Traceback" not in gongzhu.stderr


def test_an_example_bot_is_served_and_practised_from_the_sdk_install(sdk_python: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    serve = [str(sdk_python), "-m", "bot_sdk", "serve", "bot_sdk.examples.lowest_card:LowestCard"]
    server = subprocess.Popen(
        [*serve, "--port", str(port), "--insecure"], env=env, cwd="/",
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                requests.get(url, timeout=1)
                break
            except requests.ConnectionError:
                time.sleep(0.2)
        practice = _run(sdk_python, "-m", "bot_sdk", "practice", url, "--matches", "1", "--quiet")
        assert practice.returncode == 0, practice.stderr
        assert "Traceback" not in practice.stderr
        assert practice.stdout.strip(), "practice printed no summary"
    finally:
        server.terminate()
        server.wait(10)
    assert sys.executable  # the test's own interpreter is untouched by the venv
