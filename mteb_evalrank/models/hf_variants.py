"""The EvalRank paper's neural variants over any ``transformers`` checkpoint, and the named populations.

``h_0`` the embedding output, ``h_1 .. h_L`` the transformer layers, ``m_t`` the attention mask
(special tokens included): ``cls = h_L[0]``, ``last-avg = sum_t m_t h_L[t] / sum_t m_t``,
``first-last-avg = (sum_t m_t h_1[t] + sum_t m_t h_L[t]) / (2 sum_t m_t)`` (``h_1`` the first
*transformer* layer, as the paper's code), ``pooler = tanh(W h_L[0] + b)``; ``-whiten`` is
``postprocess.Whitening`` fitted on the WMT17 DA references. One cached row per text serves a
checkpoint's variants. Registered with mteb only on request (:func:`enable_population`).
See docs/zoo.md, "The paper's neural population".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from mteb.models import ModelMeta
from mteb.models.abs_encoder import AbsEncoder
from numpy.typing import NDArray

from mteb_evalrank._files import read_json_object
from mteb_evalrank.embedding_cache import StoreKey
from mteb_evalrank.settings import Settings

from . import postprocess
from .base import TextEmbedder, cached_rows
from .encoders._common import MARKER
from .minilm import hidden_features, model_path
from .wrappers import FitCorpus, PostProcessedEncoder, wmt17_references

POOLINGS = ("cls", "last-avg", "first-last-avg", "pooler")
PAPER_POOLINGS = ("cls", "last-avg", "first-last-avg")
"""The poolings of the paper's BERT/RoBERTa rows (Table 9)."""
FEATURE_ROWS = ("first-mean", "last-avg", "cls", "pooler")
"""Rows of a text's ``(4, dim)`` features: masked means of ``h_1`` and ``h_L``, ``h_L[0]``, the pooler."""
PREFIX = "evalrank/"
PAPER_MAX_LENGTH = 512  # the paper's truncation


# ------------------------------------------------------------------ checkpoints
@dataclass(frozen=True)
class Checkpoint:
    """A ``transformers`` checkpoint (a Hub id at ``revision``, or a local folder) and its metas' facts;
    ``n_parameters`` counts all of ``AutoModel`` (pooler included)."""

    source: str
    revision: str
    stem: str  # evalrank/<stem>-<pooling>[-whiten]
    dim: int
    n_layers: int
    n_parameters: int
    n_embedding_parameters: int
    max_tokens: int
    has_pooler: bool = True
    license: str = "not specified"
    release_date: str | None = None
    reference: str | None = None

    @property
    def is_local(self) -> bool:
        return Path(self.source).is_dir()

    def features_key(self) -> StoreKey:
        """Cache key of the per-text features (a name of the plugin's own, not a registered model)."""
        return StoreKey(
            f"{PREFIX}{self.stem}-features", self.revision, f"h1-hL-cls-pooler-max{self.max_tokens}"
        )


def _card_license(folder: Path) -> str | None:
    """``license:`` of a model card's YAML front matter (``README.md``), if any."""
    card = folder / "README.md"
    if not card.is_file():
        return None
    head = card.read_text(encoding="utf-8").split("\n---", 1)[0]
    found = re.search(r"^license:\s*([\w.+-]+)\s*$", head, flags=re.MULTILINE)
    return found.group(1).lower() if found else None


def _folder_revision(folder: Path) -> str | None:
    """The revision a local folder holds: our marker (in it or its parent), or a Hub snapshot name."""
    for marker in (read_json_object(folder / MARKER), read_json_object(folder.parent / MARKER)):
        if marker is not None and isinstance(marker.get("revision"), str):
            return str(marker["revision"])
    if folder.parent.name == "snapshots" and re.fullmatch(r"[0-9a-f]{40}", folder.name):
        return folder.name
    return None


def _max_tokens(folder: Path | None, config: Any) -> int:
    """sentence-transformers' ``max_seq_length``, else ``model_max_length``, else the config's."""
    if folder is not None:
        st_limit = (read_json_object(folder / "sentence_bert_config.json") or {}).get("max_seq_length")
        if isinstance(st_limit, int):
            return st_limit
        limit = (read_json_object(folder / "tokenizer_config.json") or {}).get("model_max_length")
        if isinstance(limit, int | float) and limit < 1e6:
            return int(limit)
    return int(config.max_position_embeddings)


