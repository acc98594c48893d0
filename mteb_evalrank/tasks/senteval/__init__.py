"""Downstream tasks: the SentEval transfer tasks under the ``mteb`` and ``senteval`` protocols.

``<Name>Classification`` runs mteb's own classification protocol, ``SentEval<Name>`` the
SentEval protocol (see ``_base``).
"""

from ._base import AbsTaskSentEval, AbsTaskSentEvalPair
from .cr import CRClassification, SentEvalCR
from .mpqa import MPQAClassification, SentEvalMPQA
from .mr import MRClassification, SentEvalMR
from .mrpc import MRPCClassification, SentEvalMRPC
from .scicite import SciCiteClassification, SentEvalSciCite
from .sick_e import SentEvalSICKE, SICKEClassification
from .sst2 import SentEvalSST2, SST2Classification
from .sst5 import SentEvalSST5, SST5Classification
from .subj import SentEvalSUBJ, SUBJClassification
from .trec import SentEvalTREC, TRECClassification

#: protocol ``mteb`` (the default), one task per dataset
DOWNSTREAM_TASKS: tuple[type[AbsTaskSentEval], ...] = (
    MRClassification, CRClassification, SUBJClassification, MPQAClassification, SST2Classification,
    SST5Classification, TRECClassification, SciCiteClassification, MRPCClassification,
    SICKEClassification,
)  # fmt: skip
#: protocol ``senteval``
SENTEVAL_PROTOCOL_TASKS: tuple[type[AbsTaskSentEval], ...] = (
    SentEvalMR, SentEvalCR, SentEvalSUBJ, SentEvalMPQA, SentEvalSST2, SentEvalSST5, SentEvalTREC,
    SentEvalSciCite, SentEvalMRPC, SentEvalSICKE,
)  # fmt: skip

__all__ = ["DOWNSTREAM_TASKS", "SENTEVAL_PROTOCOL_TASKS", "AbsTaskSentEval", "AbsTaskSentEvalPair"]
