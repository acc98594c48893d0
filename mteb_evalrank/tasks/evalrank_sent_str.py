from __future__ import annotations

from mteb_evalrank.data.registry import EVALRANK_SENT
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._citations import EVALRANK_CITATION
from ._evalrank import AbsTaskEvalRank


class EvalRankSentSTR(AbsTaskEvalRank):
    metadata = PluginTaskMetadata(
        name="EvalRankSentSTR",
        description=(
            "Part of EvalRankSent (Wang et al., 2022): its 2,748 positive pairs from STR 2021 "
            "(both directions), each ranked among all 24,957 background sentences as in "
            "EvalRankSent (hf_subset str of the dataset)."
        ),
        reference="https://aclanthology.org/2022.acl-long.419",
        dataset=EVALRANK_SENT.mteb_dataset(),
        type="Retrieval",
        category="t2t",
        modalities=["text"],
        eval_splits=["test"],
        eval_langs={"str": ["eng-Latn"]},
        main_score="cosine_mrr",
        date=("2012-01-01", "2022-05-22"),
        domains=["News", "Web", "Written"],
        task_subtypes=[],
        license=EVALRANK_SENT.license,
        annotations_creators="human-annotated",
        dialect=[],
        sample_creation="found",
        bibtex_citation=EVALRANK_CITATION,
    )