def count_parameters(config: Any) -> tuple[int, int, bool]:
    """``(n_parameters, n_embedding_parameters, has_pooler)``, the model built on the ``meta`` device."""
    import torch
    from transformers import AutoModel

    with torch.device("meta"):
        model = AutoModel.from_config(config)
    total = sum(parameter.numel() for parameter in model.parameters())
    embedding = model.get_input_embeddings().weight.numel()
    return int(total), int(embedding), getattr(model, "pooler", None) is not None


def checkpoint_from_config(
    source: str | Path,
    *,
    offline: bool = False,
    revision: str | None = None,
    stem: str | None = None,
    max_tokens: int | None = None,
    license: str | None = None,
    release_date: str | None = None,
    reference: str | None = None,
) -> Checkpoint:
    """A :class:`Checkpoint` whose facts are read from ``source``'s config (and card, if local).

    ``revision`` is required unless a local folder names it (our marker, a Hub cache snapshot);
    ``max_tokens`` defaults to :func:`_max_tokens`, ``license`` to the model card's; ``offline``: a Hub
    id's config from the Hub cache alone.
    """
    from transformers import AutoConfig

    folder = Path(source) if Path(source).is_dir() else None
    if folder is None:
        config = AutoConfig.from_pretrained(str(source), revision=revision, local_files_only=offline)
    else:
        config = AutoConfig.from_pretrained(str(folder), local_files_only=True)
        revision = revision or _folder_revision(folder)
    if revision is None:
        raise ValueError(f"{source}: give revision= (the folder does not say which revision it holds).")
    n_parameters, n_embedding, has_pooler = count_parameters(config)
    return Checkpoint(
        source=str(source),
        revision=revision,
        stem=stem or Path(str(source)).name,
        dim=int(config.hidden_size),
        n_layers=int(config.num_hidden_layers),
        n_parameters=n_parameters,
        n_embedding_parameters=n_embedding,
        max_tokens=max_tokens or _max_tokens(folder, config),
        has_pooler=has_pooler,
        license=license or (_card_license(folder) if folder else None) or "not specified",
        release_date=release_date,
        reference=reference,
    )


# ------------------------------------------------------------------ the encoder
@cache
def _load(source: str, revision: str | None, offline: bool) -> tuple[Any, Any]:
    """Tokenizer and model of a checkpoint, once per process, on the GPU if torch sees one (as the paper)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    local = revision is None or offline  # then from the folder or the Hub cache alone
    tokenizer = AutoTokenizer.from_pretrained(source, revision=revision, local_files_only=local)
    model = AutoModel.from_pretrained(source, revision=revision, local_files_only=local)
    model.eval()
    if torch.cuda.is_available():
        model.to("cuda")
    return tokenizer, model


def check_declared(checkpoint: Checkpoint, model: Any) -> None:
    """``ValueError`` if the loaded model's size, layers or parameters are not ``checkpoint``'s."""
    found = (
        int(model.config.hidden_size),
        int(model.config.num_hidden_layers),
        sum(int(parameter.numel()) for parameter in model.parameters()),
    )
    declared = (checkpoint.dim, checkpoint.n_layers, checkpoint.n_parameters)
    if found != declared:
        raise ValueError(
            f"{checkpoint.source}@{checkpoint.revision}: the loaded model has (hidden size, layers, "
            f"parameters) = {found}, its declaration says {declared}; fix the declaration."
        )


class HFPooling(TextEmbedder):
    """A checkpoint with one of :data:`POOLINGS`; ``forward_calls`` counts the forward passes."""

    forward_calls = 0

    def __init__(
        self, checkpoint: Checkpoint, pooling: str, *, batch_size: int = 32, offline: bool = False
    ) -> None:
        if pooling not in POOLINGS:
            raise ValueError(f"unknown pooling {pooling!r}; expected one of {', '.join(POOLINGS)}.")
        if pooling == "pooler" and not checkpoint.has_pooler:
            raise ValueError(f"{checkpoint.source} has no pooler: pooling 'pooler' does not apply.")
        self.checkpoint = checkpoint
        self.pooling = pooling
        self.batch_size = batch_size
        self.tokenizer, self.model = _load(
            checkpoint.source, None if checkpoint.is_local else checkpoint.revision, offline
        )
        check_declared(checkpoint, self.model)

    def _forward(self, texts: list[str]) -> NDArray[np.float32]:
        type(self).forward_calls += 1
        return hidden_features(self.tokenizer, self.model, texts, self.checkpoint.max_tokens, (1, -1))

    def features(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """``(n, 4, dim)`` per-text features: cached, or one forward pass per batch of misses."""
        dim, key = self.checkpoint.dim, self.checkpoint.features_key()
        width, where = len(FEATURE_ROWS) * dim, self.checkpoint.source
        rows = cached_rows(key, texts, self._forward, batch_size=self.batch_size, width=width, where=where)
        return rows.reshape(len(texts), len(FEATURE_ROWS), dim)

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """``(n, dim)`` embeddings of ``texts`` under this pooling (a view of :data:`FEATURE_ROWS`)."""
        features = self.features(texts)
        if self.pooling == "first-last-avg":
            return (features[:, 0] + features[:, 1]) / np.float32(2)
        return features[:, FEATURE_ROWS.index(self.pooling)].copy()


# ------------------------------------------------------------------ variants and metas
@dataclass(frozen=True)
class Variant:
    """One of the paper's variants: a checkpoint, a pooling, with or without whitening."""

    checkpoint: Checkpoint
    pooling: str
    whiten: bool = False

    @property
    def name(self) -> str:
        return f"{PREFIX}{self.checkpoint.stem}-{self.pooling}{'-whiten' if self.whiten else ''}"

    @property
    def post(self) -> str:
        """The post-processing, as Table 9's *Details* name it: ``whitening`` or ``no``."""
        return "whitening" if self.whiten else "no"

    def meta(self) -> ModelMeta:
        return variant_meta(self)


