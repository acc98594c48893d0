#!/usr/bin/env bash
# Set up the environment and run the checks (ruff, mypy, the documentation build) and the test suite,
# offline, on every core (pytest-xdist; each worker has its own HF_HOME and caches).
#   bash scripts/test.sh                 # everything: what CI runs
#   bash scripts/test.sh -m "not slow"   # the fast tier (development loop)
#   bash scripts/test.sh -n 0 [...]      # one process (pytest arguments are passed on; the last -n wins)
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
# --durations=20: the slowest tests are printed on every run, so a slow test is seen where it lands
"$VENV/bin/python" -m pytest -n auto --durations=20 "$@"
