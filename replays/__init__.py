"""Match logs: recording, storing, reading back and verifying them (docs/REPLAYS.md).

Its hot modules may run compiled by mypyc, as the referee's do (referee/build.py).
"""

from referee import build

build.use_compiled(__name__, __path__)
