from ._common import WordSimilarityTask, word_similarity_metadata


class WordSimYP130(WordSimilarityTask):
    min_score, max_score = 0, 4
    metadata = word_similarity_metadata(
        name="WordSimYP130",
        description=(
            "YP-130 (Yang and Powers, 2006): 130 English verb pairs rated for similarity on a 0-4 scale."
        ),
        # The GWC-06 proceedings have no DOI or stable URL: the reference is the EvalRank release
        # that distributes the set (EN-YP-130.txt), the source of this task's data.
        reference="https://github.com/BinWang28/EvalRank",
        config="yp-130",
        year=2006,
        bibtex_citation=r"""@inproceedings{yang2006verb,
  author = {Yang, Dongqiang and Powers, David M. W.},
  booktitle = {Proceedings of the Third International WordNet Conference (GWC-06)},
  title = {Verb Similarity on the Taxonomy of {WordNet}},
  year = {2006},
}""",
    )
