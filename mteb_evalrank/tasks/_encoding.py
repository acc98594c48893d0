"""How the plugin's tasks encode: each distinct text once per model in a run, for any model
(docs/usage.md, "Each text encoded once per run").

:class:`CachedEncoder`, an mteb ``CachedEmbeddingWrapper`` serving each text from an
:class:`~mteb_evalrank.embedding_cache.EmbeddingCache` (key: :meth:`CachedEncoder.key`), is the
one mechanism. :class:`EncodeOnce` (a mixin of every plugin task, and :func:`encode_once` for
mteb's STS tasks in the benchmarks) wraps the model over the process cache, so a text is encoded
once across tasks (per model object, or on disk under ``MTEB_EVALRANK_EMBEDDING_CACHE`` for a
named, revised model); ``MTEB_EVALRANK_REUSE_EMBEDDINGS=0`` keeps the reuse within each task
(:class:`TaskEmbeddings`).
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from datasets import Dataset
from mteb.models import EncoderProtocol
from mteb.models.cache_wrappers import CachedEmbeddingWrapper
from numpy.typing import NDArray

from mteb_evalrank._mteb_adapter import create_dataloader, init_cached_wrapper_in_memory
from mteb_evalrank.embedding_cache import EmbeddingCache, EncodeStats, StoreKey, as_numpy, process_cache
from mteb_evalrank.evaluation.ranking import check_embeddings
from mteb_evalrank.settings import Settings

if TYPE_CHECKING:
    from mteb.abstasks.task_metadata import TaskMetadata
    from mteb.timing import TimingStack
    from mteb.types import BatchedInput, EncodeKwargs, PromptType
    from torch.utils.data import DataLoader

NO_REVISION = "no_revision_available"  # mteb's revision of a model that has none
SETTINGS_IGNORED = frozenset({"batch_size", "show_progress_bar"})
"""Encode settings that do not change a text's embedding (the batch size: rounding only, ~2e-7)."""
MAX_CONTEXT = 120
"""Longest encoding context kept as it is (a folder name on disk); a longer one ends in its hash."""
_NON_TEXT = {"image", "audio", "video"}
_UNSAFE = re.compile(r"[^A-Za-z0-9._=-]+")


def as_list(column: Any) -> Any:
    """A ``datasets`` column as a list in one Arrow read (``datasets`` 5's lazy ``Column`` formats each
    row iterated, ~10 us); lists and arrays are returned as they are."""
    return column if isinstance(column, list | np.ndarray) else column[:]


def model_name(model: object) -> str:
    """A model's mteb name for messages, else its class name."""
    meta = getattr(model, "mteb_model_meta", None)
    return getattr(meta, "name", None) or type(model).__name__


def weights_version(model: object) -> int:
    """A number that changes when the torch weights of ``model`` change in place or are replaced: a
    hash of each parameter's identity and version counter over the ``torch.nn.Module`` objects among
    ``model`` and its attributes (mteb's wrapper holds it as ``.model``); ``0`` without torch weights."""
    torch = sys.modules.get("torch")
    if torch is None:
        return 0
    candidates = [model, *vars(model).values()] if hasattr(model, "__dict__") else [model]
    modules = [item for item in candidates if isinstance(item, torch.nn.Module)]
    return hash(tuple((id(p), p._version) for module in modules for p in module.parameters()))


def _loader_texts(inputs: Any) -> list[str] | None:
    """The texts of a DataLoader over a ``datasets`` text column (one Arrow read), else ``None``."""
    dataset = getattr(inputs, "dataset", None)
    columns = set(getattr(dataset, "column_names", ()) or ())
    if not isinstance(dataset, Dataset) or "text" not in columns or columns & _NON_TEXT:
        return None
    texts = dataset["text"][:]
    return texts if all(isinstance(t, str) for t in texts) else None  # e.g. conversations: not cached


