"""Optional compiled build of the referee.

``pip install .`` installs pure Python. With ``GONGZHU_COMPILE=1`` the referee's hot modules
are compiled to C extensions with mypyc (the same typed source, checked by ``mypy --strict``);
``benchmarks/engine.py`` and ``tests/referee/test_compiled.py`` build and compare both.
"""

import os

from setuptools import setup

COMPILED_MODULES = [
    "referee/cards.py",
    "referee/deal.py",
    "referee/game.py",
    "referee/moves.py",
    "referee/observation.py",
    "referee/players.py",
    "referee/records.py",
    "referee/scoring.py",
]

ext_modules = []
if os.environ.get("GONGZHU_COMPILE") == "1":
    from mypyc.build import mypycify

    ext_modules = mypycify(COMPILED_MODULES, opt_level="3")

setup(ext_modules=ext_modules)
