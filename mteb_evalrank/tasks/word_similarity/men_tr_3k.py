"""WordSimMEN: mteb STS task on the ``men-tr-3k`` word-similarity set (see ``_common``)."""

from __future__ import annotations

from mteb_evalrank.data.registry import WORD_SIMILARITY
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._common import EVALRANK_NOTE, WORD_SIMILARITY_METADATA, WordSimilarityTask


class WordSimMEN(WordSimilarityTask):
    metadata = PluginTaskMetadata(
        name="WordSimMEN",
        description=(
            "MEN-TR-3k (Bruni et al., 2014): 3,000 English word pairs rated for relatedness by "
            "comparative crowd judgements, 0-50 scale." + EVALRANK_NOTE
        ),
        reference="https://doi.org/10.1613/jair.4135",
        dataset=WORD_SIMILARITY.mteb_dataset("men-tr-3k"),
        **WORD_SIMILARITY_METADATA,
        date=("2014-01-01", "2014-12-31"),
        bibtex_citation=r"""@article{bruni2014multimodal,
  author = {Bruni, Elia and Tran, Nam Khanh and Baroni, Marco},
  journal = {Journal of Artificial Intelligence Research},
  title = {Multimodal Distributional Semantics},
  volume = {49},
  year = {2014},
}""",
    )

    min_score = 0
    max_score = 50
