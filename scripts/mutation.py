"""Mutation testing of the modules that protect users, with Cosmic Ray (run it as scripts/mutation).

Each module named in scripts/mutation.toml is mutated in a copy of the work tree (.mutation/tree-*:
the tracked and untracked files, never the ignored ones), one mutant at a time, and its own test
files are run against each mutant; the copy comes first on PYTHONPATH so that every process the
tests start (RQ workers, the cron, the web service) imports the mutated code. The sessions are
kept in .mutation/<module>.sqlite, so `--report` prints the figures again without running.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import tomllib
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import TestOutcome, WorkerOutcome

ROOT = Path(__file__).resolve().parent.parent
STATE = ROOT / ".mutation"
TREE = STATE / f"tree-{os.getpid()}"
"""This run's copy of the work tree (one per run: two runs of different modules may overlap)."""
CONFIG = ROOT / "scripts" / "mutation.toml"
BIN = Path(sys.executable).parent
RUN_MARK = "GONGZHU_MUTATION_RUN"


@dataclass
class Tally:
    """One module's outcome counts, and the surviving mutants not known to be equivalent."""

    module: str
    killed: int = 0
    timeout: int = 0
    survived: int = 0
    equivalent: int = 0
    incompetent: int = 0
    survivors: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.killed + self.timeout + self.survived + self.equivalent + self.incompetent

    @property
    def kill_rate(self) -> float:
        """Killed (timeouts included) over the mutants that can change behaviour."""
        live = self.killed + self.timeout + self.survived
        return 100.0 * (self.killed + self.timeout) / live if live else 100.0


def slug(module: str) -> str:
    return module.removesuffix(".py").replace("/", ".")


def pick(modules: dict[str, Any], names: list[str]) -> list[str]:
    """The modules named (as a path, arena/store/store.py, or dotted, arena.store.store), else
    all."""
    if not names:
        return list(modules)
    by_slug = {slug(module): module for module in modules}
    chosen = []
    for name in names:
        module = name if name in modules else by_slug.get(slug(name))
        if module is None:
            sys.exit(f"error: {name} is not in {CONFIG.relative_to(ROOT)}: {', '.join(modules)}")
        chosen.append(module)
    return chosen


def copy_tree() -> None:
    """.mutation/tree: the work tree's files as they are now (edits not yet committed included)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    shutil.rmtree(TREE, ignore_errors=True)
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            target = TREE / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def environment(run: str) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(TREE),
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        RUN_MARK: run,
    }


def stop_leftovers(run: str) -> None:
    """SIGKILL the processes this run started that outlived their test (a mutant cut off at its
    time limit leaves its Redis server and its workers, which run in sessions of their own)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            marked = f"{RUN_MARK}={run}".encode() in (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if marked:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(entry.name), signal.SIGKILL)


def test_paths(module: str, settings: dict[str, Any]) -> list[str]:
    """The module's test files, and the module itself for its doctests (--doctest-modules)."""
    return [*settings["tests"], module]


def write_config(module: str, settings: dict[str, Any], exclude: list[str]) -> Path:
    tests = " ".join(test_paths(module, settings))
    command = f"{BIN / 'python'} -m pytest -x -q -p no:cacheprovider {tests}"
    lines = [
        "[cosmic-ray]",
        f'module-path = "{module}"',
        f"timeout = {float(settings['timeout'])}",
        "excluded-modules = []",
        f'test-command = "{command}"',
        "",
        "[cosmic-ray.distributor]",
        'name = "local"',
        "",
        "[cosmic-ray.filters.operators-filter]",
        "exclude-operators = [" + ", ".join(f"'{pattern}'" for pattern in exclude) + "]",
    ]
    path = STATE / f"{slug(module)}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def forget_survivors(module: str) -> None:
    """Drop the surviving mutants' outcomes from the module's last session, so that `exec` runs
    them again (and only them); refused if the module changed since that session began."""
    session = STATE / f"{slug(module)}.sqlite"
    source = STATE / f"{slug(module)}.source"
    if not session.exists() or source.read_text() != (ROOT / module).read_text():
        sys.exit(f"error: {module} has no session, or changed since it: run it in full")
    with contextlib.closing(sqlite3.connect(session)) as db, db:
        db.execute("DELETE FROM work_results WHERE test_outcome = 'SURVIVED'")