def paper_variants(
    checkpoint: Checkpoint, poolings: Iterable[str] = PAPER_POOLINGS, whiten: Iterable[bool] = (False, True)
) -> list[Variant]:
    """The paper's variants of ``checkpoint``: each pooling, each without and with whitening."""
    return [Variant(checkpoint, pooling, flag) for pooling in poolings for flag in whiten]


def build_variant(
    variant: Variant, *, corpus: FitCorpus | None = None, batch_size: int = 32, offline: bool = False
) -> AbsEncoder:
    """The variant's encoder: :class:`HFPooling`, whitened on ``corpus`` (default the WMT17 DA references)."""
    base = HFPooling(variant.checkpoint, variant.pooling, batch_size=batch_size, offline=offline)
    if not variant.whiten:
        return base
    return PostProcessedEncoder(base, postprocess.Whitening(), corpus=corpus or wmt17_references())


def load_variant(
    variant: Variant, model_name: str, revision: str | None = None, *, batch_size: int = 32, **kwargs: Any
) -> AbsEncoder:
    """Loader of a variant's ``ModelMeta`` (bound with :func:`functools.partial`).

    Raises:
        ValueError: ``model_name`` / ``revision`` are not the variant's, or an unknown option.
    """
    if model_name != variant.name or revision not in (None, variant.checkpoint.revision):
        declared = f"{variant.name}@{variant.checkpoint.revision}"
        raise ValueError(f"the loader of {declared} was asked for {model_name}@{revision}.")
    if kwargs:
        raise ValueError(f"{model_name}: no loader option {', '.join(sorted(kwargs))}; it takes batch_size.")
    offline = Settings.from_environment().offline is not None  # mteb calls the loader: an edge
    return build_variant(variant, batch_size=batch_size, offline=offline)


def variant_family(name: str) -> str | None:
    """The family (checkpoint stem) of a name ``evalrank/<stem>-<pooling>[-whiten]``, else ``None``."""
    match = re.fullmatch(rf"{re.escape(PREFIX)}(?P<stem>.+?)-(?:{'|'.join(POOLINGS)})(?:-whiten)?", name)
    return match["stem"] if match else None


