"""The 13 word-similarity sets of the EvalRank release as mteb STS tasks, one task per file."""

from mteb.abstasks.abstask import AbsTask

from .mc30 import WordSimMC30
from .men_tr_3k import WordSimMEN
from .mturk_287 import WordSimMTurk287
from .mturk_771 import WordSimMTurk771
from .rg65 import WordSimRG65
from .rw_stanford import WordSimRWStanford
from .simlex999 import WordSimSimLex999
from .simverb3500 import WordSimSimVerb3500
from .verb143 import WordSimVerb143
from .ws353_all import WordSimWS353All
from .ws353_rel import WordSimWS353Rel
from .ws353_sim import WordSimWS353Sim
from .yp130 import WordSimYP130

#: In the order of the EvalRank release (and of the ``word-similarity`` configs).
WORD_SIMILARITY_TASKS: tuple[type[AbsTask], ...] = (
    WordSimWS353All, WordSimWS353Rel, WordSimWS353Sim, WordSimMC30, WordSimRG65, WordSimRWStanford,
    WordSimMEN, WordSimMTurk287, WordSimMTurk771, WordSimYP130, WordSimSimLex999, WordSimVerb143,
    WordSimSimVerb3500,
)  # fmt: skip

__all__ = ["WORD_SIMILARITY_TASKS"]
