from __future__ import annotations

from mteb_evalrank.data.registry import EVALRANK_WORD
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._citations import EVALRANK_CITATION
from ._evalrank import AbsTaskEvalRank


class EvalRankWordNoWiki(AbsTaskEvalRank):
    metadata = PluginTaskMetadata(
        name="EvalRankWordNoWiki",
        description=(
            "Ablation of EvalRankWord (Wang et al., 2022, Table 4): the same 5,514 word pairs "
            "ranked against the 5,846 words of the similarity-set vocabulary only, without the "
            "20,000 frequent Wikipedia words (hf_subset no_wiki of the dataset)."
        ),
        reference="https://aclanthology.org/2022.acl-long.419",
        dataset=EVALRANK_WORD.mteb_dataset(),
        type="Retrieval",
        category="t2t",
        modalities=["text"],
        eval_splits=["test"],
        eval_langs={"no_wiki": ["eng-Latn"]},
        main_score="cosine_mrr",
        date=("2001-01-01", "2022-05-22"),
        domains=["Written", "Encyclopaedic"],
        task_subtypes=[],
        license=EVALRANK_WORD.license,
        annotations_creators="human-annotated",
        dialect=[],
        sample_creation="found",
        bibtex_citation=EVALRANK_CITATION,
    )