def variant_meta(variant: Variant) -> ModelMeta:
    """The variant's ``ModelMeta``: facts from its checkpoint; whitening adds ``mean + d x d``."""
    from .zoo import cosine_meta

    point = variant.checkpoint
    n_parameters = point.n_parameters + (point.dim + point.dim * point.dim if variant.whiten else 0)
    return cosine_meta(
        loader=partial(load_variant, variant),
        name=variant.name,
        revision=point.revision,
        release_date=point.release_date,
        n_parameters=n_parameters,
        n_embedding_parameters=point.n_embedding_parameters,
        memory_usage_mb=round(n_parameters * 4 / 2**20),
        max_tokens=point.max_tokens,
        embed_dim=point.dim,
        license=point.license,
        framework=["PyTorch", "Transformers"],
        reference=point.reference,
    )


# ------------------------------------------------------------------ the paper's population
# (dim, layers, AutoModel parameters incl. pooler, input embeddings, tokens); checked against
# AutoModel.from_config on the meta device in tests/test_hf_variants.py
_BERT_BASE = (768, 12, 109_482_240, 23_440_896, PAPER_MAX_LENGTH)
_BERT_LARGE = (1024, 24, 335_141_888, 31_254_528, PAPER_MAX_LENGTH)
_ROBERTA_BASE = (768, 12, 124_645_632, 38_603_520, PAPER_MAX_LENGTH)
_ROBERTA_LARGE = (1024, 24, 355_359_744, 51_471_360, PAPER_MAX_LENGTH)


def _hub(
    hub_id: str, revision: str, sizes: tuple[int, int, int, int, int], license: str, released: str
) -> Checkpoint:
    """A Hub checkpoint; ``sizes``: ``(dim, layers, n_parameters, n_embedding, max_tokens)``."""
    stem, reference = hub_id.rsplit("/", 1)[-1], f"https://huggingface.co/{hub_id}"
    return Checkpoint(
        hub_id, revision, stem, *sizes, license=license, release_date=released, reference=reference
    )


BERT_BASE, BERT_LARGE, ROBERTA_BASE, ROBERTA_LARGE, SBERT_NLI, UNSUP_SIMCSE, SUP_SIMCSE = (
    _hub("google-bert/bert-base-uncased", "86b5e0934494bd15c9632b12f734a8a67f723594",
         _BERT_BASE, "apache-2.0", "2018-10-11"),
    _hub("google-bert/bert-large-uncased", "6da4b6a26a1877e173fca3225479512db81a5e5b",
         _BERT_LARGE, "apache-2.0", "2018-10-11"),
    _hub("FacebookAI/roberta-base", "e2da8e2f811d1448a5b465c236feacd80ffbac7b",
         _ROBERTA_BASE, "mit", "2019-07-26"),
    _hub("FacebookAI/roberta-large", "722cf37b1afa9454edce342e7895e588b6ff1d59",
         _ROBERTA_LARGE, "mit", "2019-07-26"),
    _hub("sentence-transformers/bert-base-nli-mean-tokens", "main", _BERT_BASE, "apache-2.0", "2019-08-27"),
    _hub("princeton-nlp/unsup-simcse-bert-base-uncased", "main", _BERT_BASE, "mit", "2021-04-21"),
    _hub("princeton-nlp/sup-simcse-bert-base-uncased", "2d82fab19ac3a73a20dd20333d27eb8a52d6e97f",
         _BERT_BASE, "mit", "2021-04-21"),
)  # fmt: skip
"""The paper's Hub checkpoints, revisions pinned to commits where known."""


class PopulationModel(Protocol):
    """A runnable model of a population: a :class:`Variant` or a word-vector set's model."""

    @property
    def name(self) -> str: ...

    def meta(self) -> ModelMeta: ...


@dataclass(frozen=True)
class PopulationEntry:
    """One row of a population: the paper's row (Table 9 number(s), model, *Details* column), and the
    variant that runs it or why none does (``not_runnable``)."""

    rows: str
    model: str
    details: str
    variant: PopulationModel | None = None
    not_runnable: str | None = None


