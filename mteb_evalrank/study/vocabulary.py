"""The common vocabulary of a study's models: the words every one of them knows.

The ``vocabulary`` unknown-word convention of the word-level tasks
(:mod:`mteb_evalrank.evaluation.unknown_words`) scores every model on the pairs and background
words of a given vocabulary; with the words all compared models know, every model is scored on
the same pairs, each of which it knows. A model *knows* a word when it embeds it as a non-zero
vector (the tasks' rule). The candidate words are EvalRankWord's background (the 5,846 words of
the 13 similarity sets and the 20,000 frequent Wikipedia words), so one vocabulary serves every
word-level task. Each model encodes them once, through mteb's encoder interface.
"""

from __future__ import annotations

from collections.abc import Sequence

from mteb_evalrank.evaluation import unknown_words


def known_words(model_name: str, words: Sequence[str]) -> set[str]:
    """The ``words`` the model ``model_name`` (an mteb model name) embeds as non-zero vectors."""
    import mteb
    from mteb.timing import TimingStack

    from mteb_evalrank.tasks import EvalRankWord
    from mteb_evalrank.tasks._encoding import TaskEmbeddings

    embeddings = TaskEmbeddings().embed(
        mteb.get_model(model_name),
        list(words),
        task_metadata=EvalRankWord.metadata,
        encode_kwargs={},
        hf_split="test",
        hf_subset="default",
        timer=TimingStack(),
    )
    return {word for word, known in zip(words, unknown_words.known(embeddings), strict=True) if known}


def common_vocabulary(models: Sequence[str], words: Sequence[str]) -> list[str]:
    """The ``words`` every model knows, in the order given (no model: an error)."""
    if not models:
        raise ValueError("common vocabulary: give at least one model")
    common = set(words)
    for model in models:
        common &= known_words(model, words)
    return [word for word in words if word in common]
