from ._evalrank import AbsTaskEvalRank
from ._metadata import subset_task_metadata
from .evalrank_sent import EvalRankSent


class EvalRankSentSTSB(AbsTaskEvalRank):
    metadata = subset_task_metadata(
        EvalRankSent.metadata,
        name="EvalRankSentSTSB",
        description=(
            "Part of EvalRankSent (Wang et al., 2022): its 4,241 positive pairs from STS-B "
            "(both directions), each ranked among all 24,957 background sentences as in "
            "EvalRankSent (hf_subset stsb of the dataset)."
        ),
        hf_subset="stsb",
    )
