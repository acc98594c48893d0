"""The plugin's settings: every ``MTEB_EVALRANK_*`` variable (and the offline switches) read in one
place, once, where control enters the plugin (the command line, ``register()``, a call from mteb
into a task or a model loader), and passed as parameters below. A leaf module: standard library
only. docs/usage.md ("Switches") says what each one does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PREFIX = "MTEB_EVALRANK_"
HOME_ENV = PREFIX + "HOME"
SOURCE_ENV = PREFIX + "SOURCE"
RAW_URL_ENV = PREFIX + "RAW_URL"
VECTORS_URL_ENV = PREFIX + "VECTORS_URL"
TIMEOUT_ENV = PREFIX + "FETCH_TIMEOUT"
VOCABULARY_ENV = PREFIX + "VOCABULARY"
REUSE_ENV = PREFIX + "REUSE_EMBEDDINGS"
CACHE_DIR_ENV = PREFIX + "EMBEDDING_CACHE"
CACHE_MIB_ENV = PREFIX + "CACHE_MIB"
TASKS_FROM_FILES_ENV = PREFIX + "TASKS_FROM_FILES"
OFFLINE_ENVS = (PREFIX + "OFFLINE", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
"""The plugin's switch first: any of them true (``1``, ``true``, ``yes``, ``on``) means offline."""

DEFAULT_TIMEOUT = 30.0
DEFAULT_CACHE_MIB = 4096


class SettingsError(ValueError):
    """A variable holds a value of the wrong kind; the message names it and what it takes."""

    user_facing = True  # the command line shows the message alone (mteb_evalrank._user_errors)


def is_true(value: str | None) -> bool:
    """``1``, ``true``, ``yes`` or ``on`` (any case, surrounding blanks ignored)."""
    return (value or "").strip().upper() in {"1", "TRUE", "YES", "ON"}


@dataclass(frozen=True)
class Settings:
    """What the environment asks of the plugin; :meth:`from_environment` builds it."""

    home: Path
    """``$MTEB_EVALRANK_HOME``, else ``$XDG_CACHE_HOME/mteb-evalrank``, else ``~/.cache/mteb-evalrank``:
    the encoders' folders (``encoders/``) and the fetched raw data (``raw/``). Not created here."""
    source: Path | None = None
    """The local raw data folder (``evalrank/``, ``wmt17-da/``, ...), ``None``: fetch it."""
    raw_url: str | None = None
    """Replaces the base of every raw-file URL (a mirror or an air-gapped copy), no trailing ``/``."""
    vectors_url: str | None = None
    """Replaces the base of the paper word-vector sets' URLs, no trailing ``/``."""
    fetch_timeout: float = DEFAULT_TIMEOUT
    """Seconds to wait for a connection or for the next bytes."""
    offline: str | None = None
    """The first variable of :data:`OFFLINE_ENVS` that is true (nothing is downloaded), else ``None``."""
    vocabulary: Path | None = None
    """The word-level tasks' ``vocabulary`` convention's word list (one word a line), or ``None``."""
    reuse_embeddings: bool = True
    """A run reuses a text's embedding across tasks (``MTEB_EVALRANK_REUSE_EMBEDDINGS=0``: no)."""
    embedding_cache: Path | None = None
    """The folder of the on-disk embedding cache; ``None``: the cache lives in memory only."""
    cache_mib: int = DEFAULT_CACHE_MIB
    """The in-memory embedding cache's bound, in MiB."""
    tasks_from_files: str = ""
    """``NAME=FOLDER`` entries separated by ``;``: EvalRank tasks built from the user's files."""

    @property
    def encoders(self) -> Path:
        """``<home>/encoders``: one marked folder per model the plugin derives (docs/zoo.md)."""
        return self.home / "encoders"

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings of ``environ`` (default ``os.environ``); an empty variable counts as unset.

        Raises:
            SettingsError: ``MTEB_EVALRANK_FETCH_TIMEOUT`` or ``MTEB_EVALRANK_CACHE_MIB`` is not a
                number (naming the variable and its value).
        """
        env = os.environ if environ is None else environ

        def text(name: str) -> str | None:
            return (env.get(name) or "").strip() or None

        def path(name: str) -> Path | None:
            value = text(name)
            return Path(value).expanduser() if value else None

        def number(name: str, kind: type[float] | type[int], default: float) -> float:
            value = text(name)
            try:
                return kind(value) if value else default
            except ValueError:
                raise SettingsError(f"{name}={value!r} is not a number ({kind.__name__}).") from None

        cache = text("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return cls(
            home=path(HOME_ENV) or Path(cache).expanduser() / "mteb-evalrank",
            source=path(SOURCE_ENV),
            raw_url=(text(RAW_URL_ENV) or "").rstrip("/") or None,
            vectors_url=(text(VECTORS_URL_ENV) or "").rstrip("/") or None,
            fetch_timeout=float(number(TIMEOUT_ENV, float, DEFAULT_TIMEOUT)),
            offline=next((name for name in OFFLINE_ENVS if is_true(env.get(name))), None),
            vocabulary=path(VOCABULARY_ENV),
            reuse_embeddings=text(REUSE_ENV) != "0",
            embedding_cache=path(CACHE_DIR_ENV),
            cache_mib=int(number(CACHE_MIB_ENV, int, DEFAULT_CACHE_MIB)),
            tasks_from_files=text(TASKS_FROM_FILES_ENV) or "",
        )
