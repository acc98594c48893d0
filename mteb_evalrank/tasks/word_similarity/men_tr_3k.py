from ._common import WordSimilarityTask, word_similarity_metadata


class WordSimMEN(WordSimilarityTask):
    min_score, max_score = 0, 50
    metadata = word_similarity_metadata(
        name="WordSimMEN",
        description=(
            "MEN-TR-3k (Bruni et al., 2014): 3,000 English word pairs rated for relatedness by "
            "comparative crowd judgements, 0-50 scale."
        ),
        reference="https://doi.org/10.1613/jair.4135",
        config="men-tr-3k",
        year=2014,
        bibtex_citation=r"""@article{bruni2014multimodal,
  author = {Bruni, Elia and Tran, Nam Khanh and Baroni, Marco},
  journal = {Journal of Artificial Intelligence Research},
  title = {Multimodal Distributional Semantics},
  volume = {49},
  year = {2014},
}""",
    )
