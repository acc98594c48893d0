from ._common import WordSimilarityTask, word_similarity_metadata


class WordSimVerb143(WordSimilarityTask):
    min_score, max_score = 0, 1
    metadata = word_similarity_metadata(
        name="WordSimVerb143",
        description=(
            "Verb-143 (Baker et al., 2014): English verb pairs (144 in the distributed file) rated for "
            "similarity, scores in [0, 1]."
        ),
        reference="https://aclanthology.org/D14-1034",
        config="verb-143",
        year=2014,
        bibtex_citation=r"""@inproceedings{baker2014unsupervised,
  author = {Baker, Simon and Reichart, Roi and Korhonen, Anna},
  booktitle = {Proceedings of the 2014 Conference on Empirical Methods in Natural Language Processing
(EMNLP)},
  title = {An Unsupervised Model for Instance Level Subcategorization Acquisition},
  url = {https://aclanthology.org/D14-1034},
  year = {2014},
}""",
    )
