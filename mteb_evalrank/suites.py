"""The mteb ``Benchmark`` suites the plugin registers, listed once in :data:`BENCHMARKS`."""

from __future__ import annotations

from mteb import get_task
from mteb.benchmarks.benchmark import Benchmark

from . import _postponed
from .tasks import EVALRANK_PART_TASKS, SEQUENCE_LABELLING_TASKS, STR2021, AccSent, EvalRankSent, EvalRankWord
from .tasks._citations import CHIU_CITATION, EVALRANK_CITATION, cite
from .tasks._encoding import encode_once
from .tasks.senteval import DOWNSTREAM_TASKS, SENTEVAL_PROTOCOL_TASKS
from .tasks.senteval._base import SENTEVAL_CITATION
from .tasks.word_similarity import WORD_SIMILARITY_TASKS

EVALRANK = Benchmark(
    name="EvalRank",
    display_name="EvalRank",
    tasks=[EvalRankWord(), EvalRankSent()],
    description=(
        "EvalRank (Wang et al., ACL 2022): word- and sentence-level retrieval-style intrinsic "
        "evaluation. Each positive pair (two words or sentences people rate as similar) is scored by "
        "the rank of one among all background items when queried with the other (MRR, Hits@k): does "
        "the embedding put similar items nearest, ahead of everything else?"
    ),
    reference="https://aclanthology.org/2022.acl-long.419",
    citation=EVALRANK_CITATION,
)

EVALRANK_WORD_SIMILARITY = Benchmark(
    name="EvalRank-WordSimilarity",
    display_name="EvalRank word similarity",
    tasks=[task() for task in WORD_SIMILARITY_TASKS],
    description=(
        "The 13 word-similarity sets that EvalRank (Wang et al., ACL 2022) uses as baselines "
        "(WS-353 all/rel/sim, MC-30, RG-65, RW, MEN, MTurk-287/771, YP-130, SimLex-999, "
        "Verb-143, SimVerb-3500): Spearman correlation of cosine similarity with human ratings, "
        "one STS task per set."
    ),
    reference="https://aclanthology.org/2022.acl-long.419",
    citation=EVALRANK_CITATION,
)

_DOWNSTREAM_SETS = (
    "MR, CR, SUBJ, MPQA (10-fold cross-validation on fixed stratified folds), SST2, SST5, TREC, "
    "SciCite, and the pair tasks MRPC and SICK-E (on [u, v, |u-v|, u*v] features)"
)
EVALRANK_DOWNSTREAM = Benchmark(
    name="EvalRank-Downstream",
    display_name="EvalRank downstream (mteb protocol)",
    tasks=[task() for task in DOWNSTREAM_TASKS],
    description=(
        "The SentEval transfer tasks that EvalRank (Wang et al., ACL 2022) correlates with: "
        f"{_DOWNSTREAM_SETS}. "
        "Protocol mteb: mteb's classification evaluator (logistic regression on 8 examples per "
        "label, 10 repetitions); main score accuracy."
    ),
    reference="https://aclanthology.org/2022.acl-long.419",
    citation=cite(SENTEVAL_CITATION, EVALRANK_CITATION),
)
EVALRANK_DOWNSTREAM_SENTEVAL = Benchmark(
    name="EvalRank-Downstream-SentEval",
    display_name="EvalRank downstream (SentEval protocol)",
    tasks=[task() for task in SENTEVAL_PROTOCOL_TASKS],
    description=(
        f"The SentEval transfer tasks of EvalRank-Downstream ({_DOWNSTREAM_SETS}) under the SentEval "
        "protocol: whole training split, logistic regression (main score) and MLP with the L2 "
        "strength chosen as SentEval does (on the validation split where there is one, otherwise by "
        "cross-validation on the training split), z-normalisation as a binary hyper-parameter."
    ),
    reference="https://aclanthology.org/2022.acl-long.419",
    citation=cite(SENTEVAL_CITATION, EVALRANK_CITATION),
)

