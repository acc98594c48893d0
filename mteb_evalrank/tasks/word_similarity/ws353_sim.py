from .._citations import AGIRRE2009_CITATION
from ._common import WordSimilarityTask, word_similarity_metadata


class WordSimWS353Sim(WordSimilarityTask):
    min_score, max_score = 0, 10
    metadata = word_similarity_metadata(
        name="WordSimWS353Sim",
        description=(
            "WordSim-353 similarity subset (Agirre et al., 2009): 203 English word pairs of WS-353 "
            "judged similar (synonyms, hypernyms, ...), plus unrelated pairs; 0-10 scale."
        ),
        reference="https://aclanthology.org/N09-1003",
        config="ws-353-sim",
        year=2009,
        bibtex_citation=AGIRRE2009_CITATION,
    )
