"""WordSimRWStanford: mteb STS task on the ``rw-stanford`` word-similarity set (see ``_common``)."""

from __future__ import annotations

from mteb_evalrank.data.registry import WORD_SIMILARITY
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._common import EVALRANK_NOTE, WORD_SIMILARITY_METADATA, WordSimilarityTask


class WordSimRWStanford(WordSimilarityTask):
    metadata = PluginTaskMetadata(
        name="WordSimRWStanford",
        description=(
            "Stanford Rare Words (Luong et al., 2013): 2,034 English pairs of rare, morphologically "
            "complex words rated for similarity on a 0-10 scale." + EVALRANK_NOTE
        ),
        reference="https://aclanthology.org/W13-3512",
        dataset=WORD_SIMILARITY.mteb_dataset("rw-stanford"),
        **WORD_SIMILARITY_METADATA,
        date=("2013-01-01", "2013-12-31"),
        bibtex_citation=r"""@inproceedings{luong2013better,
  author = {Luong, Thang and Socher, Richard and Manning, Christopher},
  booktitle = {Proceedings of the Seventeenth Conference on Computational Natural Language Learning},
  title = {Better Word Representations with Recursive Neural Networks for Morphology},
  url = {https://aclanthology.org/W13-3512},
  year = {2013},
}""",
    )

    min_score = 0
    max_score = 10
