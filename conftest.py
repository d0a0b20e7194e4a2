"""The referee's doctests read its pure-Python source. Where the compiled build runs, its compiled
modules are not collected for doctests here (pytest would find the compiled module where it
expects the source): tests/referee/test_compiled.py runs them on the pure-Python source."""

import sys

from referee.build import is_compiled

collect_ignore = [
    f"{name.replace('.', '/')}.py"
    for name, module in sorted(sys.modules.items())
    if name.startswith("referee.") and is_compiled(module)
]
