from mteb_evalrank.data.registry import EVALRANK_WORD
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._evalrank import EVALRANK_METADATA, AbsTaskEvalRank


class EvalRankWord(AbsTaskEvalRank):
    word_level = True
    required_scores = ("mean_vector_cosine_mrr",)
    metadata = PluginTaskMetadata(
        name="EvalRankWord",
        description=(
            "Word-level EvalRank (Wang et al., 2022): each of 5,514 highly similar word pairs "
            "(top 25% of 13 word-similarity sets, both directions) is scored by the rank of the "
            "second word among all 22,207 background words (similarity-set vocabulary plus the "
            "20,000 most frequent Wikipedia words) for the first word, on mean-centred "
            "embeddings with exact tie handling. The no_wiki ablation is the task "
            "EvalRankWordNoWiki."
        ),
        reference="https://aclanthology.org/2022.acl-long.419",
        dataset=EVALRANK_WORD.mteb_dataset(),
        date=("2001-01-01", "2022-05-22"),
        domains=["Written", "Encyclopaedic"],
        license=EVALRANK_WORD.license,
        annotations_creators="human-annotated",
        **EVALRANK_METADATA,
    )
