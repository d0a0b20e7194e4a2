"""The doctests read the pure-Python source. Where the compiled build runs, its compiled modules
are not collected for doctests here (pytest would find the compiled module where it expects the
source): tests/referee/test_compiled.py runs them on the pure-Python source."""

import importlib

from referee.build import COMPILED_MODULES, is_compiled

collect_ignore = [
    f"{package}/{name}.py"
    for package, names in COMPILED_MODULES.items()
    for name in names
    if is_compiled(importlib.import_module(f"{package}.{name}"))
]
