"""The mypyc-compiled referee plays exactly like the pure-Python one.

Builds the compiled package the way production does (``GONGZHU_COMPILE=1 pip install``) into a
temporary directory, then replays the same random matches under every variant in both builds and
compares every move, hand result and outcome, and runs the whole referee suite on the compiled
build.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.engine import ROOT, build_compiled

SCRIPT = r"""
import hashlib, json, random, sys
import referee
from referee import Game, Rules, Variant, RulesError
from referee.players import play_random

compiled = referee.game.__file__.endswith(".so")
digest = hashlib.sha256()
rng = random.Random(7)
matches = 0
for seed in range(60):
    names = [v.value for v in Variant if rng.random() < 0.25]
    try:
        rules = Rules.from_json({"variants": names, "max_hands": 12})
    except RulesError:
        continue
    game = Game(rules, seed=seed)
    play_random(game, random.Random(seed))
    record = {
        "moves": [m.to_json() for m in game.move_stack],
        "results": [r.to_json() for r in game.results],
        "outcome": game.outcome.to_json(),
        "observation": game.observation(seed % 4).to_json(),
    }
    digest.update(json.dumps(record, sort_keys=True).encode())
    matches += 1
print(json.dumps({"compiled": compiled, "digest": digest.hexdigest(), "matches": matches}))
"""


def run_matches(pythonpath: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    # cwd too: ``python -c`` puts the working directory first on sys.path.
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        env=env, cwd=pythonpath, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return json.loads(out)


@pytest.fixture(scope="module")
def compiled_build(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("compiled")
    build_compiled(target)
    return target


def test_compiled_build_is_really_compiled(compiled_build):
    assert list((compiled_build / "referee").glob("game.*.so")), "mypyc produced no extension"


def test_compiled_and_pure_python_play_identical_matches(compiled_build):
    pure = run_matches(ROOT)
    compiled = run_matches(compiled_build)
    assert pure["compiled"] is False
    assert compiled["compiled"] is True
    assert pure["matches"] >= 30
    assert compiled == {**pure, "compiled": True}


RUN_SUITE = """
import sys, pytest
code = pytest.main(sys.argv[1:])
import referee.game
print("referee.game from", referee.game.__file__)
sys.exit(code)
"""


def test_the_referee_suite_passes_on_the_compiled_build(compiled_build):
    """Every referee test, the refusals of ill-typed input included: compiled code checks argument
    types itself, so a boundary that refuses a wrong type in Python must do so in C too."""
    env = {**os.environ, "PYTHONPATH": str(compiled_build)}
    args = [
        str(ROOT / "tests" / "referee"), "--ignore", str(Path(__file__)), "-q", "-x",
        "-p", "no:cacheprovider",
        # The compiled package first: no ini pythonpath, and the source tree appended, not
        # prepended, for the tests' own imports (the working directory is the build).
        "-o", "pythonpath=", "--import-mode=append", "--rootdir", str(ROOT),
    ]  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-c", RUN_SUITE, *args],
        env=env, cwd=compiled_build, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert f"referee.game from {compiled_build}" in result.stdout
    assert result.stdout.rstrip().endswith(".so")
