from ._evalrank import AbsTaskEvalRank
from ._metadata import subset_task_metadata
from .evalrank_sent import EvalRankSent


class EvalRankSentSTR(AbsTaskEvalRank):
    metadata = subset_task_metadata(
        EvalRankSent.metadata,
        name="EvalRankSentSTR",
        description=(
            "Part of EvalRankSent (Wang et al., 2022): its 2,748 positive pairs from STR 2021 "
            "(both directions), each ranked among all 24,957 background sentences as in "
            "EvalRankSent (hf_subset str of the dataset)."
        ),
        hf_subset="str",
    )
