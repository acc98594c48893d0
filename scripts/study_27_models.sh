#!/usr/bin/env bash
# The project's first offline study (issue 7; superseded by scripts/study.sh, issue 15): the 27-model zoo on the EvalRank-Study benchmark, then
# the word-level and sentence-level correlation tables of docs/study/ (EvalRank paper, Tables 3
# and 6) and the sentence-level table within the MiniLM family. Resumable: rerun the same
# command after an interruption; finished jobs are skipped.
#   bash scripts/study_27_models.sh [STUDY_DIR]      (default: study-run, outside version control)
#   TABLES_FROM_SCORES=1 bash scripts/study_27_models.sh   (no study folder: the tables of docs/study/ again
#                                                 from their committed scores.csv, which is not rewritten)
# Its jobs step (`study --zoo`) now runs the whole current zoo (56 models); keep this script for
# TABLES_FROM_SCORES=1, which rewrites the committed 27-model tables.
# Environment: WORKERS (local Dask workers, default 2), VENV (default .venv), DOCS (default docs/study),
# TABLES_ONLY=1 (skip the jobs: tables from the results already in STUDY_DIR), TABLES_FROM_SCORES=1,
# DOWNSTREAM, PAIRS, SKIP_SETUP=1 (use the environment as it is), MTEB_EVALRANK (the command, default
# $VENV/bin/mteb-evalrank).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-study-run}
VENV=${VENV:-.venv}
DOCS=${DOCS:-docs/study}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
export MTEB_EVALRANK_SOURCE=${MTEB_EVALRANK_SOURCE:-$(cd ../shared/data && pwd)}
[ "${SKIP_SETUP:-0}" = 1 ] || VENV=$VENV bash scripts/setup.sh
read -ra CLI <<<"${MTEB_EVALRANK:-$VENV/bin/mteb-evalrank}"
FROM_SCORES=${TABLES_FROM_SCORES:-0}
# the input of each table: the study folder, or the table's own committed scores.csv
source_of() { if [ "$FROM_SCORES" = 1 ]; then echo "$DOCS/$1/scores.csv"; else echo "$OUT"; fi; }

# 1. every (model, task) job; the study's own report goes to $OUT/report
if [ "${TABLES_ONLY:-0}" != 1 ] && [ "$FROM_SCORES" != 1 ]; then
    "${CLI[@]}" datasets build --source "$MTEB_EVALRANK_SOURCE" --out hub --sts-mirrors
    "${CLI[@]}" models install-offline
    "${CLI[@]}" study --zoo --benchmark EvalRank-Study --senteval-classifiers lr \
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
"${CLI[@]}" correlate "$(source_of word)" --out "$DOCS/word" --control-dim \
    --intrinsic "${WORD_SIM[@]}" EvalRankWord:default EvalRankWord:default:cosine_hits_at_1 \
    EvalRankWord:default:cosine_hits_at_3 EvalRankWordNoWiki \
    --extrinsic "${DOWNSTREAM_SENT[@]}" "${PAIR_TASKS[@]}" \
    --scatter EvalRankWord:default SentEvalMR --scatter WordSimSimLex999 SentEvalMR \
    --compare EvalRankWord:default WordSimSimLex999 --compare EvalRankWord:default WordSimMEN \
    --compare EvalRankWord:default WordSimWS353All

# 3. sentence level (Table 6): STS, STR, AccSent and EvalRankSent vs the 8 single-sentence tasks
"${CLI[@]}" correlate "$(source_of sentence)" --out "$DOCS/sentence" --control-dim \
    --intrinsic STS12 STS13 STS14 STS15 STS16 STSBenchmark SICK-R STR2021 AccSent \
    AccSent::paraphrase_accuracy EvalRankSent:default EvalRankSent:default:cosine_hits_at_1 \
    EvalRankSent:default:cosine_hits_at_3 EvalRankSentSTSB EvalRankSentSTR \
    --extrinsic "${DOWNSTREAM_SENT[@]}" \
    --scatter EvalRankSent:default SentEvalMR --scatter STSBenchmark SentEvalMR \
    --compare EvalRankSent:default STSBenchmark --compare EvalRankSent:default SICK-R \
    --compare EvalRankSent:default STR2021

# 4. sentence level within one base model: the 16 all-MiniLM-L6-v2 variants (poolings, layers,
#    truncation, post-processing), where base model and embedding family cannot drive the ranking
"${CLI[@]}" correlate "$(source_of sentence-minilm)" --out "$DOCS/sentence-minilm" --model-regex "MiniLM" \
    --intrinsic STS12 STS13 STS14 STS15 STS16 STSBenchmark SICK-R STR2021 AccSent \
    AccSent::paraphrase_accuracy EvalRankSent:default EvalRankSentSTSB EvalRankSentSTR \
    --extrinsic "${DOWNSTREAM_SENT[@]}" \
    --compare EvalRankSent:default STSBenchmark --compare EvalRankSent:default SICK-R
echo "tables: $DOCS/word/report.md, $DOCS/sentence/report.md, $DOCS/sentence-minilm/report.md"
[ "$FROM_SCORES" = 1 ] || echo "timing: $OUT/study_timing.json"
