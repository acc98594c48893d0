"""The plugin's mteb task classes, one task per file."""

from .. import _registry
from ._evalrank import AbsTaskEvalRank
from .evalrank_sent import EvalRankSent
from .evalrank_word import EvalRankWord

TASKS: tuple[type, ...] = (EvalRankWord, EvalRankSent)

__all__ = ["TASKS", "AbsTaskEvalRank", "EvalRankSent", "EvalRankWord"]

# Word-similarity and STR baselines (issue 3), type STS.
from .str_2021 import STR2021  # noqa: E402
from .word_similarity import WORD_SIMILARITY_TASKS  # noqa: E402

TASKS = (*TASKS, *WORD_SIMILARITY_TASKS, STR2021)
__all__ += ["STR2021", "WORD_SIMILARITY_TASKS"]

# Downstream SentEval transfer tasks (issue 3), protocols 'mteb' and 'senteval'.
from .senteval import DOWNSTREAM_TASKS, SENTEVAL_PROTOCOL_TASKS  # noqa: E402

TASKS = (*TASKS, *DOWNSTREAM_TASKS, *SENTEVAL_PROTOCOL_TASKS)
__all__ += ["DOWNSTREAM_TASKS", "SENTEVAL_PROTOCOL_TASKS"]

# Evaluation-gap diagnostics (issue 5): WMT17 DA, its slices and the STS-B gold bands, type STS.
from .stsb_granularity import STSBenchmarkGranularity  # noqa: E402
from .wmt17_da import WMT17DA  # noqa: E402
from .wmt17_da_granularity import WMT17DAGranularity  # noqa: E402
from .wmt17_da_length import WMT17DALength  # noqa: E402
from .wmt17_da_vocab_coverage import WMT17DAVocabCoverage  # noqa: E402

GAP_TASKS: tuple[type, ...] = (
    WMT17DA,
    WMT17DALength,
    WMT17DAVocabCoverage,
    WMT17DAGranularity,
    STSBenchmarkGranularity,
)
TASKS = (*TASKS, *GAP_TASKS)
__all__ += ["GAP_TASKS", *(task.__name__ for task in GAP_TASKS)]

# AccSent-style triplet accuracy (issue 4): custom AbsTask, any JSON-lines triplet file.
from ._triplet import AbsTaskTriplet, read_triplet_jsonl, triplet_task_from_jsonl  # noqa: E402
from .accsent import AccSent  # noqa: E402

TASKS = (*TASKS, AccSent)
__all__ += ["AbsTaskTriplet", "AccSent", "read_triplet_jsonl", "triplet_task_from_jsonl"]

# completes `import mteb_evalrank`'s registration if mteb was first imported by this module
_registry.finish_postponed(__name__)
