#!/usr/bin/env bash
# The project's offline study (issue 7): the 27-model zoo on the EvalRank-Study benchmark, then
# the word-level and sentence-level correlation tables of docs/study/ (EvalRank paper, Tables 3
# and 6) and the sentence-level table within the MiniLM family. Resumable: rerun the same
# command after an interruption; finished jobs are skipped.
#   bash scripts/study.sh [STUDY_DIR]      (default: study-run, outside version control)
# Environment: WORKERS (local Dask workers, default 2), VENV (default .venv), DOCS (default docs/study),
# TABLES_ONLY=1 (skip the jobs: tables from the results already in STUDY_DIR), DOWNSTREAM, PAIRS.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-study-run}
VENV=${VENV:-.venv}
DOCS=${DOCS:-docs/study}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
export MTEB_EVALRANK_SOURCE=${MTEB_EVALRANK_SOURCE:-$(cd ../shared/data && pwd)}
VENV=$VENV bash scripts/setup.sh

# 1. every (model, task) job; the study's own report goes to $OUT/report
if [ "${TABLES_ONLY:-0}" != 1 ]; then
    "$VENV/bin/mteb-evalrank" datasets build --source "$MTEB_EVALRANK_SOURCE" --out hub --sts-mirrors
    "$VENV/bin/mteb-evalrank" models install-offline
    "$VENV/bin/mteb-evalrank" study --zoo --benchmark EvalRank-Study --senteval-classifiers lr \
        --workers "${WORKERS:-2}" --out "$OUT" || echo "study: some jobs failed (listed above); tables use the rest"
fi

# the downstream columns (override to tabulate a partial study, e.g. DOWNSTREAM="SentEvalMR SentEvalCR" PAIRS="")
# shellcheck disable=SC2206
DOWNSTREAM_SENT=(${DOWNSTREAM:-SentEvalMR SentEvalCR SentEvalSUBJ SentEvalMPQA SentEvalSST2 SentEvalSST5 SentEvalTREC SentEvalSciCite})
# shellcheck disable=SC2206
PAIR_TASKS=(${PAIRS-SentEvalMRPC SentEvalSICKE})
WORD_SIM=(WordSimWS353All WordSimWS353Rel WordSimWS353Sim WordSimRWStanford WordSimMEN WordSimMTurk287
    WordSimMTurk771 WordSimSimLex999 WordSimSimVerb3500 WordSimMC30 WordSimRG65 WordSimYP130 WordSimVerb143)

# 2. word level (Table 3): word similarity and EvalRankWord vs the 10 downstream tasks
"$VENV/bin/mteb-evalrank" correlate "$OUT" --out "$DOCS/word" --control-dim \
    --intrinsic "${WORD_SIM[@]}" EvalRankWord:default EvalRankWord:default:cosine_hits_at_1 \
    EvalRankWord:default:cosine_hits_at_3 EvalRankWord:no_wiki \
    --extrinsic "${DOWNSTREAM_SENT[@]}" "${PAIR_TASKS[@]}" \
    --scatter EvalRankWord:default SentEvalMR --scatter WordSimSimLex999 SentEvalMR \
    --compare EvalRankWord:default WordSimSimLex999 --compare EvalRankWord:default WordSimMEN \
    --compare EvalRankWord:default WordSimWS353All

# 3. sentence level (Table 6): STS, STR, AccSent and EvalRankSent vs the 8 single-sentence tasks
"$VENV/bin/mteb-evalrank" correlate "$OUT" --out "$DOCS/sentence" --control-dim \
    --intrinsic STS12 STS13 STS14 STS15 STS16 STSBenchmark SICK-R STR2021 AccSent \
    AccSent::paraphrase_accuracy EvalRankSent:default EvalRankSent:default:cosine_hits_at_1 \
    EvalRankSent:default:cosine_hits_at_3 EvalRankSent:stsb EvalRankSent:str \
    --extrinsic "${DOWNSTREAM_SENT[@]}" \
    --scatter EvalRankSent:default SentEvalMR --scatter STSBenchmark SentEvalMR \
    --compare EvalRankSent:default STSBenchmark --compare EvalRankSent:default SICK-R \
    --compare EvalRankSent:default STR2021

# 4. sentence level within one base model: the 16 all-MiniLM-L6-v2 variants (poolings, layers,
#    truncation, post-processing), where base model and embedding family cannot drive the ranking
"$VENV/bin/mteb-evalrank" correlate "$OUT" --out "$DOCS/sentence-minilm" --model-regex "MiniLM" \
    --intrinsic STS12 STS13 STS14 STS15 STS16 STSBenchmark SICK-R STR2021 AccSent \
    AccSent::paraphrase_accuracy EvalRankSent:default EvalRankSent:stsb EvalRankSent:str \
    --extrinsic "${DOWNSTREAM_SENT[@]}" \
    --compare EvalRankSent:default STSBenchmark --compare EvalRankSent:default SICK-R
echo "tables: $DOCS/word/report.md, $DOCS/sentence/report.md, $DOCS/sentence-minilm/report.md;" \
    "timing: $OUT/study_timing.json"
