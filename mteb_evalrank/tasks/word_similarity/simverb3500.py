"""WordSimSimVerb3500: mteb STS task on the ``simverb-3500`` word-similarity set (see ``_common``)."""

from __future__ import annotations

from mteb_evalrank.data.registry import WORD_SIMILARITY
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._common import EVALRANK_NOTE, WORD_SIMILARITY_METADATA, WordSimilarityTask


class WordSimSimVerb3500(WordSimilarityTask):
    metadata = PluginTaskMetadata(
        name="WordSimSimVerb3500",
        description=(
            "SimVerb-3500 (Gerz et al., 2016): 3,500 English verb pairs rated for similarity on a 0-10 "
            "scale." + EVALRANK_NOTE
        ),
        reference="https://aclanthology.org/D16-1235",
        dataset=WORD_SIMILARITY.mteb_dataset("simverb-3500"),
        **WORD_SIMILARITY_METADATA,
        date=("2016-01-01", "2016-12-31"),
        bibtex_citation=r"""@inproceedings{gerz2016simverb,
  author = {Gerz, Daniela and Vuli{\'c}, Ivan and Hill, Felix and Reichart, Roi and Korhonen, Anna},
  booktitle = {Proceedings of the 2016 Conference on Empirical Methods in Natural Language Processing},
  title = {{SimVerb-3500}: A Large-Scale Evaluation Set of Verb Similarity},
  url = {https://aclanthology.org/D16-1235},
  year = {2016},
}""",
    )

    min_score = 0
    max_score = 10
