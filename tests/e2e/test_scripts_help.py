"""``scripts/run --help`` and ``scripts/test --help`` answer at once: they never install, nor
create or touch ``.venv`` (whose first install takes minutes, README). Run on a copy of the
scripts, with a ``python3`` on the PATH that only notes it was called."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CALLED = "called.log"
NOTING = """#!/bin/sh
echo "$0 $*" >> "{log}"
{then}
"""


def _clone(tmp_path: Path) -> Path:
    """The scripts and what they read, in a checkout without .venv."""
    root = tmp_path / "clone"
    shutil.copytree(ROOT / "scripts", root / "scripts")
    for name in ("pyproject.toml", "setup.py"):
        shutil.copy2(ROOT / name, root / name)
    return root


def _noting(path: Path, log: Path, then: str = "exit 1") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(NOTING.format(log=log, then=then))
    path.chmod(0o755)


def _run(script: Path, *args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """The script from another directory, a noting python3 first on the PATH."""
    bin_dir = tmp_path / "bin"
    _noting(bin_dir / "python3", tmp_path / CALLED)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHON", None)
    return subprocess.run(
        ["bash", str(script), *args], capture_output=True, text=True, env=env, cwd=tmp_path,
        timeout=30, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("flag", ["--help", "-h"])
@pytest.mark.parametrize("script", ["run", "test"])
def test_help_without_a_venv_describes_the_script_and_creates_none(
    tmp_path: Path, script: str, flag: str
) -> None:
    root = _clone(tmp_path)
    done = _run(root / "scripts" / script, flag, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"Usage: scripts/{script} " in done.stdout
    assert "#" not in done.stdout and "source" not in done.stdout  # the description only
    assert "Installing" not in done.stderr
    assert not (root / ".venv").exists()
    assert not (tmp_path / CALLED).exists()  # no Python was even started


def test_run_help_answers_from_the_venv_there_is_without_installing(tmp_path: Path) -> None:
    root = _clone(tmp_path)
    venv = root / ".venv"
    log = tmp_path / "venv-called.log"
    _noting(venv / "bin" / "python", log, then='echo "Usage: gongzhu run [OPTIONS]"')
    (venv / ".installed-0000000000000000-dev").touch()  # a stale stamp: the sources changed
    before = {path: path.stat().st_mtime_ns for path in venv.rglob("*")}
    done = _run(root / "scripts" / "run", "--help", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Usage: gongzhu run [OPTIONS]\n"
    assert log.read_text().split(" ", 1)[1] == "-m service run --help\n"  # never pip
    tested = _run(root / "scripts" / "test", "tests/referee", "--help", tmp_path=tmp_path)
    assert tested.returncode == 0 and "Usage: scripts/test " in tested.stdout
    assert log.read_text().count("\n") == 1  # the test command's help starts no Python
    assert {path: path.stat().st_mtime_ns for path in venv.rglob("*")} == before
    assert not (tmp_path / CALLED).exists()


def test_run_help_from_a_venv_that_cannot_answer_falls_back_to_the_description(
    tmp_path: Path,
) -> None:
    root = _clone(tmp_path)
    _noting(root / ".venv" / "bin" / "python", tmp_path / "venv-called.log", then="exit 1")
    done = _run(root / "scripts" / "run", "--help", tmp_path=tmp_path)
    assert done.returncode == 0 and "Usage: scripts/run " in done.stdout