class CachedEncoder(CachedEmbeddingWrapper):
    """An mteb encoder whose ``encode`` serves each text from an :class:`EmbeddingCache`; any other
    attribute (``mteb_model_meta``, ``similarity``, ...) is the wrapped model's.

    Args:
        model: the encoder (mteb's ``encode`` signature).
        cache: the cache (default: :func:`process_cache` at each call; with ``by_instance``, at
            construction).
        by_instance: key the stores by the model *object* too (memory only, dropped with it, renewed
            when its torch weights change): for models whose name may not identify their weights.
        name, revision: the key's model name and revision (default: the model's meta)."""

    def __init__(
        self,
        model: Any,
        cache: EmbeddingCache | None = None,
        *,
        by_instance: bool = False,
        name: str | None = None,
        revision: str | None = None,
    ) -> None:
        # an instance store must live where its finalizer drops it: pin the cache now
        self._cache = cache if cache is not None or not by_instance else process_cache()
        meta = getattr(model, "mteb_model_meta", None)
        self.name = name or getattr(meta, "name", None) or type(model).__name__
        self.revision = revision or getattr(meta, "revision", None) or NO_REVISION
        self.instance: int | None = None
        if by_instance:
            try:
                self.instance = self.cache.watch(model)
            except TypeError:  # no weak reference to the model: the stores serve this wrapper only
                self.instance = self.cache.watch(self)
        # what mteb's wrapper reads besides its own encode and close, without the folder its
        # __init__ would make for a NumpyCache that is never used here
        init_cached_wrapper_in_memory(self, model)
        self.stats = EncodeStats()

    @property
    def cache(self) -> EmbeddingCache:
        """The cache this wrapper reads and fills."""
        return self._cache if self._cache is not None else process_cache()

    def __getattr__(self, name: str) -> Any:  # e.g. get_prompt_name, model_prompts of the wrapped model
        if name.startswith("__") or name == "_model":
            raise AttributeError(name)
        return getattr(self._model, name)

    @property
    def model(self) -> Any:
        """The wrapped encoder."""
        return self._model

    def key(
        self, task_metadata: TaskMetadata, prompt_type: PromptType | None, kwargs: dict[str, Any]
    ) -> StoreKey:
        """The :class:`StoreKey` of an encode call: model, revision, instance and the encoding
        context, a folder-safe string of what else changes the embedding: prompt type, prompt name,
        the task for an instruction-following model, every encode setting but
        :data:`SETTINGS_IGNORED`, and the weights' version of a store kept by object."""
        parts = [prompt_type.value if prompt_type is not None else "none"]
        get_prompt_name = getattr(self._model, "get_prompt_name", None)
        if callable(get_prompt_name):
            prompt = get_prompt_name(task_metadata, prompt_type)
            if prompt:
                parts.append(f"prompt-{prompt}")
        meta = getattr(self._model, "mteb_model_meta", None)
        if meta is not None and meta.use_instructions:  # instructions depend on the task
            parts.append(f"task-{task_metadata.name}")
        parts += [f"{key}-{kwargs[key]}" for key in sorted(kwargs) if key not in SETTINGS_IGNORED]
        if self.instance is not None:
            parts.append(f"weights-{weights_version(self._model) & 0xFFFFFFFF:08x}")
        context = _UNSAFE.sub("_", "__".join(parts))
        if len(context) > MAX_CONTEXT:  # a folder name of bounded length, still unique
            digest = hashlib.blake2b(context.encode("utf-8"), digest_size=8).hexdigest()
            context = f"{context[: MAX_CONTEXT - 18]}__{digest}"
        return StoreKey(self.name, self.revision, context, self.instance)

    def encode(
        self,
        inputs: DataLoader[BatchedInput],
        *,
        task_metadata: TaskMetadata,
        hf_split: str,
        hf_subset: str,
        prompt_type: PromptType | None = None,
        **kwargs: Any,
    ) -> NDArray[Any]:
        """mteb's ``encode``: stored rows from the cache, the others from the wrapped model."""
        call: dict[str, Any] = {"task_metadata": task_metadata, "hf_split": hf_split, "hf_subset": hf_subset}
        call |= {"prompt_type": prompt_type, **kwargs}
        texts = _loader_texts(inputs)
        if texts is None:
            self.stats.uncached_calls += 1
            with self.stats.timed():
                return as_numpy(self._model.encode(inputs, **call))
        batch_size = getattr(inputs, "batch_size", None) or 32
        collate = getattr(inputs, "collate_fn", None)

        def encode(missing: list[str]) -> Any:
            from torch.utils.data import DataLoader

            loader = DataLoader(
                Dataset.from_dict({"text": missing}), batch_size=batch_size, collate_fn=collate, shuffle=False
            )
            return self._model.encode(loader, **call)

        where = f"{task_metadata.name} ({hf_subset}), model {self.name}"
        return self.cache.embed(
            self.key(task_metadata, prompt_type, kwargs), texts, encode, stats=self.stats, where=where
        )

    def close(self) -> None:
        """Nothing to release: the stores belong to the cache."""


def unwrapped(model: Any) -> Any:
    """The model a :class:`CachedEncoder` wraps, else ``model``: the identity a task's per-model
    state (embeddings, EvalRank's rank counts) follows across the subsets of one evaluation."""
    return model.model if isinstance(model, CachedEncoder) else model


def torch_device(model: Any) -> str:
    """The torch device ``model`` (or the ``model`` it wraps) computes on; ``"cpu"`` for a model
    that is not a torch model."""
    for candidate in (model, getattr(model, "model", None)):
        device = getattr(candidate, "device", None)
        if type(device).__module__ == "torch" and type(device).__name__ == "device":
            return str(device)
    return "cpu"


def reusing(model: Any, settings: Settings) -> Any:
    """The model a task of the run encodes with: ``model`` in a :class:`CachedEncoder` over the
    process cache (:func:`process_cache` of ``settings``), or ``model`` itself if not
    ``settings.reuse_embeddings``, if it is not an mteb encoder (a cross-encoder, a search model) or if
    it is a :class:`CachedEncoder` already (the study's). On disk when the model has a name and a revision."""
    reuse = settings.reuse_embeddings
    if isinstance(model, CachedEncoder) or not isinstance(model, EncoderProtocol) or not reuse:
        return model
    cache = process_cache(settings)
    meta = getattr(model, "mteb_model_meta", None)
    named = bool(getattr(meta, "name", None)) and getattr(meta, "revision", None) not in (None, NO_REVISION)
    return CachedEncoder(model, cache, by_instance=cache.root is None or not named)


