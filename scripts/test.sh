#!/usr/bin/env bash
# Set up the environment and run the checks (ruff, mypy, the documentation build) and the test suite,
# offline.
#   bash scripts/test.sh [pytest args]
# The raw data are read from ../shared/data (or $MTEB_EVALRANK_SOURCE).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
VENV=$VENV bash scripts/setup.sh
"$VENV/bin/ruff" check .
"$VENV/bin/ruff" format --check .
# the type checker on the package ([tool.mypy] in pyproject.toml; incremental cache .mypy_cache/)
"$VENV/bin/mypy"
# the documentation site (docs/, mkdocs.yml): broken links, anchors or nav entries fail
NO_MKDOCS_2_WARNING=1 "$VENV/bin/mkdocs" build --strict --quiet
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
"$VENV/bin/python" -m pytest "$@"
