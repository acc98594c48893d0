from ._evalrank import AbsTaskEvalRank
from ._metadata import subset_task_metadata
from .evalrank_word import EvalRankWord


class EvalRankWordNoWiki(AbsTaskEvalRank):
    word_level = True
    required_scores = ("mean_vector_cosine_mrr",)
    metadata = subset_task_metadata(
        EvalRankWord.metadata,
        name="EvalRankWordNoWiki",
        description=(
            "Ablation of EvalRankWord (Wang et al., 2022, Table 4): the same 5,514 word pairs "
            "ranked against the 5,846 words of the similarity-set vocabulary only, without the "
            "20,000 frequent Wikipedia words (hf_subset no_wiki of the dataset)."
        ),
        hf_subset="no_wiki",
    )
