"""Unknown-word conventions of the word-level tasks (the ``WordSim*`` sets, EvalRankWord and its
ablation); what each means per task: docs/tasks.md, "Unknown words".

A model *knows* a word when it embeds it as a non-zero vector. One run reports every convention
it can compute under its prefix (``PREFIXES``); the task option ``unknown_words`` picks the main
score: ``zero`` (default, no prefix: an unknown word keeps the zero vector), ``covered`` (only the
pairs, and for EvalRank the background, the model knows), ``vocabulary`` (the pairs and background
words in a given vocabulary, ``zero`` convention; ``$MTEB_EVALRANK_VOCABULARY`` or the task's
``vocabulary``) and ``mean_vector`` (the EvalRank toolkit's: an unknown word is the mean of the
task's known words' vectors).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import NDArray

from mteb_evalrank.settings import VOCABULARY_ENV

UnknownWords = Literal["zero", "covered", "vocabulary", "mean_vector"]

PREFIXES: dict[UnknownWords, str] = {
    "zero": "",
    "covered": "covered_",
    "vocabulary": "vocabulary_",
    "mean_vector": "mean_vector_",
}
CONVENTIONS: tuple[UnknownWords, ...] = tuple(PREFIXES)


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
