"""WordSimYP130: mteb STS task on the ``yp-130`` word-similarity set (see ``_common``)."""

from __future__ import annotations

from mteb_evalrank.data.registry import WORD_SIMILARITY
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._common import EVALRANK_NOTE, WORD_SIMILARITY_METADATA, WordSimilarityTask


class WordSimYP130(WordSimilarityTask):
    metadata = PluginTaskMetadata(
        name="WordSimYP130",
        description=(
            "YP-130 (Yang and Powers, 2006): 130 English verb pairs rated for similarity on a 0-4 "
            "scale." + EVALRANK_NOTE
        ),
        # The GWC-06 proceedings have no DOI or stable URL: the reference is the EvalRank release
        # that distributes the set (EN-YP-130.txt), the source of this task's data.
        reference="https://github.com/BinWang28/EvalRank",
        dataset=WORD_SIMILARITY.mteb_dataset("yp-130"),
        **WORD_SIMILARITY_METADATA,
        date=("2006-01-01", "2006-12-31"),
        bibtex_citation=r"""@inproceedings{yang2006verb,
  author = {Yang, Dongqiang and Powers, David M. W.},
  booktitle = {Proceedings of the Third International WordNet Conference (GWC-06)},
  title = {Verb Similarity on the Taxonomy of {WordNet}},
  year = {2006},
}""",
    )

    min_score = 0
    max_score = 4
