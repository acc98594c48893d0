"""Shared pieces of the word-similarity task files (one mteb STS task per set).

Conventions of every ``WordSim*`` task:

* data: config ``<set>`` of the Hub dataset ``mteb-evalrank/word-similarity`` (recipe and
  card in ``tasks/word-similarity/``), split ``test``, columns ``sentence1`` / ``sentence2``
  (one lower-cased word each) and ``score`` (the human rating on the set's own scale);
* ``min_score`` / ``max_score``: that scale (only used by mteb to normalise the ratings,
  which changes neither Pearson nor Spearman);
* main score ``cosine_spearman``: Spearman correlation between the cosine similarity of
  the two words' embeddings and the ratings, as in the EvalRank paper (section 5);
* ``date``: the publication year of the set (annotation dates are not reported).
"""

from __future__ import annotations

from mteb_evalrank.data.registry import WORD_SIMILARITY


def word_similarity_dataset(config: str) -> dict[str, str]:
    """The ``dataset`` field of a task's metadata: Hub id, revision and config ``name``.

    mteb loads a monolingual task with ``datasets.load_dataset(**metadata.dataset)``, so the
    ``name`` key selects the set's config.
    """
    return {**WORD_SIMILARITY.mteb_dataset(), "name": config}


EVALRANK_NOTE = (
    " One of the 13 word-similarity baselines of EvalRank (Wang et al., 2022); each word is "
    "embedded on its own and the main score is the Spearman correlation of cosine similarity "
    "with the human ratings."
)
