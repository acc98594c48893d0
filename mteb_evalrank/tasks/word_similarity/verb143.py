"""WordSimVerb143: mteb STS task on the ``verb-143`` word-similarity set (see ``_common``)."""

from __future__ import annotations

from mteb_evalrank.data.registry import WORD_SIMILARITY
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._common import EVALRANK_NOTE, WORD_SIMILARITY_METADATA, WordSimilarityTask


class WordSimVerb143(WordSimilarityTask):
    metadata = PluginTaskMetadata(
        name="WordSimVerb143",
        description=(
            "Verb-143 (Baker et al., 2014): English verb pairs (144 in the distributed file) rated for "
            "similarity, scores in [0, 1]." + EVALRANK_NOTE
        ),
        reference="https://aclanthology.org/D14-1034",
        dataset=WORD_SIMILARITY.mteb_dataset("verb-143"),
        **WORD_SIMILARITY_METADATA,
        date=("2014-01-01", "2014-12-31"),
        bibtex_citation=r"""@inproceedings{baker2014unsupervised,
  author = {Baker, Simon and Reichart, Roi and Korhonen, Anna},
  booktitle = {Proceedings of the 2014 Conference on Empirical Methods in Natural Language Processing
(EMNLP)},
  title = {An Unsupervised Model for Instance Level Subcategorization Acquisition},
  url = {https://aclanthology.org/D14-1034},
  year = {2014},
}""",
    )

    min_score = 0
    max_score = 1
