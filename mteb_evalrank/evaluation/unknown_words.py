"""Unknown-word conventions of the word-level tasks (the ``WordSim*`` sets, EvalRankWord and its ablation).

A model *knows* a word when it embeds it as a non-zero vector; an encoder that knows nothing
about a word (a static model with the word outside its vocabulary) embeds it as the zero vector.
Four conventions score a model that does not know every word of a task; one run of a task
reports every convention it can compute, each under its own score keys (``PREFIXES``), and the
task option ``unknown_words`` picks the one that is the main score:

* ``zero`` (default, the scores without a prefix): an unknown word keeps the zero vector. A
  ``WordSim*`` set keeps an uncovered pair with cosine 0; EvalRank centres the background
  first, so unknown words share the vector ``-mean(E)`` and tie with each other.
* ``covered`` (prefix ``covered_``): only what the model knows. A ``WordSim*`` set scores the
  pairs whose two words are known; EvalRank ranks the pairs whose two words are known against
  the known background only (centred on it). Different models are then scored on different
  pairs.
* ``vocabulary`` (prefix ``vocabulary_``): a vocabulary given to the task (a common vocabulary of
  the models compared, so that all are scored on the same pairs): the pairs whose two words are
  in it, and for EvalRank the background words in it, scored by the ``zero`` convention (on a
  vocabulary every compared model knows, the conventions coincide). Given by the task attribute
  ``vocabulary`` or the file named by ``$MTEB_EVALRANK_VOCABULARY`` (one word per line, UTF-8);
  without one, no ``vocabulary_`` scores.
* ``mean_vector`` (prefix ``mean_vector_``): the reference toolkit's (EvalRank's
  ``Word_embedding_model.compute_embedding``): an unknown word gets the mean vector of the known
  words. The toolkit averages its whole vocabulary; an MTEB encoder exposes no vocabulary, so
  here the mean is over the task's known words (the set's words, EvalRank's background). A
  ``WordSim*`` set then takes the cosine (two unknown words: 1). EvalRank centres the background,
  whose mean is then the known rows' mean, so an unknown word is the zero vector after centring:
  cosine 0 with every item, all items tied for an unknown query.

For a model that knows every word of a task (every sentence encoder) the ``zero``, ``covered``
and ``mean_vector`` scores are the same numbers.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import NDArray

UnknownWords = Literal["zero", "covered", "vocabulary", "mean_vector"]

PREFIXES: dict[UnknownWords, str] = {
    "zero": "",
    "covered": "covered_",
    "vocabulary": "vocabulary_",
    "mean_vector": "mean_vector_",
}
CONVENTIONS: tuple[UnknownWords, ...] = tuple(PREFIXES)
VOCABULARY_ENV = "MTEB_EVALRANK_VOCABULARY"
"""Environment variable naming a vocabulary file (one word per line) for the ``vocabulary`` scores."""


def check_convention(task: str, option: str, vocabulary: frozenset[str] | None) -> UnknownWords:
    """``option`` as a convention, or a ``ValueError`` naming the task and the choices."""
    if option not in CONVENTIONS:
        raise ValueError(f"{task}: unknown_words must be one of {CONVENTIONS}, got {option!r}.")
    if option == "vocabulary" and vocabulary is None:
        raise ValueError(
            f"{task}: unknown_words='vocabulary' needs a vocabulary: set the task's `vocabulary` "
            f"attribute or ${VOCABULARY_ENV} to a file of words, one per line."
        )
    return option


def main_score_key(main_score: str, option: UnknownWords) -> str:
    """The score key that is the main score under ``option`` (e.g. ``covered_cosine_spearman``)."""
    return PREFIXES[option] + main_score


def known(embeddings: NDArray[np.floating]) -> NDArray[np.bool_]:
    """Rows the model knows: non-zero vectors."""
    return np.asarray(np.any(np.asarray(embeddings) != 0, axis=1))


def mean_vector_rows(embeddings: NDArray[np.floating], known_rows: NDArray[np.bool_]) -> NDArray[np.float64]:
    """The embeddings in float64 with every unknown row replaced by the mean of the known rows
    (unchanged when no row is known: there is no mean to give)."""
    filled = np.array(embeddings, dtype=np.float64)
    if known_rows.any() and not known_rows.all():
        filled[~known_rows] = filled[known_rows].mean(axis=0)
    return filled
