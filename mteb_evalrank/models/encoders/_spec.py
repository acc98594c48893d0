"""``EncoderFamily``: what the zoo needs to know about one PyPI-packaged encoder."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mteb_evalrank.models.base import TextEmbedder


@dataclass(frozen=True)
class WeightFile:
    """A file of an installed package whose SHA-256 was recorded (docs/zoo.md, tests)."""

    package: str
    path: str
    """Inside the installed distribution (``importlib.metadata`` file path)."""
    sha256: str


@dataclass(frozen=True)
class EncoderFamily:
    """One encoder family of the zoo: its base model and the variants built on it.

    ``meta`` holds the base ``ModelMeta`` fields besides name, dimension, loader and the
    fields every zoo meta shares; the variants copy them (``adapted_from`` = the base).
    """

    family: str
    """``model_family`` of every model built on this base."""
    name: str
    """The base model's mteb name (``evalrank/...``)."""
    dim: int
    what: str
    load: Callable[[], TextEmbedder]
    """The base encoder, one object per process (``functools.cache``)."""
    meta: dict[str, Any]
    weights: tuple[WeightFile, ...] = ()
    cut: tuple[int, ...] = ()
    """Truncation variants ``-dimK``."""
    kinds: tuple[str, ...] = ("abtt", "whiten")
    """Post-processing variants (``postprocess.KINDS``)."""
    derived_from: str | None = None
    """The family whose weights this family's come from (a distillation, a fine-tune): its
    training unit (``zoo.family_training``)."""
