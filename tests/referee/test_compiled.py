"""The referee, the SDK's request bodies and the replay checks as installed are compiled by mypyc,
the referee plays exactly like its pure-Python source, and no package ever runs compiled code
older than its source.

The installed packages are the compiled build (``pip install`` compiles them wherever a C
compiler is available, as on the machines that run this suite): the rest of the suite runs on
it, and ``test_the_referee_suite_passes_on_pure_python`` runs the referee's tests and the compiled
modules' doctests again on the pure-Python source (``GONGZHU_COMPILE=0``), the readable reference
of the rules.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from referee.build import COMPILED, COMPILED_MODULES, compiled_dir
from referee.build import ROOT as INSTALLED

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import hashlib, json, random
from referee import Game, Rules, Variant, RulesError
from referee.build import describe
from referee.players import play_random

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
print(json.dumps({"build": describe(), "digest": digest.hexdigest(), "matches": matches}))
"""


def environment(compile_setting: str | None, **extra: str) -> dict[str, str]:
    """This process's environment with ``GONGZHU_COMPILE`` set as given (None: unset)."""
    env = {k: v for k, v in os.environ.items() if k != "GONGZHU_COMPILE"}
    if compile_setting is not None:
        env["GONGZHU_COMPILE"] = compile_setting
    return {**env, **extra}


def python(*args: str, env: dict[str, str], cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], env=env, cwd=cwd, capture_output=True, text=True, check=False
    )


def test_the_installed_packages_are_compiled() -> None:
    version = python("-m", "referee", "--version", env=environment(None))
    assert version.returncode == 0, version.stderr
    every = ", ".join(f"{package} {COMPILED}" for package in COMPILED_MODULES)
    assert version.stdout.strip().endswith(every), (
        f"{version.stdout.strip()}: the suite runs on the compiled build, which `pip install` "
        "makes where a C compiler is available (`pip install -v` says why it did not)"
    )
    for package, modules in COMPILED_MODULES.items():
        found = {path.name.split(".")[0] for path in compiled_dir(package).glob("*.so")}
        assert found == set(modules), f"{package}'s compiled modules are not where they load from"


def test_compiled_and_pure_python_play_identical_matches() -> None:
    runs = {}
    for setting in (None, "0"):
        run = python("-c", SCRIPT, env=environment(setting))
        assert run.returncode == 0, run.stderr
        runs[setting] = json.loads(run.stdout)
    compiled, pure = runs[None], runs["0"]
    assert compiled.pop("build") == COMPILED
    assert pure.pop("build") == "pure Python (GONGZHU_COMPILE=0)"
    assert pure["matches"] >= 30
    assert compiled == pure


REFUSALS = "tests/referee/test_refusals.py"
RUN_SUITE = """
import sys, pytest
code = pytest.main(sys.argv[1:])
from referee.build import describe
print("the referee ran", describe())
sys.exit(code)
"""


def test_the_referee_suite_passes_on_pure_python() -> None:
    """The referee's tests and the compiled modules' doctests on the pure-Python source (the
    compiled build runs them in the suite itself, its compiled modules' doctests only here, see
    conftest.py), but for its property tests of random matches: the compiled build runs those,
    and the two builds play identical matches over every variant (above), so on pure Python they
    would show nothing more for their minutes."""
    doctests = [f"{p}/{m}.py" for p, modules in COMPILED_MODULES.items() for m in modules]
    args = ["tests/referee", "referee", *doctests, "--ignore", "tests/referee/test_compiled.py"]
    args += ["--ignore", "tests/referee/test_properties.py"]
    args += ["--deselect", f"{REFUSALS}::test_refusals_carry_their_reason_and_read_as_before"]
    args += ["-x", "-p", "no:cacheprovider", "-n", "0"]
    run = python("-c", RUN_SUITE, *args, env=environment("0"))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "the referee ran pure Python (GONGZHU_COMPILE=0)" in run.stdout
    assert "passed" in run.stdout


def installed_copy(target: Path) -> None:
    """A copy of the installed packages, compiled modules included (their shared library stays
    where it was installed, on the path of the subprocesses too)."""
    for package in COMPILED_MODULES:
        shutil.copytree(
            INSTALLED / package, target / package, ignore=shutil.ignore_patterns("__pycache__")
        )


PROBE = """
import importlib, sys
from referee.build import COMPILED_MODULES, describe_all
builds = describe_all()
print(sorted(set(builds.values())))
edited = importlib.import_module(sys.argv[1])
print(edited.__file__)
print(getattr(edited, "EDITED", False))
"""


@pytest.mark.parametrize("package", list(COMPILED_MODULES))
def test_an_edited_source_runs_as_pure_python_rather_than_its_stale_compiled_build(
    tmp_path: Path, package: str
) -> None:
    """The trap of an editable install: the compiled modules beside the sources would go on
    running the code they were built from after a source is edited. An edit in any of the
    packages runs all three as pure Python (one group's compiled code expects the others'
    compiled classes)."""
    installed_copy(tmp_path)
    module = f"{package}.{COMPILED_MODULES[package][0]}"
    env = environment(None, PYTHONPATH=str(tmp_path))
    before = python("-c", PROBE, module, env=env, cwd=tmp_path)
    assert before.stdout.splitlines()[0] == str([COMPILED]), before.stdout + before.stderr

    source = tmp_path / package / f"{COMPILED_MODULES[package][0]}.py"
    with source.open("a") as edit:
        edit.write("\nEDITED = True\n")
    after = python("-c", PROBE, module, env=env, cwd=tmp_path)
    assert after.returncode == 0, after.stderr
    assert after.stdout.splitlines() == [
        "['pure Python (the compiled build is older than the sources)']",
        str(source),
        "True",  # the edit runs
    ]
    warning = "StaleBuildWarning: running referee, bot_sdk, replays as pure Python: the sources "
    assert f"{warning}of {package} in {tmp_path} changed" in after.stderr


@pytest.fixture(scope="module")
def built_without_a_compiler(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """``pip install .`` where the C compiler fails (``CC=false``): the target and pip's log."""
    target = tmp_path_factory.mktemp("no-compiler")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-v", "--no-deps", "--no-build-isolation",
         "--no-cache-dir", "--target", str(target), str(ROOT)],
        env=environment(None, CC="false"), capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-2000:]
    return target, install.stdout + install.stderr


def test_without_a_c_compiler_the_install_is_pure_python_and_says_so(
    built_without_a_compiler: tuple[Path, str],
) -> None:
    target, log = built_without_a_compiler
    assert "no working C compiler" in log
    assert "referee, bot_sdk, replays are installed as pure Python" in log
    assert not [package for package in COMPILED_MODULES if compiled_dir(package, target).exists()]
    assert not list(target.glob("*__mypyc*"))
    version = python("-m", "referee", "--version", env=environment(None), cwd=target)
    pure = "pure Python (not compiled at install)"
    assert version.stdout.strip().endswith(
        ", ".join(f"{package} {pure}" for package in COMPILED_MODULES)
    ), version.stdout + version.stderr
