"""The common vocabulary of a study's models: EvalRankWord's background words every model knows
(embeds as a non-zero vector), for the ``vocabulary`` unknown-word convention.
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
