"""docs/TRAINING.md's examples run as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from referee import Game, Rules

DOC = Path(__file__).resolve().parents[2] / "docs" / "TRAINING.md"


def blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)


def test_the_example_loops_run() -> None:
    loops = [b for b in blocks() if "agent_iter" in b or "gymnasium.make" in b]
    assert len(loops) == 2
    for code in loops:
        exec(code, {})


def test_the_trained_bot_example_plays_its_model_s_best_legal_card() -> None:
    code = next(b for b in blocks() if "class Trained" in b)
    scores = np.arange(53.0)  # a model that prefers higher card numbers
    namespace = {"model": lambda vector: scores}
    exec(code, namespace)
    game = Game(Rules.with_variants("no_exposure"), seed=3)
    obs = game.observation(game.to_move)
    assert namespace["Trained"]().play(obs) == obs.legal.highest()


def test_without_the_extra_import_training_names_what_to_install() -> None:
    """As in the SDK-only install, where PettingZoo (or numpy, or Gymnasium) is missing."""
    for missing in ("numpy", "gymnasium", "pettingzoo"):
        code = f"import sys; sys.modules[{missing!r}] = None; import training"
        refused = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=False
        )
        assert refused.returncode == 1
        last = refused.stderr.strip().splitlines()[-1]
        assert last == (
            f"ImportError: the training environment needs the train extra ({missing} is not "
            "installed): pip install '.[train]' in a clone of the arena's repository"
        )
