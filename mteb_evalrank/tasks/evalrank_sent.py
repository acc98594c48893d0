from mteb_evalrank.data.registry import EVALRANK_SENT
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._evalrank import EVALRANK_METADATA, AbsTaskEvalRank


class EvalRankSent(AbsTaskEvalRank):
    metadata = PluginTaskMetadata(
        name="EvalRankSent",
        description=(
            "Sentence-level EvalRank (Wang et al., 2022): each of 6,989 highly similar sentence "
            "pairs (top 25% of STS-B and STR, both directions) is scored by the rank of the "
            "second sentence among all 24,957 background sentences for the first, on "
            "mean-centred embeddings with exact tie handling. The positives of one source over "
            "the same background are the tasks EvalRankSentSTSB and EvalRankSentSTR."
        ),
        reference="https://aclanthology.org/2022.acl-long.419",
        dataset=EVALRANK_SENT.mteb_dataset(),
        date=("2012-01-01", "2022-05-22"),
        domains=["News", "Web", "Written"],
        license=EVALRANK_SENT.license,
        annotations_creators="human-annotated",
        **EVALRANK_METADATA,
    )
