# Sourced by scripts/run and scripts/test: make .venv and install the project into it.
# PYTHON picks the interpreter (default python3, which must be 3.11 or newer).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "error: Python 3.11 or newer is needed ($PYTHON is $("$PYTHON" --version 2>&1))" >&2
    exit 1
fi
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
# The compiled packages' sources are in the stamp: the install compiles them (setup.py), and an
# edited source runs as pure Python until it is compiled again (referee/build.py).
stamp=.venv/.installed-$(cat pyproject.toml setup.py {referee,bot_sdk,replays}/*.py | sha256sum | cut -c1-16)-$1
if [ ! -e "$stamp" ]; then
    # Measured: 57 s with an empty pip cache, 22 s with a warm one (docs/OPERATIONS.md).
    echo "Installing the arena and its tools into .venv/ (first run, or pyproject.toml, setup.py" \
         "or a compiled package changed): about a minute..." >&2
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e ".[$1]"
    rm -f .venv/.installed-*
    touch "$stamp"
    echo "Installed: $(.venv/bin/python -m referee --version)" >&2
fi
