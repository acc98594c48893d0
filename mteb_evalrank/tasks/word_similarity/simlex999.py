"""WordSimSimLex999: mteb STS task on the ``simlex-999`` word-similarity set (see ``_common``)."""

from __future__ import annotations

from mteb_evalrank.data.registry import WORD_SIMILARITY
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._common import EVALRANK_NOTE, WORD_SIMILARITY_METADATA, WordSimilarityTask


class WordSimSimLex999(WordSimilarityTask):
    metadata = PluginTaskMetadata(
        name="WordSimSimLex999",
        description=(
            "SimLex-999 (Hill et al., 2015): 999 English noun, verb and adjective pairs rated for "
            "genuine similarity (not relatedness) on a 0-10 scale." + EVALRANK_NOTE
        ),
        reference="https://aclanthology.org/J15-4004",
        dataset=WORD_SIMILARITY.mteb_dataset("simlex-999"),
        **WORD_SIMILARITY_METADATA,
        date=("2015-01-01", "2015-12-31"),
        bibtex_citation=r"""@article{hill2015simlex,
  author = {Hill, Felix and Reichart, Roi and Korhonen, Anna},
  journal = {Computational Linguistics},
  number = {4},
  title = {{SimLex-999}: Evaluating Semantic Models With (Genuine) Similarity Estimation},
  url = {https://aclanthology.org/J15-4004},
  volume = {41},
  year = {2015},
}""",
    )

    min_score = 0
    max_score = 10
