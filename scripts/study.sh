#!/usr/bin/env bash
# The ten-family study (issue 15): the model zoo (`mteb-evalrank models zoo`: 56 models, 10
# families) on the EvalRank-Study benchmark (27 intrinsic tasks; 10 SentEval-protocol downstream
# tasks with logistic regression and the MLP), then the correlation tables of docs/study/families/
# (EvalRank paper, Tables 3 and 6, with family-clustered CIs and adjusted p-values): across all
# models, across the family base models, within families, and with the MLP; and whether the
# classifier changes the ranking of the models (Eger et al. 2019): each task's logistic-regression
# accuracy against its MLP accuracy, across all models and within families.
#   bash scripts/study.sh                  run the jobs not done yet, then the tables. Resumable: the
#                                          results are committed in docs/study/run/results, so this
#                                          continues on any machine; rerun after an interruption
#   TABLES_ONLY=1 bash scripts/study.sh    only the tables, from the committed results (no encoding)
# Environment: FAMILIES (the families whose jobs to run, default all; `mteb-evalrank models zoo
# --families` lists them), WORKERS (families in parallel, one per worker; default 2), VENV (default
# .venv), RUN (default docs/study/run), DOCS (default docs/study/families), SKIP_SETUP=1.
# Compute per family: docs/study/README.md ("The ten-family study").
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
RUN=${RUN:-docs/study/run}
DOCS=${DOCS:-docs/study/families}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
export MTEB_EVALRANK_SOURCE=${MTEB_EVALRANK_SOURCE:-$(cd ../shared/data && pwd)}
[ "${SKIP_SETUP:-0}" = 1 ] || VENV=$VENV bash scripts/setup.sh
CLI=("$VENV/bin/mteb-evalrank")

# 1. every (model, task) job not done yet; each family's jobs in one worker (one forward pass per text)
if [ "${TABLES_ONLY:-0}" != 1 ]; then
    "${CLI[@]}" datasets build --source "$MTEB_EVALRANK_SOURCE" --out hub --sts-mirrors
    "${CLI[@]}" models install-offline
    # shellcheck disable=SC2086
    mapfile -t MODELS < <("${CLI[@]}" models zoo ${FAMILIES:+--family $FAMILIES})
    "${CLI[@]}" study --models "${MODELS[@]}" --benchmark EvalRank-Study --senteval-classifiers lr mlp \
        --workers "${WORKERS:-2}" --out "$RUN" --no-progress || echo "study: some jobs failed (listed above)"
fi

SENT=(SentEvalMR SentEvalCR SentEvalSUBJ SentEvalMPQA SentEvalSST2 SentEvalSST5 SentEvalTREC SentEvalSciCite)
PAIRS=(SentEvalMRPC SentEvalSICKE)
WORD_SIM=(WordSimWS353All WordSimWS353Rel WordSimWS353Sim WordSimRWStanford WordSimMEN WordSimMTurk287
    WordSimMTurk771 WordSimSimLex999 WordSimSimVerb3500 WordSimMC30 WordSimRG65 WordSimYP130 WordSimVerb143)
STS=(STS12 STS13 STS14 STS15 STS16 STSBenchmark SICK-R STR2021 AccSent)
EVALRANK_SENT=(EvalRankSent:default EvalRankSent:default:cosine_hits_at_1 EvalRankSent:default:cosine_hits_at_3
    EvalRankSentSTSB EvalRankSentSTR)