@dataclass(frozen=True)
class Population:
    """A named list of models, declared once (``mteb-evalrank study --population NAME``)."""

    name: str
    description: str
    entries: tuple[PopulationEntry, ...]
    prepare: Callable[[], None] | None = None  # run by check_population first

    @property
    def variants(self) -> tuple[PopulationModel, ...]:
        return tuple(entry.variant for entry in self.entries if entry.variant is not None)

    @property
    def not_runnable(self) -> tuple[PopulationEntry, ...]:
        return tuple(entry for entry in self.entries if entry.variant is None)

    @property
    def checkpoints(self) -> tuple[Checkpoint, ...]:
        return tuple(dict.fromkeys(v.checkpoint for v in self.variants if isinstance(v, Variant)))


INFERSENT = (
    "InferSent is a BiLSTM over GloVe/fastText vectors with Facebook's own PyTorch code "
    "(models.py) and pickled weights (infersent1.pkl / infersent2.pkl): not a transformers checkpoint"
)
BERT_FLOW = (
    "BERT-flow needs a normalising flow trained on the target corpus (STS-B test in the paper) with "
    "its authors' TensorFlow code; no such flow is a transformers checkpoint"
)


def _paper_entries() -> tuple[PopulationEntry, ...]:
    """Table 9's rows 39-67, in its order."""
    rows: list[tuple[str, str, PopulationModel | None, str | None]] = [
        ("InferSent", "v_1, no post-processing", None, INFERSENT),
        ("InferSent", "v_2, no post-processing", None, INFERSENT),
    ]
    for name, checkpoint, poolings in (
        ("BERT", BERT_BASE, PAPER_POOLINGS),
        ("BERT", BERT_LARGE, PAPER_POOLINGS),
        ("RoBERTa", ROBERTA_BASE, PAPER_POOLINGS[1:]),
        ("RoBERTa", ROBERTA_LARGE, PAPER_POOLINGS[1:]),
    ):
        for v in paper_variants(checkpoint, poolings):
            rows.append((name, f"{checkpoint.stem} & {v.pooling}, {v.post}", v, None))
    rows += [("BERT-flow", f"bert-base-uncased & {p}", None, BERT_FLOW) for p in PAPER_POOLINGS]
    for v in (Variant(SBERT_NLI, "last-avg"), Variant(SBERT_NLI, "last-avg", whiten=True)):
        rows.append(("SBERT", f"sbert-base-nli-mean-tokens, {v.post}", v, None))
    rows += [("SimCSE", f"{c.stem}, no", Variant(c, "pooler"), None) for c in (UNSUP_SIMCSE, SUP_SIMCSE)]
    return tuple(PopulationEntry(str(number), *row) for number, row in enumerate(rows, start=39))


EVALRANK_PAPER = Population(
    "evalrank-paper",
    "the 29 neural models of Wang et al. (2022), Table 9 rows 39-67",
    _paper_entries(),
)
LOCAL_POPULATION = "paper-variants-local"


def local_population(encoders: Path) -> Population:
    """The paper's six variants of the bundled all-MiniLM-L6-v2 and, when installed under ``encoders``,
    all-mpnet-base-v2 (stems end in ``-hf``, apart from the zoo's MiniLM poolings)."""
    from .encoders.install import mpnet_dir, mpnet_ready
    from .offline import MINILM, MINILM_REVISION

    minilm = checkpoint_from_config(
        model_path(),
        revision=MINILM_REVISION,
        stem="all-MiniLM-L6-v2-hf",
        release_date="2021-08-30",
        reference=f"https://huggingface.co/{MINILM}",
    )
    checkpoints = [minilm]
    if mpnet_ready(encoders):
        reference = "https://huggingface.co/sentence-transformers/all-mpnet-base-v2"
        mpnet = checkpoint_from_config(
            mpnet_dir(encoders), stem="all-mpnet-base-v2-hf", release_date="2021-08-30", reference=reference
        )
        checkpoints.append(mpnet)
    entries = tuple(
        PopulationEntry("-", checkpoint.stem, f"{variant.pooling}, {variant.post}", variant)
        for checkpoint in checkpoints
        for variant in paper_variants(checkpoint)
    )
    return Population(LOCAL_POPULATION, "the paper's variants of the local checkpoints (offline)", entries)


def paper_word_population() -> Population:
    """The paper's 19 static word-vector sets, each without and with ABTT (Table 8; :mod:`.paper_word`)."""
    from . import paper_word

    entries = tuple(PopulationEntry(*row) for row in paper_word.entries())
    description = "the 38 static word-vector models of Wang et al. (2022), Table 8"
    return Population(paper_word.POPULATION, description, entries, paper_word.fetch_all)


