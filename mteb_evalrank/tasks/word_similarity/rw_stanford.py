from ._common import WordSimilarityTask, word_similarity_metadata


class WordSimRWStanford(WordSimilarityTask):
    min_score, max_score = 0, 10
    metadata = word_similarity_metadata(
        name="WordSimRWStanford",
        description=(
            "Stanford Rare Words (Luong et al., 2013): 2,034 English pairs of rare, morphologically "
            "complex words rated for similarity on a 0-10 scale."
        ),
        reference="https://aclanthology.org/W13-3512",
        config="rw-stanford",
        year=2013,
        bibtex_citation=r"""@inproceedings{luong2013better,
  author = {Luong, Thang and Socher, Richard and Manning, Christopher},
  booktitle = {Proceedings of the Seventeenth Conference on Computational Natural Language Learning},
  title = {Better Word Representations with Recursive Neural Networks for Morphology},
  url = {https://aclanthology.org/W13-3512},
  year = {2013},
}""",
    )