mapfile -t BASES < <("${CLI[@]}" models zoo --bases)
metric() { local name=$1; shift; for task in "$@"; do echo "$task::$name"; done; }  # Task::metric columns
# a study in progress: tabulate the tasks that have results (a complete study has them all)
present() { for task in "$@"; do compgen -G "$RUN/results/*/*/${task%%:*}.json" >/dev/null && echo "$task"; done; }
mapfile -t SENT < <(present "${SENT[@]}")
mapfile -t PAIRS < <(present "${PAIRS[@]}")
mapfile -t BASES < <(for model in "${BASES[@]}"; do [ ! -d "$RUN/results/${model//\//__}" ] || echo "$model"; done)
[ ${#SENT[@]} -gt 0 ] || { echo "no SentEval-protocol results in $RUN yet: no tables"; exit 0; }
TABLES=()
FAILED=()
# table NAME ARGS...: one correlate run into $DOCS/NAME; a study in progress may lack the models it needs
table() {
    local name=$1
    shift
    TABLES+=("$name")
    "${CLI[@]}" correlate "$RUN" --out "$DOCS/$name" "$@" || FAILED+=("$name")
}

# 2. word level (Table 3): word similarity and EvalRankWord vs the 10 downstream tasks, (a) all
#    models, (b) the family base models only, (c) within families
WORD_ROWS=("${WORD_SIM[@]}" EvalRankWord:default EvalRankWord:default:cosine_hits_at_1
    EvalRankWord:default:cosine_hits_at_3 EvalRankWordNoWiki)
table word --control-dim --intrinsic "${WORD_ROWS[@]}" \
    --extrinsic "${SENT[@]}" "${PAIRS[@]}" \
    --scatter EvalRankWord:default SentEvalMR --scatter WordSimSimLex999 SentEvalMR \
    --family-plot EvalRankWord:default SentEvalMR \
    --compare EvalRankWord:default WordSimSimLex999 --compare EvalRankWord:default WordSimMEN
#    the same rows across the family base models only, and within families (pooled within-family rho)
table word-bases --models "${BASES[@]}" --intrinsic "${WORD_ROWS[@]}" --extrinsic "${SENT[@]}" "${PAIRS[@]}" \
    --compare EvalRankWord:default WordSimSimLex999 --compare EvalRankWord:default WordSimMEN
table word-within --within-families --intrinsic "${WORD_ROWS[@]}" --extrinsic "${SENT[@]}" "${PAIRS[@]}" \
    --family-plot EvalRankWord:default SentEvalMR --family-plot WordSimSimLex999 SentEvalMR \
    --compare EvalRankWord:default WordSimSimLex999 --compare EvalRankWord:default WordSimMEN

# 3. sentence level (Table 6): STS, STR, AccSent and EvalRankSent vs the 8 single-sentence tasks,
#    (a) all models, (b) the family base models only, (c) within families (pooled within-family rho),
#    (d) with the MLP's accuracy instead of the logistic regression's (Eger et al.)
table sentence --control-dim \
    --intrinsic "${STS[@]}" "${EVALRANK_SENT[@]}" --extrinsic "${SENT[@]}" \
    --scatter EvalRankSent:default SentEvalMR --scatter STSBenchmark SentEvalMR \
    --family-plot EvalRankSent:default SentEvalMR --family-plot STSBenchmark SentEvalMR \
    --compare EvalRankSent:default STSBenchmark --compare EvalRankSent:default SICK-R \
    --compare EvalRankSent:default STR2021
table sentence-bases --models "${BASES[@]}" \
    --intrinsic "${STS[@]}" "${EVALRANK_SENT[@]}" --extrinsic "${SENT[@]}" \
    --compare EvalRankSent:default STSBenchmark --compare EvalRankSent:default SICK-R
table sentence-within --within-families \
    --intrinsic "${STS[@]}" "${EVALRANK_SENT[@]}" --extrinsic "${SENT[@]}" \
    --family-plot EvalRankSent:default SentEvalMR --family-plot STSBenchmark SentEvalMR \
    --compare EvalRankSent:default STSBenchmark --compare EvalRankSent:default SICK-R
mapfile -t SENT_MLP < <(metric mlp_accuracy "${SENT[@]}")
table sentence-mlp \
    --intrinsic "${STS[@]}" "${EVALRANK_SENT[@]}" --extrinsic "${SENT_MLP[@]}" \
    --compare EvalRankSent:default STSBenchmark
mapfile -t SENT_LR < <(metric lr_accuracy "${SENT[@]}")
table classifier --intrinsic "${SENT_LR[@]}" --extrinsic "${SENT_MLP[@]}"
table classifier-within --within-families --intrinsic "${SENT_LR[@]}" --extrinsic "${SENT_MLP[@]}"
echo "tables: $DOCS/{$(IFS=,; echo "${TABLES[*]}")}/report.md; timing: $RUN/study_timing.json"
if [ ${#FAILED[@]} -gt 0 ]; then
    echo "tables not written (see above; a study in progress may not have the results yet): ${FAILED[*]}"
    exit 1
fi