POPULATIONS: dict[str, Callable[[Path], Population]] = {
    EVALRANK_PAPER.name: lambda _: EVALRANK_PAPER,
    "evalrank-paper-word": lambda _: paper_word_population(),
    LOCAL_POPULATION: local_population,
}
"""Every population by name, built on first use (a local one reads its checkpoints' configs)."""


@cache
def get_population(name: str, encoders: Path) -> Population:
    """The population ``name`` (``encoders``: ``Settings.encoders``); ``KeyError`` naming the known ones."""
    if name not in POPULATIONS:
        raise KeyError(f"unknown population {name!r}; known: {', '.join(POPULATIONS)}.")
    return POPULATIONS[name](encoders)


@cache
def population_metas(name: str, encoders: Path) -> tuple[ModelMeta, ...]:
    """The ``ModelMeta`` of every runnable variant of population ``name``, in its order."""
    return tuple(variant.meta() for variant in get_population(name, encoders).variants)


# ------------------------------------------------------------------ availability and registration
class PopulationUnavailable(RuntimeError):
    """A checkpoint of a population cannot be loaded here (offline, or not on the Hub)."""


def _config_missing(checkpoint: Checkpoint, flag: str | None) -> str | None:
    """``None`` if the checkpoint's ``config.json`` is in the Hub cache or (online) downloadable, else why."""
    if checkpoint.is_local:
        return None if (Path(checkpoint.source) / "config.json").is_file() else "no config.json in the folder"
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    try:
        hf_hub_download(
            checkpoint.source, "config.json", revision=checkpoint.revision, local_files_only=bool(flag)
        )
    except (RepositoryNotFoundError, RevisionNotFoundError) as error:
        return f"the Hugging Face Hub has no such repository or revision ({type(error).__name__})"
    except OSError as error:  # LocalEntryNotFoundError: not cached, and offline or the Hub did not answer
        where = (
            f"downloads are switched off ({flag} is set)" if flag else "the Hugging Face Hub did not answer"
        )
        return f"{where} ({type(error).__name__})"
    return None


def check_population(name: str, settings: Settings) -> None:
    """Run the population's ``prepare`` (which may raise ``FetchError``), then raise
    :class:`PopulationUnavailable` (one paragraph) at the first checkpoint that does not load."""
    population = get_population(name, settings.encoders)
    if population.prepare is not None:
        population.prepare()
    for checkpoint in population.checkpoints:
        if (why := _config_missing(checkpoint, settings.offline)) is not None:
            raise PopulationUnavailable(
                f"the population {name!r} ({len(population.variants)} runnable variants of "
                f"{len(population.checkpoints)} checkpoints) cannot run here: its checkpoint "
                f"{checkpoint.source!r} (revision {checkpoint.revision}) is not in the Hugging Face cache "
                f"and {why}. It needs a connected machine: run the same command there (the "
                "checkpoints are downloaded on first use, about 5 GB), or copy its Hub cache "
                '($HF_HOME/hub) here. See docs/zoo.md, "The paper\'s neural population".'
            )


def register_population_metas(metas: Iterable[ModelMeta]) -> list[str]:
    """Add ``metas`` to mteb's model registry and return their names (idempotent); ``ValueError`` for
    a name that mteb already uses for another object (never replaced)."""
    from mteb_evalrank import _mteb_adapter

    registry = _mteb_adapter.model_registry()
    names = []
    for meta in metas:
        assert meta.name is not None
        if registry.setdefault(meta.name, meta) is not meta:
            raise ValueError(f"mteb already has a model named {meta.name!r}: {registry[meta.name]!r}.")
        names.append(meta.name)
    return names


def enable_population(name: str, settings: Settings) -> list[str]:
    """Check that population ``name`` loads here (:func:`check_population`), register its metas, return names.

    Raises:
        KeyError: unknown population.
        PopulationUnavailable: a checkpoint cannot be loaded (offline machine).
        ValueError: a name clashes with a model of mteb's.
    """
    metas = population_metas(name, settings.encoders)
    check_population(name, settings)
    return register_population_metas(metas)
