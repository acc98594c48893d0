#!/usr/bin/env bash
# The GPU and many-core rows of the width benchmarks (docs/benchmarks.md) as one prepared run, for a
# CUDA machine that cannot reach the package index but has python3 with torch (CUDA) and the common
# scientific stack:
#   bash benchmarks/device_check.sh prepare          here (pip reaches PyPI; the raw data in
#                                                    ../shared/data or $MTEB_EVALRANK_SOURCE): writes .devdata/
#   bash benchmarks/device_check.sh setup            there, with .devdata/ copied beside the code: installs
#                                                    into /tmp, prints the versions, runs the device tests
#   bash benchmarks/device_check.sh bench SECONDS    there: the benchmark rows, most wanted first, each
#                                                    stopped when SECONDS have passed since the start
# .devdata/ (ignored, ~28 MB) holds the packages the machine's image may lack, for CPython 3.12 on x86-64,
# as one xz archive of their installed files (24 MB: the wheels are 44 MB, polars 1.20's alone 33 MB,
# polars 2's runtime 54 MB), and the raw folders the checks read (4 MB). setup and bench write their
# logs and each benchmark's JSON under $OUT (default .devdata/out).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=.devdata
OUT=${OUT:-$DATA/out}
PY=${PYTHON:-python3}
# what the device may lack: mteb's and datasets' own needs beside torch, numpy, scipy, scikit-learn,
# transformers and the rest of a scientific image (pyarrow, numba, statsmodels, rich, ...)
PACKAGES=(mteb datasets dill multiprocess pytrec-eval-terrier pydantic pydantic-core annotated-types typing-inspection)
PLATFORM=(--only-binary=:all: --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64
    --platform manylinux2014_x86_64)

install() {  # idempotent: a warm machine keeps /tmp between calls
    export PYTHONPATH=/tmp/devsite:$PWD MTEB_EVALRANK_SOURCE=/tmp/devdata HF_HOME=/tmp/devhf \
        MTEB_EVALRANK_HOME=/tmp/devhome HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 PYTHONUNBUFFERED=1
    mkdir -p "$OUT"
    if [ ! -d /tmp/devsite ]; then
        mkdir -p /tmp/devsite.part /tmp/devdata
        tar -xJf "$DATA/site.tar.xz" -C /tmp/devsite.part && mv /tmp/devsite.part /tmp/devsite
        tar -xJf "$DATA/data.tar.xz" -C /tmp/devdata
    fi
}

case "${1:-}" in
prepare)
    VENV=${VENV:-.venv}
    SOURCE=${MTEB_EVALRANK_SOURCE:-../shared/data}
    rm -rf "$DATA" && mkdir -p "$DATA/whl"
    pins=()
    for name in "${PACKAGES[@]}" seqeval; do
        pins+=("$name==$("$VENV/bin/python" -c 'import importlib.metadata as m, sys; print(m.version(sys.argv[1]))' "$name")")
    done
    "$VENV/bin/python" -m pip download -q --no-deps "${PLATFORM[@]}" -d "$DATA/whl" "${pins[@]:0:${#PACKAGES[@]}}" polars==1.20.0
    "$VENV/bin/python" -m pip wheel -q --no-deps -w "$DATA/whl" "${pins[-1]}"  # seqeval: a source distribution
    "$VENV/bin/python" -m pip install -q --no-index --no-deps --no-compile "${PLATFORM[@]}" --target "$DATA/site" \
        "$DATA"/whl/*.whl
    tar -cf - -C "$DATA/site" . | xz -9 -T0 >"$DATA/site.tar.xz"
    tar -cJf "$DATA/data.tar.xz" -C "$SOURCE" evalrank/sent_classification evalrank/word_emb/toy_emb.txt conll2000
    rm -rf "$DATA/whl" "$DATA/site"
    du -b "$DATA"/*.tar.xz
    ;;
setup)
    install
    {
        "$PY" -c 'import sys, torch, numpy, sklearn, mteb, datasets, mteb_evalrank
print(sys.version.split()[0], "torch", torch.__version__, "numpy", numpy.__version__, "scikit-learn",
      sklearn.__version__, "mteb", mteb.__version__, "datasets", datasets.__version__)
print("cuda", torch.cuda.is_available() and torch.cuda.get_device_name(), "cores", torch.get_num_threads())'
        "$PY" -m pytest -q -p no:cacheprovider tests/test_classifiers_device.py tests/test_tagger_device.py
    } 2>&1 | tee "$OUT/setup.log"
    ;;
bench)
    install
    deadline=$((SECONDS + ${2:?bench SECONDS}))
    step() {
        local left=$((deadline - SECONDS))
        if [ "$left" -lt 30 ]; then echo "not run (time): $*" | tee -a "$OUT/bench.log"; return 0; fi
        timeout "$left" "$@" 2>&1 | tee -a "$OUT/bench.log" || echo "stopped or failed: $*" | tee -a "$OUT/bench.log"
    }
    device=${DEVICE:-cuda}
    step "$PY" benchmarks/bench_tasks_width.py --device "$device" --tasks SentEvalMR --widths 1024 4096 \
        --out "$OUT/tasks_width_$device"
    step "$PY" benchmarks/bench_tasks_width.py --device cpu --tasks SentEvalMR --widths 1024 4096 \
        --out "$OUT/tasks_width_cpu"
    step "$PY" benchmarks/bench_tasks_width.py --device "$device" --tasks SentEvalMR CoNLL2000Chunking \
        --widths 64 768 --out "$OUT/tasks_width_${device}_narrow"
    step "$PY" benchmarks/bench_tasks_width.py --device "$device" --tasks CoNLL2000Chunking --widths 4096 \
        --out "$OUT/tasks_width_${device}_tagger"
    ;;
*)
    sed -n '2,14p' "$0"
    exit 2
    ;;
esac