class EncodeOnce:
    """Mixin of a task class (before its mteb base class): the task evaluates :func:`reusing` (model).

    ``evaluate`` is where mteb enters the task: the :class:`~mteb_evalrank.settings.Settings` are
    read there, once per evaluation, and handed to :meth:`use_settings`.
    """

    def evaluate(self, model: Any, *args: Any, **kwargs: Any) -> Any:
        settings = Settings.from_environment()
        self.use_settings(settings)
        # a mixin: mypy sees only ``object`` above it; at run time the next class in the MRO is mteb's task
        return super().evaluate(reusing(model, settings), *args, **kwargs)  # type: ignore[misc]

    def use_settings(self, settings: Settings) -> None:
        """Take what the task needs of ``settings`` before it evaluates (here: nothing)."""


def encode_once(task_class: type) -> Any:
    """An instance of mteb's ``task_class`` (subclassed with :class:`EncodeOnce` first) that encodes
    through :func:`reusing`; the registered class stays mteb's own."""
    variant = type(task_class.__name__, (EncodeOnce, task_class), {"__doc__": task_class.__doc__})
    return variant()


class TaskEmbeddings:
    """A task's embeddings, each distinct text encoded once per model: through the run's
    :class:`CachedEncoder` when the task was given one, else a task-local one (dropped with the data
    or when another model comes)."""

    def __init__(self) -> None:
        self._model: object | None = None
        self._encoder: CachedEncoder | None = None
        self._first: Sequence[str] | None = None  # the encode_first list already encoded
        self._cache = EmbeddingCache()

    def clear(self) -> None:
        self._model = self._encoder = self._first = None
        self._cache.clear()

    def embed(
        self,
        model: Any,
        texts: Sequence[str],
        *,
        encode_first: Sequence[str] = (),
        task_metadata: TaskMetadata,
        encode_kwargs: dict[str, Any],
        hf_split: str,
        hf_subset: str,
        timer: TimingStack,
        num_proc: int | None = None,
    ) -> NDArray[np.float64]:
        """Embeddings of ``texts`` (one row each, in order), validated, as float64; ``encode_first`` (e.g.
        every text of the task) is encoded first, once per list object and model.

        Raises:
            NonFiniteEmbeddingsError: if the encoder returns NaN or infinity (names task and model).
            ValueError: if it returns the wrong number of rows."""
        if self._model is not unwrapped(model):
            self.clear()
            self._model = unwrapped(model)
        if isinstance(model, CachedEncoder):  # the run's (a new wrapper per subset, the same rows)
            self._encoder = model
        elif self._encoder is None:
            self._encoder = CachedEncoder(model, self._cache, by_instance=True)
        encoder = self._encoder
        where = f"{task_metadata.name} ({hf_subset}), model {model_name(model)}"

        def encode(batch: Sequence[str]) -> NDArray[Any]:
            with timer(
                "Encoding",
                split=hf_split,
                subset=hf_subset,
                log_message=f"{task_metadata.name}: embeddings of {len(batch)} texts...",
            ):
                loader = create_dataloader(
                    Dataset.from_dict({"text": list(batch)}),
                    task_metadata=task_metadata,
                    num_proc=num_proc,
                    **encode_kwargs,
                )
                return encoder.encode(
                    loader,
                    task_metadata=task_metadata,
                    hf_split=hf_split,
                    hf_subset=hf_subset,
                    prompt_type=None,
                    **encode_kwargs,
                )

        if encode_first and encode_first is not self._first:
            encode(encode_first)
            self._first = encode_first
        return np.asarray(check_embeddings(encode(texts), where=where), dtype=np.float64)


class EncodeTexts(EncodeOnce):
    """:class:`EncodeOnce` for a task that encodes its distinct texts itself: ``self._embeddings``,
    its :class:`TaskEmbeddings`, dropped with the task's data (mteb calls ``unload_data`` after
    the last subset)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._embeddings = TaskEmbeddings()

    def unload_data(self) -> None:
        self._embeddings.clear()
        super().unload_data()  # type: ignore[misc]

    def _embed(
        self, model: Any, texts: Sequence[str], *, encode_kwargs: EncodeKwargs, hf_split: str, hf_subset: str,
        timer: TimingStack, num_proc: int | None = None, encode_first: Sequence[str] = (), **_: Any,
    ) -> NDArray[np.float64]:  # fmt: skip
        """:meth:`TaskEmbeddings.embed` of ``texts`` for this task, given mteb's ``_evaluate_subset``
        keywords (the others, e.g. ``prediction_folder``, are not needed)."""
        return self._embeddings.embed(
            model, texts, encode_first=encode_first, task_metadata=self.metadata,  # type: ignore[attr-defined]
            encode_kwargs=dict(encode_kwargs), hf_split=hf_split, hf_subset=hf_subset, timer=timer,
            num_proc=num_proc,
        )  # fmt: skip
