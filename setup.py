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
options = {}
if os.environ.get("GONGZHU_COMPILE") == "1":
    import atexit
    import shutil
    import tempfile

    from mypyc.build import mypycify

    ext_modules = mypycify(COMPILED_MODULES, opt_level="3")
    # A fresh build directory each time: an extension left in ./build by an earlier build (of a
    # module since dropped from the list) would otherwise be installed too.
    build_base = tempfile.mkdtemp(prefix="gongzhu-build-")
    atexit.register(shutil.rmtree, build_base, ignore_errors=True)
    options = {"build": {"build_base": build_base}}

setup(ext_modules=ext_modules, options=options)