EVALRANK_EXTRINSIC = Benchmark(
    name="EvalRank-Extrinsic",
    display_name="EvalRank extrinsic (sequence labelling, Chiu et al.)",
    tasks=[task() for task in SEQUENCE_LABELLING_TASKS],
    description=(
        "The extrinsic tasks of Chiu, Korhonen and Pyysalo (2016), 'Intrinsic Evaluation of Word "
        "Vectors Fails to Predict Extrinsic Performance': POS tagging (UD English-EWT's PTB-style "
        "tags standing in for the WSJ treebank; token accuracy), CoNLL-2000 chunking and CoNLL-2003 "
        "NER (chunk/entity F1 as conlleval computes it), each with the window tagger of Collobert "
        "et al. (2011) over frozen word vectors (five-word windows with a capitalisation feature, "
        "300 hard-tanh units, 10 epochs of Adam, greedy decoding); mean over 3 seeds."
    ),
    reference="https://aclanthology.org/W16-2501",
    citation=CHIU_CITATION,
)

#: mteb's own STS tasks, held by ``EvalRank-Study`` as ``encode_once`` variants (through the embedding cache)
STUDY_STS_TASKS = ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICK-R")

#: the offline study: the intrinsic evaluations of EvalRank's Tables 3 and 6 and the downstream tasks
EVALRANK_STUDY = Benchmark(
    name="EvalRank-Study",
    display_name="EvalRank study (intrinsic vs downstream)",
    tasks=[
        EvalRankWord(),
        EvalRankSent(),
        *(task() for task in EVALRANK_PART_TASKS),
        *(task() for task in WORD_SIMILARITY_TASKS),
        *(encode_once(type(get_task(name))).filter_eval_splits(["test"]) for name in STUDY_STS_TASKS),
        STR2021(),
        AccSent(),
        *(task() for task in SENTEVAL_PROTOCOL_TASKS),
        *(task() for task in SEQUENCE_LABELLING_TASKS),
    ],
    description=(
        "The tasks of the EvalRank paper's correlation study (Wang et al., ACL 2022, Tables 3 and 6): "
        "intrinsic EvalRankWord, EvalRankSent (and their ablations), 13 word-similarity sets, "
        "STS12-16, STS-B, SICK-R, "
        "STR 2021 and AccSent, and the downstream SentEval-protocol tasks "
        f"({_DOWNSTREAM_SETS}), and Chiu et al.'s (2016) sequence-labelling tasks (EWT POS tagging, "
        "CoNLL-2000 chunking, CoNLL-2003 NER over frozen word vectors). Run it over many models with "
        "`mteb-evalrank study`. The project's study of 56 sentence encoders (10 families) found "
        "EvalRankSent's mean Spearman ρ with the SentEval-protocol accuracies (0.75) level with STS-B's "
        "(0.72; the difference is not significant), and within a family neither orders the variants "
        "as the downstream tasks do; over 12 static word-vector models (6 sets with and without ABTT, "
        "from 5 trainings) EvalRankWord (0.79-0.81 under the four unknown-word conventions) is ahead of "
        "SimLex-999 (0.70-0.73; each bootstrap CI above 0, but a swap-test p of 0.125-0.25, five "
        "trainings being few units) and level with the embedding dimension used as a score (0.81)."
    ),
    reference="https://aclanthology.org/2022.acl-long.419",
    citation=EVALRANK_CITATION,
)
#: every benchmark the plugin registers with mteb
BENCHMARKS: tuple[Benchmark, ...] = (
    EVALRANK, EVALRANK_WORD_SIMILARITY, EVALRANK_DOWNSTREAM, EVALRANK_DOWNSTREAM_SENTEVAL, EVALRANK_EXTRINSIC,
    EVALRANK_STUDY,
)  # fmt: skip

# completes `import mteb_evalrank`'s registration if mteb was first imported by this module
_postponed.finish_postponed(__name__)