def run_module(
    module: str, settings: dict[str, Any], exclude: list[str], run: str, *, survivors: bool
) -> None:
    config = write_config(module, settings, exclude)
    session = STATE / f"{slug(module)}.sqlite"
    if survivors:
        forget_survivors(module)
    else:
        session.unlink(missing_ok=True)
    env = environment(run)

    def call(*command: str) -> None:
        subprocess.run(command, cwd=TREE, env=env, check=True)

    started = time.monotonic()
    baseline = subprocess.run(
        [
            str(BIN / "python"),
            "-m",
            "pytest",
            "-x",
            "-q",
            "-p",
            "no:cacheprovider",
            *settings["tests"],
        ],
        cwd=TREE,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if baseline.returncode != 0:
        sys.exit(f"error: {module}'s tests fail before any mutation:\n{baseline.stdout[-3000:]}")
    print(f"{module}: tests pass unmutated in {time.monotonic() - started:.1f} s", flush=True)
    if not survivors:
        shutil.copy2(TREE / module, STATE / f"{slug(module)}.source")  # what the report quotes
        call(str(BIN / "cosmic-ray"), "init", str(config), str(session))
        call(str(BIN / "cr-filter-operators"), str(session), str(config))
    try:
        call(str(BIN / "cosmic-ray"), "exec", str(config), str(session))
    finally:
        stop_leftovers(run)
    print(f"{module}: mutated in {time.monotonic() - started:.0f} s", flush=True)


def tally(module: str, equivalent: list[dict[str, str]]) -> Tally | None:
    session = STATE / f"{slug(module)}.sqlite"
    if not session.exists():
        return None
    source = (STATE / f"{slug(module)}.source").read_text().splitlines()
    known = {
        (entry["operator"], entry["line"]) for entry in equivalent if entry["module"] == module
    }
    counts = Tally(module)
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            mutation = item.mutations[0]
            line_number = mutation.start_pos[0]
            line = source[line_number - 1].strip() if line_number <= len(source) else ""
            if result.test_outcome == TestOutcome.INCOMPETENT:
                counts.incompetent += 1
            elif result.test_outcome == TestOutcome.KILLED:
                if result.output == "timeout":
                    counts.timeout += 1
                else:
                    counts.killed += 1
            elif (mutation.operator_name, line) in known:
                counts.equivalent += 1
            else:
                counts.survived += 1
                counts.survivors.append(
                    f"  {module}:{line_number} {mutation.operator_name}"
                    f" #{mutation.occurrence}: {line}"
                )
        pending = db.num_work_items - db.num_results
    if pending:
        print(f"{module}: {pending} mutants not run yet (still running, or stopped)")
    return counts


def report(modules: list[str], equivalent: list[dict[str, str]]) -> None:
    rows = [counts for module in modules if (counts := tally(module, equivalent))]
    print()
    print("| module | mutants | killed | timeout | equivalent | survived | kill rate |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for c in rows:
        print(
            f"| {c.module} | {c.total} | {c.killed} | {c.timeout} | {c.equivalent}"
            f" | {c.survived} | {c.kill_rate:.1f} % |"
        )
    survivors = [line for c in rows for line in c.survivors]
    if survivors:
        print(
            "\nSurvivors (add a test that kills each, or list it in scripts/mutation.toml"
            " as equivalent with why):"
        )
        print("\n".join(survivors))
    for c in rows:
        if c.incompetent:
            print(f"{c.module}: {c.incompetent} mutants could not be run (incompetent)")
    for module in modules:
        for entry in stale(module, equivalent):
            print(
                f"{module}: an equivalent entry matches no line of the module now (remove it):"
                f" {entry['operator']}: {entry['line']}"
            )


def stale(module: str, equivalent: list[dict[str, str]]) -> list[dict[str, str]]:
    """``module``'s equivalent entries whose line is no longer in its source: they excuse
    nothing, and a mutant of the code they named, wherever it went, must be examined again."""
    lines = {line.strip() for line in (ROOT / module).read_text().splitlines()}
    return [e for e in equivalent if e["module"] == module and e["line"].strip() not in lines]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="modules to mutate (default: all configured)")
    parser.add_argument(
        "--report", action="store_true", help="print the last run's figures, run nothing"
    )
    parser.add_argument(
        "--survivors",
        action="store_true",
        help="run again only the last run's survivors, against the tests as they are now",
    )
    args = parser.parse_args()
    config = tomllib.loads(CONFIG.read_text())
    modules = pick(config["modules"], args.modules)
    equivalent = config.get("equivalent", [])
    if not args.report:
        STATE.mkdir(exist_ok=True)
        copy_tree()
        run = uuid.uuid4().hex
        try:
            for module in modules:
                settings = config["modules"][module]
                exclude = config["exclude-operators"]
                run_module(module, settings, exclude, run, survivors=args.survivors)
        finally:
            shutil.rmtree(TREE, ignore_errors=True)
    report(modules, equivalent)


if __name__ == "__main__":
    main()
