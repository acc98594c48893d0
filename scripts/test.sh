#!/usr/bin/env bash
# Set up a virtual environment and run the test suite (offline).
#   bash scripts/test.sh [pytest args]
# VENV (default .venv) chooses the environment; the raw data are expected in
# ../shared/data (or MTEB_EVALRANK_SOURCE).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q torch==2.13.0
"$VENV/bin/python" -m pip install -q ".[offline,test]"
"$VENV/bin/ruff" check .
"$VENV/bin/ruff" format --check .
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
"$VENV/bin/python" -m pytest "$@"
