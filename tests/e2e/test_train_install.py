"""The training environment the way a bot author installs it: ``pip install '.[train]'`` of this
repository into a fresh virtual environment (the SDK-only install and its ``train`` extra) imports
and steps both environments, and installs none of the arena.

It needs PyPI (or pip's cache) and takes one to two minutes, hence tests/e2e."""

from __future__ import annotations

import os
import subprocess
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_sdk_install import ARENA_ONLY, _copy_of_the_repository, _run

STEP_BOTH = """
import gymnasium
import training
from referee import Rules

env = training.GongZhuAECEnv(Rules.with_variants("pass_3", fixed_hands=1, max_hands=1))
env.reset(seed=5)
steps = 0
for agent in env.agent_iter():
    observation, reward, terminated, truncated, info = env.last()
    env.step(None if terminated else int(observation["action_mask"].nonzero()[0][0]))
    steps += 1
print("aec", steps, env.table.game.outcome.hands_played)
single = gymnasium.make("gongzhu/GongZhu-v0", opponents=("easy", "easy", "easy"))
observation, info = single.reset(seed=5)
observation, reward, terminated, truncated, info = single.step(
    int(observation["action_mask"].nonzero()[0][0])
)
print("gymnasium", observation["observation"].shape, info["seat"])
"""


@pytest.fixture(scope="module")
def train_python(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh virtual environment with ``pip install '.[train]'`` of the repository, pure
    Python (``GONGZHU_COMPILE=0``: what is installed is the question here)."""
    clone = _copy_of_the_repository(tmp_path_factory.mktemp("clone"))
    home = tmp_path_factory.mktemp("train-venv")
    venv.create(home, with_pip=True)
    python = home / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", ".[train]"],
        cwd=clone,
        check=True,
        timeout=600,
        env={**os.environ, "GONGZHU_COMPILE": "0"},
    )
    yield python


def test_the_train_extra_steps_both_environments_without_the_arena(train_python: Path) -> None:
    stepped = _run(train_python, "-c", STEP_BOTH)
    assert stepped.returncode == 0, stepped.stderr
    lines = stepped.stdout.split("\n")
    assert lines[0].startswith("aec ") and lines[0].endswith(" 1")  # one hand played to its end
    assert int(lines[0].split()[1]) > 52 + 4 * 3  # every play and every pass, card by card
    assert lines[1] == "gymnasium (1105,) 0"
    found = _run(train_python, "-c", "import training; print(training.__file__)")
    assert "site-packages" in found.stdout  # the installed copy, not this checkout
    for module in ARENA_ONLY:
        missing = _run(train_python, "-c", f"import {module}")
        assert missing.returncode != 0 and "ModuleNotFoundError" in missing.stderr, module
