# Sourced by scripts/run and scripts/test with the extra to install and the script's arguments:
# make .venv and install the project into it. PYTHON picks the interpreter (default python3,
# which must be 3.11 or newer). Asked for --help (or -h), it installs nothing and sets
# help_only: the script answers from the .venv there is, or with its own description (usage).
set -euo pipefail
script="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
extra=$1
shift
help_only=
for arg in "$@"; do
    if [ "$arg" = --help ] || [ "$arg" = -h ]; then
        help_only=1
    fi
done

usage() {
    # The calling script's description: its comment lines after the #! line.
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$script"
}

if [ -n "$help_only" ]; then
    return 0
fi
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
stamp=.venv/.installed-$(cat pyproject.toml setup.py {referee,bot_sdk,replays}/*.py | sha256sum | cut -c1-16)-$extra
if [ ! -e "$stamp" ]; then
    # What it takes depends on the network, pip's cache, the compiler and the machine's load:
    # README, "Quick start", has the figures.
    echo "Installing the arena and its tools into .venv/ (first run, or pyproject.toml, setup.py" \
         "or a compiled package changed): minutes, more on a busy machine (README, Quick" \
         "start)..." >&2
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e ".[$extra]"
    rm -f .venv/.installed-*
    touch "$stamp"
    echo "Installed: $(.venv/bin/python -m referee --version)" >&2
fi
