"""The plugin's mteb task classes, one task per file, declared once in :data:`TASKS` (in the
order of the README's task table; docs/tasks.md).
"""

from mteb.abstasks.abstask import AbsTask

from .. import _postponed
from ._evalrank import AbsTaskEvalRank
from ._evalrank_files import evalrank_task_from_files, read_evalrank_files, tasks_from_settings
from ._triplet import AbsTaskTriplet, read_triplet_jsonl, triplet_task_from_jsonl
from .accsent import AccSent
from .conll2000_chunking import CoNLL2000Chunking
from .conll2003_ner import CoNLL2003NER
from .evalrank_sent import EvalRankSent
from .evalrank_sent_str import EvalRankSentSTR
from .evalrank_sent_stsb import EvalRankSentSTSB
from .evalrank_word import EvalRankWord
from .evalrank_word_no_wiki import EvalRankWordNoWiki
from .ewt_pos_tagging import EWTPOSTagging
from .senteval import DOWNSTREAM_TASKS, SENTEVAL_PROTOCOL_TASKS
from .str_2021 import STR2021
from .stsb_granularity import STSBenchmarkGranularity
from .wmt17_da import WMT17DA
from .wmt17_da_granularity import WMT17DAGranularity
from .wmt17_da_length import WMT17DALength
from .wmt17_da_pooled import WMT17DAPooled
from .wmt17_da_vocab_coverage import WMT17DAVocabCoverage
from .word_similarity import WORD_SIMILARITY_TASKS

#: evaluation-gap diagnostics (Abe et al., 2022), type STS
GAP_TASKS: tuple[type[AbsTask], ...] = (
    WMT17DA, WMT17DAPooled, WMT17DALength, WMT17DAVocabCoverage, WMT17DAGranularity,
    STSBenchmarkGranularity,
)  # fmt: skip

#: EvalRank's ablations and parts, each its own task so that every task has one headline number
EVALRANK_PART_TASKS: tuple[type[AbsTask], ...] = (EvalRankWordNoWiki, EvalRankSentSTSB, EvalRankSentSTR)

#: Chiu et al.'s (2016) extrinsic tasks: sequence labelling over frozen word vectors
SEQUENCE_LABELLING_TASKS: tuple[type[AbsTask], ...] = (EWTPOSTagging, CoNLL2000Chunking, CoNLL2003NER)

#: every task the plugin registers with mteb
TASKS: tuple[type[AbsTask], ...] = (
    EvalRankWord,
    EvalRankSent,
    *EVALRANK_PART_TASKS,
    *WORD_SIMILARITY_TASKS,
    STR2021,
    *DOWNSTREAM_TASKS,
    *SENTEVAL_PROTOCOL_TASKS,
    *GAP_TASKS,
    AccSent,
    *SEQUENCE_LABELLING_TASKS,
)

__all__ = [
    "DOWNSTREAM_TASKS", "EVALRANK_PART_TASKS", "GAP_TASKS", "SENTEVAL_PROTOCOL_TASKS",
    "SEQUENCE_LABELLING_TASKS", "STR2021", "TASKS", "WMT17DA", "WORD_SIMILARITY_TASKS", "AbsTaskEvalRank",
    "AbsTaskTriplet", "AccSent", "CoNLL2000Chunking", "CoNLL2003NER", "EWTPOSTagging", "EvalRankSent",
    "EvalRankSentSTR", "EvalRankSentSTSB", "EvalRankWord", "EvalRankWordNoWiki",
    "STSBenchmarkGranularity", "WMT17DAGranularity", "WMT17DALength", "WMT17DAPooled",
    "WMT17DAVocabCoverage", "evalrank_task_from_files", "read_evalrank_files", "read_triplet_jsonl",
    "tasks_from_settings", "triplet_task_from_jsonl",
]  # fmt: skip

# completes `import mteb_evalrank`'s registration if mteb was first imported by this module
_postponed.finish_postponed(__name__)
